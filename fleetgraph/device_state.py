"""Paddle 2.0's device queries and CUDA random-state helpers as its CPU build answers them: no CUDA
and no XPU, so no cuDNN version and an empty list of CUDA generator states."""

from __future__ import annotations

__all__ = ["get_cuda_rng_state", "get_cudnn_version", "is_compiled_with_xpu", "set_cuda_rng_state"]


def is_compiled_with_xpu() -> bool:
    """False: no Kunlun XPU kernels in this build."""
    return False


def get_cudnn_version():
    """None, as Paddle's build without CUDA returns."""
    return None


def get_cuda_rng_state() -> list:
    """Each GPU's random generator state: none here, so [] (Paddle's CPU build gives the same)."""
    return []


def set_cuda_rng_state(state_list) -> None:
    """Restore what get_cuda_rng_state gave; with no GPU only [] matches."""
    if list(state_list):
        raise ValueError("Length of cuda state list shoule be equal to the cuda device count")
