"""What a checkpoint load refuses: files that are not regular files inside the directory (a FIFO, a
device, a path leading out), wrong dtypes (in one process and on a pserver), malformed manifests,
members and headers -- each one CheckpointError naming the file, within a timeout, and the scope as
it was."""

from __future__ import annotations

import hashlib
import io
import json
import os
import signal
import zipfile

import numpy as np
import pytest
from models import fit_a_line_2x

import fleetgraph as paddle
import fleetgraph.distributed.fleet as fleet
import fleetgraph.distributed.fleet.base.role_maker as role_maker
import fleetgraph.fluid as fluid
from fleetgraph.store import checkpoint
from fleetgraph.store.checkpoint import CheckpointError

DATA = "persistables.0123456789ab.npz"  # a name checkpoint.save could have written
SECONDS = 10  # a load that hangs (a FIFO waiting for a writer, /dev/zero read forever) fails here


class LoadHung(Exception):
    """A load still running after SECONDS: the refusal under test did not happen."""


@pytest.fixture(autouse=True)
def _timeout():
    def hung(signum, frame):
        raise LoadHung(f"no answer after {SECONDS} s")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.setitimer(signal.ITIMER_REAL, SECONDS)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="module")
def fit_a_line():
    """The model, an executor, and its persistables as the startup program sets them."""
    main, startup, *_ = fit_a_line_2x()
    exe = paddle.static.Executor()
    with paddle.static.scope_guard(paddle.static.Scope()):
        exe.run(startup)
        values = paddle.static.global_scope().vars
        arrays = {v.name: np.array(values[v.name]) for v in main.list_vars() if v.persistable}
    return main, startup, exe, arrays


def _assert_refused(fit_a_line, directory, match: str) -> CheckpointError:
    """load_persistables raises one CheckpointError matching `match` and leaves the scope as it was."""
    main, startup, exe, _ = fit_a_line
    scope = paddle.static.Scope()
    with paddle.static.scope_guard(scope):
        exe.run(startup)
        before = {n: np.array(v) for n, v in scope.vars.items() if v is not None}
        with pytest.raises(CheckpointError, match=match) as refused:
            fluid.io.load_persistables(exe, str(directory), main)
    assert type(refused.value) is CheckpointError
    assert sorted(n for n, v in scope.vars.items() if v is not None) == sorted(before)
    for name, value in before.items():
        assert scope.vars[name].dtype == value.dtype and np.array_equal(scope.vars[name], value), name
    return refused.value


def _npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array(buf, array, allow_pickle=False)
    return buf.getvalue()


