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
ones. `load` checks each file's size and SHA-256 against the manifest before it reads an array: a
truncated or altered file is one error naming it, and nothing loads. A directory without a manifest
(written by an earlier fleetgraph, or by hand) is read as it is.

What `load` refuses, each as one CheckpointError naming the file (nothing is read past the fault):
  - a file that is not a regular file inside the directory: a FIFO or a device (opened non-blocking,
    so a FIFO cannot hang the load), a symlink or a manifest path leading out, an absolute path;
  - a manifest that is not JSON, or whose entries lack `path`, `bytes` or `sha256` or have the wrong
    types;
  - a member of the .npz that is not a .npy array, a .npy header numpy cannot parse, an object dtype
    (nothing is unpickled), and a header whose shape x itemsize differs from the bytes the member
    holds: sizes are compared before anything is allocated, so a header claiming 2**40 elements is
    refused, not attempted.
`check_value` is the one check of a loaded array against the variable it is for (dtype and shape).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import secrets
import stat
import struct
import tokenize
import zipfile
import zlib
from typing import BinaryIO

import numpy as np

from ..ir import FleetgraphError

MANIFEST = "manifest.json"
PARAMS_FILE = "persistables.npz"  # the file of a directory's persistables, unless the caller names another
FORMAT, VERSION = "fleetgraph.checkpoint", 1
_TMP = ".fleetgraph-tmp-"


class CheckpointError(FleetgraphError, ValueError):
    """A checkpoint that cannot be loaded as it is: missing, cut short, altered, malformed, or not
    what the variables it is loaded into expect."""


def save(dirname: str, arrays: dict[str, np.ndarray], filename: str = "persistables.npz", meta=None) -> str:
    """Write `arrays` as the checkpoint's `filename` (the other files the manifest names stay);
    returns the data file's path."""
    os.makedirs(dirname, exist_ok=True)
    manifest = _manifest_or_empty(dirname)
    stem, _, ext = filename.rpartition(".")
    physical = f"{stem or filename}.{secrets.token_hex(6)}.{ext or 'npz'}"
    path = os.path.join(dirname, physical)
    _write_atomically(path, lambda f: np.savez(f, **{k: np.asarray(v) for k, v in arrays.items()}))  # step 1
    with open(path, "rb") as f:
        manifest["files"][filename] = {"path": physical, "bytes": os.path.getsize(path), "sha256": _sha256(f)}
    manifest["meta"] = dict(meta or {})
    text = json.dumps(manifest, indent=1, sort_keys=True) + "\n"
    _write_atomically(os.path.join(dirname, MANIFEST), lambda f: f.write(text.encode()))  # step 2
    _remove_unnamed(dirname, manifest)  # step 3
    return path


def load(dirname: str, filename: str = "persistables.npz") -> dict[str, np.ndarray]:
    """The arrays of the checkpoint's `filename`, each file checked against the manifest first."""
    manifest = read_manifest(dirname)
    if manifest is None:  # no manifest: a plain .npz
        with _open_inside(dirname, filename) as f:
            return _read_npz(f, os.path.join(dirname, filename))
    entry = manifest["files"].get(filename)
    if entry is None:
        raise CheckpointError(
            f"checkpoint {dirname}: no {filename!r} in its manifest; it holds {sorted(manifest['files'])}"
        )
    path = os.path.join(dirname, entry["path"])
    with _open_inside(dirname, entry["path"]) as f:  # one descriptor for the checks and the read
        size = os.fstat(f.fileno()).st_size
        if size != entry["bytes"]:
            raise CheckpointError(f"checkpoint {path}: {size} bytes; the manifest says {entry['bytes']} (cut short?)")
        if _sha256(f) != entry["sha256"]:
            raise CheckpointError(f"checkpoint {path}: its SHA-256 differs from the manifest's (altered after saving)")
        f.seek(0)
        return _read_npz(f, path)


def read_manifest(dirname: str) -> dict | None:
    """The manifest of `dirname`, None when it has none."""
    path = os.path.join(dirname, MANIFEST)
    if not os.path.lexists(path):
        return None
    with _open_inside(dirname, MANIFEST) as f:
        try:
            manifest = json.loads(f.read())
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
    if not isinstance(manifest.get("meta", {}), dict):
        raise CheckpointError(f"checkpoint {path}: 'meta' is a {type(manifest['meta']).__name__}; expected an object")
    for name, entry in manifest["files"].items():
        fault = _entry_fault(entry)
        if fault:
            raise CheckpointError(f"checkpoint {path}: entry {name!r} {fault}")
    return manifest


def _entry_fault(entry) -> str | None:
    """What is wrong with one manifest entry, None when nothing is."""
    if not isinstance(entry, dict):
        return f"is a {type(entry).__name__}; expected an object with path, bytes and sha256"
    missing = [key for key in ("path", "bytes", "sha256") if key not in entry]
    if missing:
        return f"lacks {', '.join(missing)}; expected path, bytes and sha256"
    path, size, digest = entry["path"], entry["bytes"], entry["sha256"]
    if not isinstance(path, str) or not path:
        return f"has path {path!r}; expected a file name"
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        return f"has bytes {size!r}; expected a size >= 0"
    if not isinstance(digest, str) or len(digest) != 64 or not _hex(digest):
        return f"has sha256 {digest!r}; expected 64 lowercase hex digits"
    return None


