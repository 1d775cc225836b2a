"""CUDAPlace where no GPU can be used: one clear error saying why (CuPy missing, or no CUDA GPU),
and CuPy imported in one guarded place only, so the CPU never needs it."""

from __future__ import annotations

import pathlib
import re
import sys
import types

import pytest

import fleetgraph as paddle
from fleetgraph.executor import place
from fleetgraph.ir import FleetgraphError

PACKAGE = pathlib.Path(place.__file__).resolve().parents[1]


def _fake_cupy(monkeypatch, count=None, error=None):
    def get_device_count():
        if error is not None:
            raise error
        return count

    runtime = types.SimpleNamespace(getDeviceCount=get_device_count)
    cupy = types.SimpleNamespace(__version__="13.6.0", cuda=types.SimpleNamespace(runtime=runtime))
    monkeypatch.setitem(sys.modules, "cupy", cupy)


def test_without_cupy_cuda_place_says_to_install_the_gpu_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy raises ImportError
    with pytest.raises(FleetgraphError) as e:
        paddle.CUDAPlace(0)
    assert str(e.value).startswith("CUDAPlace(0): CuPy is not installed (")
    assert f"pip install 'fleetgraph[gpu]' (installs {place.CUPY_PACKAGE}); use CPUPlace()" in str(e.value)
    assert isinstance(e.value, ValueError) and isinstance(e.value, RuntimeError)  # Paddle's and ours before


class CUDARuntimeError(RuntimeError):
    pass


def test_with_cupy_but_no_gpu_cuda_place_says_cupy_finds_none(monkeypatch):
    _fake_cupy(monkeypatch, error=CUDARuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected"))
    with pytest.raises(
        place.PlaceError,
        match=re.escape(
            "CUDAPlace(1): CuPy 13.6.0 is installed but finds no CUDA GPU: CUDARuntimeError: cudaErrorNoDevice"
        ),
    ):
        paddle.fluid.CUDAPlace(1)
    _fake_cupy(monkeypatch, count=0)
    with pytest.raises(place.PlaceError, match=r"finds no CUDA GPU \(0 devices; CUDA_VISIBLE_DEVICES\?\)"):
        paddle.static.CUDAPlace(0)


def test_a_device_id_beyond_the_gpus_is_named(monkeypatch):
    _fake_cupy(monkeypatch, count=2)
    with pytest.raises(
        place.PlaceError,
        match=r"CUDAPlace\(2\): CuPy 13.6.0 finds 2 CUDA GPU\(s\); expected a "
        r"device_id in \[0, 2\), got 2",
    ):
        paddle.CUDAPlace(2)
    with pytest.raises(place.PlaceError, match=r"device_id; expected an int >= 0, got -1"):
        paddle.CUDAPlace(-1)


def test_cupy_is_imported_in_one_guarded_place_only():
    importing = sorted(
        str(path.relative_to(PACKAGE.parent))
        for path in PACKAGE.rglob("*.py")
        if re.search(r"^\s*(import cupy|from cupy)", path.read_text(), re.MULTILINE)
    )
    assert importing == ["fleetgraph/executor/place.py"]
