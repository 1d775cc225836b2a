"""Cases for coalesce_tensor; the c_* communication ops need peers and are tested in test_collective_runtime.py."""

import numpy as np

from . import case, rand

_INPUTS = [rand(2, 3, seed=1), rand(4, seed=2)]
_OUTPUTS = {"Output": 2, "FusedOutput": 1}


def _aligned(Input, **attrs):
    """float64 with use_align: each input starts at a multiple of 256 bytes = 32 elements."""
    fused = np.zeros(64)
    fused[0:6], fused[32:36] = Input[0].ravel(), Input[1]
    return {"Output": Input, "FusedOutput": fused}


case(
    "coalesce_tensor",
    {"Input": _INPUTS},
    attrs={"dtype": "float64"},
    outputs=_OUTPUTS,
    reference=lambda Input, **a: {"Output": Input, "FusedOutput": np.concatenate([x.ravel() for x in Input])},
)
case(
    "coalesce_tensor",
    {"Input": _INPUTS},
    attrs={"dtype": "float64", "copy_data": False, "set_constant": True, "constant": 0.5},
    outputs=_OUTPUTS,
    name="set_constant",
    reference=lambda Input, **a: {"Output": [np.full(x.shape, 0.5) for x in Input], "FusedOutput": np.full(10, 0.5)},
)
case(
    "coalesce_tensor",
    {"Input": _INPUTS},
    attrs={"dtype": "float64", "use_align": True},
    outputs=_OUTPUTS,
    name="use_align",
    reference=_aligned,
)