def check_value(where: str, label: str, value: np.ndarray, shape, dtype) -> None:
    """Raise CheckpointError unless `value` has `dtype` and `shape` (-1: any size), naming `label`."""
    expected = np.dtype(dtype)
    if value.dtype != expected:
        raise CheckpointError(f"{where}: {label} expected dtype {expected}, got {value.dtype}")
    if len(value.shape) != len(shape) or any(d >= 0 and d != s for d, s in zip(shape, value.shape)):
        raise CheckpointError(f"{where}: {label} expected shape {list(shape)}, got {list(value.shape)}")


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


def _sha256(f: BinaryIO) -> str:
    digest = hashlib.sha256()
    for chunk in iter(lambda: f.read(1 << 20), b""):
        digest.update(chunk)
    return digest.hexdigest()


def _open_inside(dirname: str, name: str) -> BinaryIO:
    """`name` opened for reading, only as a regular file inside `dirname`. Opened non-blocking and
    checked with fstat before a byte is read: a FIFO is refused instead of waiting for a writer."""
    path = os.path.join(dirname, name)
    if os.path.isabs(name):
        raise CheckpointError(f"checkpoint {dirname}: {name!r} is an absolute path; expected a name inside it")
    root, real = os.path.realpath(dirname), os.path.realpath(path)
    if real == root or os.path.commonpath([root, real]) != root:
        raise CheckpointError(f"checkpoint {path}: leads out of {root}; expected a file inside it, got {real}")
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(real, flags)
    except FileNotFoundError:
        raise CheckpointError(f"checkpoint {path}: does not exist") from None
    except OSError as e:
        raise CheckpointError(f"checkpoint {path}: cannot be opened ({e.strerror})") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise CheckpointError(f"checkpoint {path}: expected a regular file, got a {_kind_of(mode)}")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def _kind_of(mode: int) -> str:
    kinds = [(stat.S_ISFIFO, "FIFO"), (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device")]
    kinds += [(stat.S_ISDIR, "directory"), (stat.S_ISSOCK, "socket")]
    return next((kind for test, kind in kinds if test(mode)), "special file")


# what zipfile, zlib and numpy's header parser (ast and tokenize inside it) raise on malformed bytes;
# CheckpointError, itself a ValueError, is re-raised before these are caught
_MALFORMED = (OSError, EOFError, ValueError, zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError)
_MALFORMED += (struct.error, OverflowError, SyntaxError, tokenize.TokenError, TypeError, LookupError)


def _read_npz(f: BinaryIO, path: str) -> dict[str, np.ndarray]:
    """Every array of the .npz open as `f`: each member's header checked against its size first."""
    try:
        archive = zipfile.ZipFile(f)
    except _MALFORMED as e:
        raise CheckpointError(f"checkpoint {path}: not a .npz (zip) file ({type(e).__name__}: {e})") from None
    with archive:
        return dict(_read_member(archive, info, path) for info in archive.infolist())


def _read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: str) -> tuple[str, np.ndarray]:
    where = f"checkpoint {path}: member {info.filename!r}"
    if not info.filename.endswith(".npy"):
        raise CheckpointError(f"{where} is not a .npy array; expected only .npy members (numpy.savez)")
    try:
        with archive.open(info) as member:
            shape, fortran_order, dtype = _npy_header(member, where)
            count, have = math.prod(shape), info.file_size - member.tell()
            if count * dtype.itemsize != have:  # before a byte of the data is allocated
                raise CheckpointError(
                    f"{where}: its header claims shape {list(shape)} {dtype}, {count * dtype.itemsize} bytes; "
                    f"expected the {have} bytes the member holds"
                )
            data = _read_exactly(member, have, where)
    except CheckpointError:
        raise
    except _MALFORMED as e:
        raise CheckpointError(f"{where}: not a valid .npy array ({type(e).__name__}: {e})") from None
    array = np.frombuffer(data, dtype=dtype, count=count) if dtype.itemsize else np.empty(count, dtype)
    array = array.reshape(shape[::-1]).T if fortran_order else array.reshape(shape)
    return info.filename[: -len(".npy")], array


def _npy_header(member: BinaryIO, where: str) -> tuple[tuple[int, ...], bool, np.dtype]:
    readers = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}
    version = np.lib.format.read_magic(member)
    if version not in readers:
        raise CheckpointError(f"{where}: .npy format version {version}; expected 1.0 or 2.0 (numpy.savez)")
    shape, fortran_order, dtype = readers[version](member)
    if dtype.hasobject:
        raise CheckpointError(f"{where}: dtype {dtype} holds Python objects; expected numbers (nothing is unpickled)")
    if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise CheckpointError(f"{where}: shape {list(shape)}; expected integer sizes >= 0")
    return shape, fortran_order, dtype


def _read_exactly(member: BinaryIO, size: int, where: str) -> bytearray:
    """`size` bytes, grown as they arrive: a lying zip directory cannot make this allocate more than
    the member really holds."""
    data = bytearray()
    while len(data) < size:
        chunk = member.read(min(1 << 20, size - len(data)))
        if not chunk:
            raise CheckpointError(f"{where}: {len(data)} bytes of data; expected {size} (cut short)")
        data += chunk
    return data
