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

import numpy as np

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


def warn_synthetic(name: str, what: str, where: str = "") -> None:
    """Says once per dataset that the real files were not found (where: the places looked in, when
    not the usual <home>/<name>/...) and what stands in for them."""
    if name in _warned:
        return
    _warned.add(name)
    where = where or " or ".join(search_paths(name, "..."))
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


def open_source(source) -> BinaryIO:
    """An archive given as Paddle's readers take it, a path, or as a function that opens it."""
    return source() if callable(source) else open(source, "rb")


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


def translation_pairs(seed: int, count: int, sources: int, targets: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """count synthetic (source ids, target ids) sentence pairs for the translation corpora: source
    words Zipf-drawn from range(sources), each translated word for word by a fixed map that keeps
    frequency ranks within a few places (so the target dictionary is in frequency order too), or by
    a second map when the word before it is odd (so the targets beyond the first `sources` are used
    and context matters). Sentence k < sources holds source word k after an even and after an odd
    word, so every word of both vocabularies occurs."""
    rng = np.random.default_rng(seed)
    primary = np.argsort(np.arange(sources) + np.random.default_rng(17).uniform(0, 8, size=sources))
    second = np.where(np.arange(sources) < targets - sources, sources + np.arange(sources), primary)
    zipf = 1.0 / np.arange(1, sources + 1)
    lengths = rng.integers(4, 30, size=count)
    words = np.split(rng.choice(sources, size=lengths.sum(), p=zipf / zipf.sum()), np.cumsum(lengths)[:-1])
    pairs = []
    for k, src in enumerate(words):
        if k < sources:
            at = int(rng.integers(0, len(src)))
            src = np.concatenate([src[:at], [2, k, 1, k], src[at:]])
        after_odd = np.concatenate([[0], src[:-1]]) % 2 == 1
        pairs.append((src, np.where(after_odd, second[src], primary[src])))
    return pairs
