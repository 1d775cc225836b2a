"""Places name the device a program runs on; each gives the array module (`xp`) its kernels use.

`_import_cupy` is the one place fleetgraph imports CuPy: importing fleetgraph and running on the
CPU never needs it.
"""

from __future__ import annotations

import os

import numpy as np

from ..ir import FleetgraphError

# What the README's GPU extra installs (pyproject's `gpu`); CuPy wheels are built per CUDA major.
CUPY_PACKAGE = "cupy-cuda12x"


def is_compiled_with_cuda() -> bool:
    """False, as Paddle's CPU build says: this build runs its kernels on the CPU (scripts branch on it
    to pick their place)."""
    return False


class PlaceError(FleetgraphError, RuntimeError, ValueError):
    """A place this process cannot run on (ValueError as Paddle's CUDAPlace in a CPU build)."""


class Place:
    def array_module(self):
        raise NotImplementedError


class CPUPlace(Place):
    def array_module(self):
        return np

    def __repr__(self) -> str:
        return "Place(cpu)"

    def __eq__(self, other) -> bool:
        return isinstance(other, CPUPlace)

    def __hash__(self) -> int:
        return hash("cpu")


class CUDAPlace(Place):
    """GPU `device_id`. As in Paddle, making one where no GPU can be used is the error, saying why:
    CuPy is not installed, or it is and finds no CUDA GPU (or not this one). This build has no GPU
    kernels yet, so with a usable GPU too it says that."""

    def __init__(self, device_id: int = 0) -> None:
        if isinstance(device_id, bool) or not isinstance(device_id, (int, np.integer)) or device_id < 0:
            raise PlaceError(f"CUDAPlace: device_id; expected an int >= 0, got {device_id!r}")
        self.device_id = int(device_id)
        raise PlaceError(f"CUDAPlace({self.device_id}): {_gpu_problem(self.device_id)}; use CPUPlace()")


def _gpu_problem(device_id: int) -> str:
    """Why GPU `device_id` cannot run this process's kernels."""
    cupy, why = _import_cupy()
    if cupy is None:
        return (
            f"CuPy is not installed ({why}); expected CuPy for the CUDA on this host, e.g. pip install "
            f"'fleetgraph[gpu]' (installs {CUPY_PACKAGE})"
        )
    version = getattr(cupy, "__version__", "?")
    try:
        count = int(cupy.cuda.runtime.getDeviceCount())
    except Exception as e:  # CUDARuntimeError: no driver, no device, a driver too old for this CuPy
        return f"CuPy {version} is installed but finds no CUDA GPU: {type(e).__name__}: {e}"
    if count == 0:
        return f"CuPy {version} is installed but finds no CUDA GPU (0 devices; CUDA_VISIBLE_DEVICES?)"
    if device_id >= count:
        return f"CuPy {version} finds {count} CUDA GPU(s); expected a device_id in [0, {count}), got {device_id}"
    return f"GPU kernels are not available in this build (CuPy {version} finds {count} CUDA GPU(s))"


def _import_cupy():
    """(cupy, None), or (None, why it cannot be imported): the one guarded import of CuPy."""
    try:
        import cupy
    except ImportError as e:
        return None, str(e) or type(e).__name__
    except Exception as e:  # a CuPy wheel for another CUDA fails at import with its own errors
        return None, f"importing it failed: {type(e).__name__}: {e}"
    return cupy, None


class CUDAPinnedPlace(Place):
    """Page-locked host memory for copies to a GPU: like CUDAPlace, making one where no GPU can be
    used is the error, saying why."""

    def __init__(self) -> None:
        raise PlaceError(f"CUDAPinnedPlace(): {_gpu_problem(0)}; use CPUPlace()")


def cuda_places(device_ids=None) -> list:
    """One CUDAPlace per id (default: FLAGS_selected_gpus, else GPU 0), as Paddle's `cuda_places`;
    where no GPU can be used, CUDAPlace's error says why."""
    if device_ids is None:
        selected = os.getenv("FLAGS_selected_gpus", "")
        device_ids = [int(i) for i in selected.split(",") if i.strip()] or [0]
    elif not isinstance(device_ids, (list, tuple)):
        device_ids = [device_ids]
    return [CUDAPlace(i) for i in device_ids]


def cuda_pinned_places(device_count=None) -> list:
    """device_count CUDAPinnedPlaces (default: CPU_NUM's count), as Paddle's."""
    return [CUDAPinnedPlace() for _ in range(device_count or int(os.getenv("CPU_NUM", "1")))]
