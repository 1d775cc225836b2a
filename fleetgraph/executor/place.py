"""Places name the device a program runs on; each gives the array module (`xp`) its kernels use."""

from __future__ import annotations

import numpy as np


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
    def __init__(self, device_id: int = 0) -> None:
        self.device_id = int(device_id)

    def array_module(self):
        raise RuntimeError(f"CUDAPlace({self.device_id}): GPU kernels are not available in this build; use CPUPlace()")

    def __repr__(self) -> str:
        return f"Place(gpu:{self.device_id})"

    def __eq__(self, other) -> bool:
        return isinstance(other, CUDAPlace) and other.device_id == self.device_id

    def __hash__(self) -> int:
        return hash(("gpu", self.device_id))
