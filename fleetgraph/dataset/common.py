"""Where datasets live on disk, the one-time notice when a synthetic stand-in is used instead, and the
in-memory archives those stand-ins are written as (so the real files' parser reads them too)."""

from __future__ import annotations

import io
import os
import sys
import tarfile
import zipfile
from collections.abc import Callable, Sequence
from typing import BinaryIO

_warned: set[str] = set()


def search_paths(name: str, filename: str) -> list[str]:
    """$FLEETGRAPH_DATA_HOME/<name>/<file>, then Paddle's own cache (~/.cache/paddle/dataset/<name>/<file>)."""
    homes = [os.environ.get("FLEETGRAPH_DATA_HOME", ""), os.path.expanduser("~/.cache/paddle/dataset")]
    return [os.path.join(h, name, filename) for h in homes if h]


def find(name: str, filename: str) -> str | None:
    return next((p for p in search_paths(name, filename) if os.path.exists(p)), None)


def find_any(name: str, filenames: Sequence[str]) -> str | None:
    """The first of filenames found (Paddle's download name, the URL's last component, then the plain one)."""
    return next((path for path in (find(name, f) for f in filenames) if path), None)


def warn_synthetic(name: str, what: str) -> None:
    if name in _warned:
        return
    _warned.add(name)
    where = " or ".join(search_paths(name, "..."))
    print(
        f"fleetgraph.dataset.{name}: real data not found ({where}); using a SYNTHETIC stand-in: {what}", file=sys.stderr
    )


def open_archive(name: str, filenames: Sequence[str], synthesize: Callable[[], bytes], what: str) -> BinaryIO:
    """Paddle's file opened for reading when found; else the synthetic archive of the same format
    (synthesize should cache its bytes), said once on stderr."""
    path = find_any(name, filenames)
    if path:
        return open(path, "rb")
    warn_synthetic(name, what)
    return io.BytesIO(synthesize())


def tar_bytes(members: dict[str, bytes]) -> bytes:
    """An uncompressed tar of members in the given order (Paddle opens its archives with mode 'r',
    which reads plain and gzipped tars alike)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as tf:
        for member, data in members.items():
            info = tarfile.TarInfo(member)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def zip_bytes(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as package:
        for member, data in members.items():
            package.writestr(member, data)
    return buffer.getvalue()
