"""`python -m fleetgraph.distributed.launch_ps`: the launcher in parameter-server mode, with Paddle's launch_ps
defaults (2 servers, 2 workers, logs in `logs/`)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from .launch import launch as _launch


def launch(argv: Sequence[str] | None = None) -> int:
    """Run a parameter-server job from command-line arguments; the exit status."""
    return _launch(argv, ps_launcher=True)


def main() -> None:
    sys.exit(launch())


if __name__ == "__main__":
    main()
