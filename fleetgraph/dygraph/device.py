"""`paddle.set_device` / `paddle.get_device`: the device eager Tensors live on, "cpu" in this build.

A GPU is asked for through the executor's places: `set_device("gpu:N")` makes CUDAPlace(N), whose
error says why this process cannot use that GPU (no CuPy, no device, no GPU kernels yet).
"""

from __future__ import annotations

import re

from ..executor.place import CPUPlace, CUDAPlace, PlaceError
from . import mode

_SPELLING = re.compile(r"^(cpu|gpu)(?::(\d+))?$")


def place_of(device: str):
    """The place Paddle's device name ('cpu', 'gpu', 'gpu:N') stands for."""
    match = _SPELLING.match(device.strip().lower()) if isinstance(device, str) else None
    if match is None or (match.group(1) == "cpu" and match.group(2) is not None):
        raise PlaceError(f"set_device: unknown device {device!r}; expected 'cpu', 'gpu' or 'gpu:N'")
    if match.group(1) == "cpu":
        return CPUPlace()
    index = int(match.group(2) or 0)
    place = CUDAPlace(index)  # raises, saying why this process cannot use GPU `index`
    raise PlaceError(  # reached only once CUDAPlace can be made: eager kernels still run on NumPy
        f"set_device({device!r}): eager Tensors run on the CPU only in this build; expected 'cpu', got {place!r}"
    )


def set_device(device: str):
    """Select the device by Paddle's name ('cpu', 'gpu', 'gpu:N'): eager kernels run with its
    place's array module from here on. Returns the place."""
    place = place_of(device)
    mode.use_place(place)
    return place


def get_device() -> str:
    """'cpu': the only device set_device accepts in this build (Paddle's spellings: 'cpu', 'gpu:N')."""
    return "cpu"
