"""The ctest labels that decide what the command line runs, named once: the
command line selects by them, the check of run's selection
(reports/run_selection.py) reads them, CMakeLists.txt spells them in its
tests' LABELS."""

# The project's tests of itself: `run` leaves them out, `test` runs them; no
# claim's evidence may carry it.
SELFTEST = "selftest"
# The selftests whose outcome cannot depend on the torch install under test:
# `test` with several installs runs them on the first one only.
TORCH_FREE = "torch-free"
# The tests that start services of their own and take minutes (the Slurm
# recipe's one-node cluster): `test` leaves them out; ctest -L slurm runs them.
OWN_RUN = "slurm"
