"""`python -m fleetgraph COMMAND ...` runs the command line of `fleetgraph.cli`."""

import sys

from .cli import main

sys.exit(main())