def _npz(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buf.getvalue()


def _write_with_manifest(directory, data: bytes, entry: dict | None = None) -> None:
    """`data` as the checkpoint's persistables.npz, named by a manifest with its true size and
    SHA-256 (or `entry`): the checksums pass, so the fault under test is the one found."""
    with open(os.path.join(directory, DATA), "wb") as f:
        f.write(data)
    entry = entry or {"path": DATA, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    _write_manifest(directory, {"persistables.npz": entry})


def _write_manifest(directory, files) -> None:
    manifest = {"format": checkpoint.FORMAT, "version": checkpoint.VERSION, "meta": {}, "files": files}
    with open(os.path.join(directory, checkpoint.MANIFEST), "w") as f:
        json.dump(manifest, f)


# -- only regular files inside the directory -----------------------------------------------------------

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


@pytest.mark.parametrize("with_manifest", [False, True])
def test_a_fifo_as_the_data_file_is_refused_without_waiting_for_a_writer(fit_a_line, tmp_path, with_manifest):
    os.mkfifo(tmp_path / (DATA if with_manifest else "persistables.npz"))
    if with_manifest:
        _write_manifest(tmp_path, {"persistables.npz": {"path": DATA, "bytes": 0, "sha256": EMPTY_SHA256}})
    _assert_refused(fit_a_line, tmp_path, r"persistables.*: expected a regular file, got a FIFO")


@pytest.mark.parametrize("with_manifest", [False, True])
def test_a_symlink_to_dev_zero_is_refused_without_reading_it(fit_a_line, tmp_path, with_manifest):
    """/dev/zero has size 0, so a manifest saying 0 bytes passes the size check; hashing it never ends."""
    os.symlink("/dev/zero", tmp_path / (DATA if with_manifest else "persistables.npz"))
    if with_manifest:
        _write_manifest(tmp_path, {"persistables.npz": {"path": DATA, "bytes": 0, "sha256": EMPTY_SHA256}})
    _assert_refused(fit_a_line, tmp_path, r"persistables.*: leads out of .*; expected a file inside it, got /dev/zero")


@pytest.mark.parametrize("where", ["../outside.npz", "absolute"])
def test_a_manifest_path_outside_the_directory_is_refused_even_with_the_right_checksum(fit_a_line, tmp_path, where):
    data = _npz({f"{n}.npy": _npy(v) for n, v in fit_a_line[3].items()})  # a loadable file
    outside = tmp_path / "outside.npz"
    outside.write_bytes(data)
    (tmp_path / "ckpt").mkdir()
    path = str(outside) if where == "absolute" else where
    _write_manifest(
        tmp_path / "ckpt",
        {"persistables.npz": {"path": path, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}},
    )
    match = r"is an absolute path; expected a name inside it" if where == "absolute" else r"outside\.npz: leads out of"
    _assert_refused(fit_a_line, tmp_path / "ckpt", match)


def test_a_symlink_inside_the_directory_still_loads(fit_a_line, tmp_path):
    main, startup, exe, arrays = fit_a_line
    (tmp_path / "held.npz").write_bytes(_npz({f"{n}.npy": _npy(v * 2) for n, v in arrays.items()}))
    os.symlink("held.npz", tmp_path / "persistables.npz")
    with paddle.static.scope_guard(paddle.static.Scope()):
        fluid.io.load_persistables(exe, str(tmp_path), main)
        np.testing.assert_array_equal(paddle.static.global_scope().vars["fc_0.w_0"], arrays["fc_0.w_0"] * 2)


# -- dtypes are checked like shapes --------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "int32", "bool"])
def test_a_saved_value_of_another_dtype_is_refused_naming_the_variable_and_both_dtypes(fit_a_line, tmp_path, dtype):
    arrays = dict(fit_a_line[3], **{"fc_0.w_0": fit_a_line[3]["fc_0.w_0"].astype(dtype)})
    checkpoint.save(str(tmp_path), arrays)
    _assert_refused(fit_a_line, tmp_path, rf"'fc_0.w_0' expected dtype float32, got {dtype}")


SERVERS = ["127.0.0.1:6174", "127.0.0.1:6175"]


def _init_server_0(scope: paddle.static.Scope, model_dir=None) -> None:
    """Server 0 of a 2-pserver fit_a_line job: its startup program run in `scope`, then `model_dir` loaded."""
    fleet.init(role_maker.UserDefinedRoleMaker(0, role=role_maker.Role.SERVER, worker_num=2, server_endpoints=SERVERS))
    fit_a_line_2x(optimizer=fleet.distributed_optimizer(paddle.optimizer.SGD(0.01)))
    with paddle.static.scope_guard(scope):
        fleet.init_server(model_dir)


def test_a_pserver_refuses_a_saved_value_of_another_dtype_and_keeps_its_startup_values(fit_a_line, tmp_path):
    checkpoint.save(str(tmp_path), {n: v.astype("float64") for n, v in fit_a_line[3].items()})
    fresh, scope = paddle.static.Scope(), paddle.static.Scope()
    _init_server_0(fresh)
    with pytest.raises(CheckpointError, match=r"init_server: .* \(for .*\) expected dtype float32, got float64"):
        _init_server_0(scope, str(tmp_path))
    held = {n: v for n, v in fresh.vars.items() if isinstance(v, np.ndarray)}
    assert held and sorted(held) == sorted(n for n, v in scope.vars.items() if isinstance(v, np.ndarray))
    for name, value in held.items():
        assert scope.vars[name].dtype == value.dtype and np.array_equal(scope.vars[name], value), name


# -- malformed manifests, members and headers ----------------------------------------------------------

GOOD_ENTRY = {"path": DATA, "bytes": 1, "sha256": EMPTY_SHA256}
BAD_ENTRIES = {
    "a list": (["persistables.npz"], r"is a list; expected an object"),
    "no sha256": ({"path": DATA, "bytes": 1}, r"lacks sha256"),
    "no path": ({"bytes": 1, "sha256": EMPTY_SHA256}, r"lacks path"),
    "bytes as text": (dict(GOOD_ENTRY, bytes="1"), r"has bytes '1'; expected a size >= 0"),
    "path a number": (dict(GOOD_ENTRY, path=7), r"has path 7; expected a file name"),
    "short sha256": (dict(GOOD_ENTRY, sha256="ab"), r"has sha256 'ab'; expected 64 lowercase hex digits"),
}


@pytest.mark.parametrize("fault", sorted(BAD_ENTRIES))
def test_a_malformed_manifest_entry_is_one_error_naming_the_manifest(fit_a_line, tmp_path, fault):
    entry, match = BAD_ENTRIES[fault]
    _write_with_manifest(tmp_path, _npz({f"{n}.npy": _npy(v) for n, v in fit_a_line[3].items()}), entry)
    _assert_refused(fit_a_line, tmp_path, rf"manifest\.json: entry 'persistables\.npz' {match}")


@pytest.mark.parametrize("text", ['{"format": "fleetgraph.checkpoint",', '["files"]', '{"format": 7}'])
def test_a_manifest_that_is_not_a_manifest_is_one_error_naming_it(fit_a_line, tmp_path, text):
    (tmp_path / "manifest.json").write_text(text)
    _assert_refused(fit_a_line, tmp_path, r"manifest\.json: (not a readable manifest|expected a fleetgraph)")


def test_a_member_that_is_not_a_npy_array_is_one_error_naming_it(fit_a_line, tmp_path):
    members = {f"{n}.npy": _npy(v) for n, v in fit_a_line[3].items()}
    _write_with_manifest(tmp_path, _npz({**members, "notes.txt": b"not an array"}))
    _assert_refused(fit_a_line, tmp_path, rf"{DATA}: member 'notes.txt' is not a .npy array")


def test_a_member_with_a_garbled_header_is_one_error_naming_it(fit_a_line, tmp_path):
    members = {f"{n}.npy": _npy(v) for n, v in fit_a_line[3].items()}
    members["fc_0.w_0.npy"] = b"\x93NUMPY\x01\x00\x10\x00{'descr': 'nonsense" + b" " * 8
    _write_with_manifest(tmp_path, _npz(members))
    _assert_refused(fit_a_line, tmp_path, r"member 'fc_0.w_0.npy': not a valid .npy array")


def test_a_header_claiming_2_to_the_40_elements_is_refused_before_allocating(fit_a_line, tmp_path):
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False, "shape": (2**40,)})
    members = {f"{n}.npy": _npy(v) for n, v in fit_a_line[3].items()}
    members["fc_0.w_0.npy"] = header.getvalue() + np.zeros(13, "<f4").tobytes()
    _write_with_manifest(tmp_path, _npz(members))
    _assert_refused(
        fit_a_line,
        tmp_path,
        r"member 'fc_0.w_0.npy': its header claims shape \[1099511627776\] float32, 4398046511104 bytes; "
        r"expected the 52 bytes the member holds",
    )


def test_a_well_formed_checkpoint_of_every_dtype_and_order_round_trips(tmp_path):
    arrays = {
        "f64": np.arange(6.0).reshape(2, 3),
        "fortran": np.asfortranarray(np.arange(12, dtype="int32").reshape(3, 4)),
        "flags": np.array([True, False]),
        "empty": np.zeros((0, 4), "float32"),
        "scalar": np.array(3, "int64"),
    }
    checkpoint.save(str(tmp_path), arrays)
    loaded = checkpoint.load(str(tmp_path))
    for name, value in arrays.items():
        assert loaded[name].dtype == value.dtype and np.array_equal(loaded[name], value), name
    loaded["f64"][0, 0] = 9.0  # writable, as numpy.load's arrays are
