"""Where datasets live on disk, and the one-time notice when a synthetic stand-in is used instead."""

from __future__ import annotations

import os
import sys

_warned: set[str] = set()


def search_paths(name: str, filename: str) -> list[str]:
    """$FLEETGRAPH_DATA_HOME/<name>/<file>, then Paddle's own cache (~/.cache/paddle/dataset/<name>/<file>)."""
    homes = [os.environ.get("FLEETGRAPH_DATA_HOME", ""), os.path.expanduser("~/.cache/paddle/dataset")]
    return [os.path.join(h, name, filename) for h in homes if h]


def find(name: str, filename: str) -> str | None:
    return next((p for p in search_paths(name, filename) if os.path.exists(p)), None)


def warn_synthetic(name: str, what: str) -> None:
    if name in _warned:
        return
    _warned.add(name)
    where = " or ".join(search_paths(name, "..."))
    print(
        f"fleetgraph.dataset.{name}: real data not found ({where}); using a SYNTHETIC stand-in: {what}", file=sys.stderr
    )
