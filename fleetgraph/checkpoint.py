"""Checkpoint directories that survive a kill at any moment: .npz data and a manifest written last.

    DIR/manifest.json   {"format": "fleetgraph.checkpoint", "version": 1, "meta": {...},
                         "files": {"persistables.npz": {"path": "persistables.3f2a....npz",
                                                        "bytes": 1234, "sha256": "..."}}}
    DIR/persistables.3f2a....npz

Steps of `save`:
  1. write the arrays under a fresh name (a temporary name, fsync, rename, fsync the directory): the
     files of the checkpoint before stay as they are;
  2. write the manifest the same way: its rename is the moment the new checkpoint replaces the old;
  3. remove the data files no manifest names, and temporary files a killed save left.
A kill before step 2's rename leaves the previous manifest and the files it names; after it, the new
ones. `load` checks each file's size and SHA-256 against the manifest before it reads an array, and
reads with allow_pickle=False: a truncated or altered file is one error naming it, and nothing loads.
A directory without a manifest (written by an earlier fleetgraph, or by hand) is read as it is.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import zipfile
import zlib

import numpy as np

from .ir import FleetgraphError

MANIFEST = "manifest.json"
FORMAT, VERSION = "fleetgraph.checkpoint", 1
_TMP = ".fleetgraph-tmp-"


class CheckpointError(FleetgraphError, ValueError):
    """A checkpoint that cannot be loaded as it is: missing, cut short, altered."""


def save(dirname: str, arrays: dict[str, np.ndarray], filename: str = "persistables.npz", meta=None) -> str:
    """Write `arrays` as the checkpoint's `filename` (the other files the manifest names stay);
    returns the data file's path."""
    os.makedirs(dirname, exist_ok=True)
    manifest = _manifest_or_empty(dirname)
    stem, _, ext = filename.rpartition(".")
    physical = f"{stem or filename}.{secrets.token_hex(6)}.{ext or 'npz'}"
    path = os.path.join(dirname, physical)
    _write_atomically(path, lambda f: np.savez(f, **{k: np.asarray(v) for k, v in arrays.items()}))  # step 1
    manifest["files"][filename] = {"path": physical, "bytes": os.path.getsize(path), "sha256": _sha256(path)}
    manifest["meta"] = dict(meta or {})
    text = json.dumps(manifest, indent=1, sort_keys=True) + "\n"
    _write_atomically(os.path.join(dirname, MANIFEST), lambda f: f.write(text.encode()))  # step 2
    _remove_unnamed(dirname, manifest)  # step 3
    return path


def load(dirname: str, filename: str = "persistables.npz") -> dict[str, np.ndarray]:
    """The arrays of the checkpoint's `filename`, each file checked against the manifest first."""
    manifest = read_manifest(dirname)
    if manifest is None:  # no manifest: a plain .npz
        return _read_npz(os.path.join(dirname, filename))
    entry = manifest["files"].get(filename)
    if entry is None:
        raise CheckpointError(
            f"checkpoint {dirname}: no {filename!r} in its manifest; it holds {sorted(manifest['files'])}"
        )
    path = os.path.join(dirname, entry["path"])
    if not os.path.exists(path):
        raise CheckpointError(f"checkpoint {dirname}: {entry['path']} is missing; the manifest names it")
    size = os.path.getsize(path)
    if size != entry["bytes"]:
        raise CheckpointError(f"checkpoint {path}: {size} bytes; the manifest says {entry['bytes']} (cut short?)")
    if _sha256(path) != entry["sha256"]:
        raise CheckpointError(f"checkpoint {path}: its SHA-256 differs from the manifest's (altered after saving)")
    return _read_npz(path)


def read_manifest(dirname: str) -> dict | None:
    """The manifest of `dirname`, None when it has none."""
    path = os.path.join(dirname, MANIFEST)
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            manifest = json.load(f)
    except (OSError, ValueError) as e:
        raise CheckpointError(f"checkpoint {path}: not a readable manifest: {e}") from None
    if (
        not isinstance(manifest, dict)
        or manifest.get("format") != FORMAT
        or not isinstance(manifest.get("files"), dict)
    ):
        raise CheckpointError(f"checkpoint {path}: expected a {FORMAT} manifest, got another file")
    if manifest.get("version") != VERSION:
        raise CheckpointError(f"checkpoint {path}: format version {manifest.get('version')}; expected {VERSION}")
    return manifest


def meta(dirname: str) -> dict:
    """What the last save recorded beside the arrays (for example the step a job had reached)."""
    manifest = read_manifest(dirname)
    return dict(manifest.get("meta", {})) if manifest else {}


def _manifest_or_empty(dirname: str) -> dict:
    try:
        manifest = read_manifest(dirname)
    except CheckpointError:  # a damaged manifest is replaced, not kept
        manifest = None
    return manifest or {"format": FORMAT, "version": VERSION, "files": {}, "meta": {}}


def _write_atomically(path: str, write) -> None:
    directory, name = os.path.split(path)
    tmp = os.path.join(directory, f"{_TMP}{secrets.token_hex(4)}-{name}")
    try:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
    _fsync_dir(directory)


def _fsync_dir(directory: str) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _remove_unnamed(dirname: str, manifest: dict) -> None:
    """Data files of earlier saves (names with a token) and temporary files of killed ones."""
    named = {entry["path"] for entry in manifest["files"].values()}
    logical = set(manifest["files"])
    for name in os.listdir(dirname):
        stale_data = name not in named and any(_is_version_of(name, f) for f in logical)
        if name.startswith(_TMP) or stale_data:
            try:
                os.remove(os.path.join(dirname, name))
            except FileNotFoundError:
                pass


def _is_version_of(name: str, filename: str) -> bool:
    stem, _, ext = filename.rpartition(".")
    stem, ext = stem or filename, ext or "npz"
    token = name[len(stem) + 1 : -len(ext) - 1]
    return name.startswith(stem + ".") and name.endswith("." + ext) and len(token) == 12 and _hex(token)


def _hex(text: str) -> bool:
    return all(c in "0123456789abcdef" for c in text)


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _read_npz(path: str) -> dict[str, np.ndarray]:
    if not os.path.exists(path):
        raise CheckpointError(f"load: {path} does not exist")
    try:
        with np.load(path, allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error) as e:
        raise CheckpointError(f"load {path}: not a complete .npz file ({type(e).__name__}: {e})") from None
