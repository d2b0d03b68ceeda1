"""python -m cli: ./backendcheck."""

import sys

from cli.main import main

sys.exit(main())
