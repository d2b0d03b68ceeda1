"""./backendcheck's command line: its options (options.py), exit statuses
(exits.py), installs (installs.py), build trees, lock and evidence
directories (builds.py) and commands (commands.py); main.py runs them."""
