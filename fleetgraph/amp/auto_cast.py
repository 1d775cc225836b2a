"""`paddle.amp.auto_cast` with later Paddle's signature (2.3: `level`, `dtype`).

dtype='float16' behaves as Paddle's CPU build: float16 autocast runs only on a CUDAPlace, so on
fleetgraph's CPU places it warns and leaves every op in float32. dtype='bfloat16' runs on the CPU,
as Paddle's oneDNN bf16 kernels do: the region's policy (dygraph/autocast.py) casts each eager op's
inputs, through the one dispatch, by the white and black lists below."""

from __future__ import annotations

import warnings

from ..dygraph import mode
from ..dygraph.autocast import AmpPolicy, policy_guard

# Paddle 2.0's lists (fluid/dygraph/amp/auto_cast.py): ops cast to float16, ops kept in float32.
# Later Paddle's bfloat16 lists are its float16 ones (amp_lists.py: BF16_WHITE_LIST = WHITE_LIST,
# BF16_BLACK_LIST = FP16_BLACK_LIST), with EXTRA_BLACK_LIST added at O1 and alone at O2.
WHITE_LIST = {"conv2d", "matmul", "matmul_v2", "mul"}
BLACK_LIST = {
    "exp", "square", "log", "mean", "sum", "cos_sim", "softmax", "softmax_with_cross_entropy",
    "sigmoid_cross_entropy_with_logits", "cross_entropy", "cross_entropy2",
}  # fmt: skip
EXTRA_BLACK_LIST = {
    "linear_interp_v2", "nearest_interp_v2", "bilinear_interp_v2", "bicubic_interp_v2", "trilinear_interp_v2",
    "lookup_table", "lookup_table_v2", "scatter",
}  # fmt: skip
LEVELS = ("O0", "O1", "O2")


def require_dynamic_mode(what: str) -> None:
    """Paddle's check of a dygraph-only API (an AssertionError there too)."""
    if not mode.in_dynamic_mode():
        raise AssertionError(
            f"We only support '{what}()' in dynamic graph mode, please call 'paddle.disable_static()' to enter "
            "dynamic graph mode."
        )


def updated_lists(custom_white_list=None, custom_black_list=None, base=(WHITE_LIST, BLACK_LIST)) -> tuple[set, set]:
    """Paddle's white and black lists (`base`) with the custom ones moved in (an op in both is refused)."""
    white, black = set(base[0]), set(base[1])
    if custom_white_list and custom_black_list and set(custom_white_list) & set(custom_black_list):
        raise ValueError("Custom white list overlap custom black list")
    for op in custom_white_list or ():
        black.discard(op)
        white.add(op)
    for op in custom_black_list or ():
        white.discard(op)
        black.add(op)
    return white, black


def checked_level_dtype(level, dtype, enable=True) -> tuple[str, str]:
    """`level` and `dtype` as later Paddle's amp_guard checks them (any case; the dtype only when
    enabled), with its errors."""
    if not isinstance(level, str) or level.upper() not in LEVELS:
        raise ValueError(f"level should be O0, O1 or O2; got {level!r}")
    if enable and (not isinstance(dtype, str) or dtype.lower() not in ("float16", "bfloat16")):
        raise ValueError(f"If enable amp, dtype should be 'float16' or 'bfloat16'; got {dtype!r}")
    return level.upper(), str(dtype).lower()


def auto_cast(enable=True, custom_white_list=None, custom_black_list=None, level="O1", dtype="float16"):
    """A context in which eager ops run in mixed precision.

    dtype='bfloat16' (level O1): white-list ops compute in bfloat16 (their float32 inputs, parameters
    too, cast by recorded cast ops, so gradients reach the float32 parameters in float32), black-list
    ops in float32, the others in float32 when an input is float32 and else in bfloat16; O2 computes
    every op in bfloat16 but those of its shorter black list (embedding lookups, interpolation,
    scatter), and goes with decorate(level='O2'); O0 casts nothing.
    dtype='float16': on the CPU places of fleetgraph (as in Paddle's CPU build) it warns that it makes
    no effect when enabled, and the enclosed ops run in float32."""
    require_dynamic_mode("amp_guard")
    level, dtype = checked_level_dtype(level, dtype, enable)
    base = (WHITE_LIST, BLACK_LIST)
    if dtype == "bfloat16":
        base = (WHITE_LIST, EXTRA_BLACK_LIST if level == "O2" else BLACK_LIST | EXTRA_BLACK_LIST)
    white, black = updated_lists(custom_white_list, custom_black_list, base)
    if enable and dtype == "float16":
        warnings.warn(
            "amp_guard can only be enabled on CUDAPlace, current place is CPUPlace, so it makes no effect.",
            stacklevel=2,
        )
    if not enable or dtype == "float16" or level == "O0":  # nothing cast, in an outer region's ops too
        return policy_guard(None)
    return policy_guard(AmpPolicy(level, dtype, white, black))
