"""`paddle.amp.auto_cast` as Paddle 2.0 behaves on a CPU build: float16 autocast runs only on a
CUDAPlace, so on any other place it warns and leaves every op in float32. fleetgraph's eager places
are CPU ones, so that is what it does; the white and black lists are still checked as Paddle's."""

from __future__ import annotations

import contextlib
import warnings

from ..dygraph import mode

# Paddle 2.0's lists (fluid/dygraph/amp/auto_cast.py): ops cast to float16, ops kept in float32.
WHITE_LIST = {"conv2d", "matmul", "matmul_v2", "mul"}
BLACK_LIST = {
    "exp", "square", "log", "mean", "sum", "cos_sim", "softmax", "softmax_with_cross_entropy",
    "sigmoid_cross_entropy_with_logits", "cross_entropy", "cross_entropy2",
}  # fmt: skip


def require_dynamic_mode(what: str) -> None:
    """Paddle's check of a dygraph-only API (an AssertionError there too)."""
    if not mode.in_dynamic_mode():
        raise AssertionError(
            f"We only support '{what}()' in dynamic graph mode, please call 'paddle.disable_static()' to enter "
            "dynamic graph mode."
        )


def updated_lists(custom_white_list=None, custom_black_list=None) -> tuple[set, set]:
    """Paddle's white and black lists with the custom ones moved in (an op in both is refused)."""
    white, black = set(WHITE_LIST), set(BLACK_LIST)
    if custom_white_list and custom_black_list and set(custom_white_list) & set(custom_black_list):
        raise ValueError("Custom white list overlap custom black list")
    for op in custom_white_list or ():
        black.discard(op)
        white.add(op)
    for op in custom_black_list or ():
        white.discard(op)
        black.add(op)
    return white, black


def auto_cast(enable=True, custom_white_list=None, custom_black_list=None):
    """A context in which Paddle casts white-list ops to float16 on a GPU. On the CPU places of
    fleetgraph (as in Paddle's CPU build) it warns that it makes no effect when enabled, and the
    enclosed ops run in float32."""
    require_dynamic_mode("amp_guard")
    updated_lists(custom_white_list, custom_black_list)
    if enable:
        warnings.warn(
            "amp_guard can only be enabled on CUDAPlace, current place is CPUPlace, so it makes no effect.",
            stacklevel=2,
        )
    return contextlib.nullcontext()
