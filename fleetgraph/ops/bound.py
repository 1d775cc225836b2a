"""The one way an op's kernel is called: bound once to (op definition, attrs), with its random
stream, the outputs somebody reads (`need`), the run context and the error wrapping.

The executor's plan steps are bound kernels with variable names added; the eager engine binds
one per op type with the default attrs (and per call when attrs differ); the eager fast paths and
the tape's gradient calls take their kernel and keyword arguments from one. A kernel is called as
`kernel(xp, *inputs, **kwargs)`, `xp` the place's array module, inputs in the op's slot order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ir import FleetgraphError, KernelError
from ..ir.dtypes import BFLOAT16
from ..ir.errors import fmt_shape
from ..ir.registry import OpDef
from .lod_tensor import LoDTensor
from .rng import generator_for


class BoundKernel:
    """`bound(xp, *inputs)`: the op's kernel on `inputs` with the attrs it was bound to."""

    __slots__ = ("op_type", "kernel", "kwargs", "in_slots", "single_out", "seed", "rng_key", "needs_context")

    def __init__(
        self, opdef: OpDef, attrs: dict, *, need: frozenset | None = None, rng_key: str = "", complete: bool = False
    ) -> None:
        """`attrs` over the op's defaults (`complete`: attrs holds exactly the op's attrs already);
        `need`: the output slots somebody reads (default all), for kernels that skip the others;
        `rng_key`: the variable a random op writes, which keys its stream."""
        if opdef.kernel is None:
            raise FleetgraphError(f"{opdef.type}: has no kernel and cannot run")
        self.op_type, self.kernel = opdef.type, opdef.kernel
        self.in_slots = tuple(s.name for s in opdef.inputs)
        self.single_out = len(opdef.outputs) == 1
        if complete:
            self.kwargs = dict(attrs)
        else:
            self.kwargs = {k: attrs[k] if k in attrs else default for k, default in opdef.attrs.items()}
        if opdef.wants_outputs:
            self.kwargs["need"] = frozenset(s.name for s in opdef.outputs) if need is None else need
        self.seed, self.rng_key = None, rng_key
        if opdef.random:
            self.seed = attrs.get("seed", 0) if attrs.get("fix_seed", True) else 0
            self.reseed()
        self.needs_context = opdef.needs_context

    def reseed(self) -> None:
        """A fresh random stream: a seeded op draws the same numbers on every run, an unseeded one
        new numbers from the global generator (`paddle.seed`)."""
        self.kwargs["rng"] = generator_for(self.seed, self.rng_key)

    def set_context(self, ctx) -> None:
        """What a `needs_context` kernel sees of the run: communicator, sub-blocks, variables."""
        self.kwargs["ctx"] = ctx

    def __call__(self, xp, *inputs):
        try:
            return self.kernel(xp, *inputs, **self.kwargs)
        except FleetgraphError:
            raise
        except Exception as e:
            raise self.failure(e, inputs) from e

    def failure(self, error: Exception, inputs, where: str = "") -> KernelError:
        """The error of a kernel that raised `error` on `inputs`, naming the op and each input's
        shape and dtype (`where`: what to call the op instead of its type, e.g. its place in a block)."""
        shapes = ", ".join(f"{slot}={describe(v)}" for slot, v in zip(self.in_slots, inputs) if v is not None)
        return KernelError(f"{where or self.op_type} with inputs {shapes or 'none'}: {type(error).__name__}: {error}")


def describe(value: Any) -> str:
    """`[8, 4] float32` for an array (rows of a LoDTensor), a bracketed list for a duplicable slot."""
    if isinstance(value, list):
        return "[" + ", ".join(describe(v) for v in value) + "]"
    rows = value.data if isinstance(value, LoDTensor) else value
    return f"{fmt_shape(getattr(rows, 'shape', ()))} {getattr(value, 'dtype', type(value).__name__)}"


def in_float32(kernel, keep: tuple = (), narrow: bool = True):
    """`kernel` as a bfloat16 kernel of oneDNN computes (bf16 GEMM: bfloat16 inputs, float32
    accumulation, bfloat16 output): each bfloat16 input widened to float32 (exact), the kernel run in
    float32, then (with `narrow`) each float32 output rounded to bfloat16 (to nearest, ties to even)
    except the outputs flagged in `keep` (in-place ones, such as batch_norm's running statistics,
    keep their dtype). NumPy has no bfloat16 arithmetic of its own (ml_dtypes' matmul returns float32,
    its dot is a loop 40x slower than float32's at 256x256), so every kernel computes this way on
    bfloat16 inputs, at float32's speed plus the two conversions."""

    def run(xp, *inputs, **kwargs):
        result = kernel(xp, *[_widened(v) for v in inputs], **kwargs)
        if not narrow:
            return result
        if result.__class__ is tuple or result.__class__ is list:
            kept = keep if len(keep) == len(result) else (False,) * len(result)  # a list output (split's) is one slot
            return result.__class__(v if k else _narrowed(v) for v, k in zip(result, kept))
        return _narrowed(result)

    return run


def has_bfloat16(inputs) -> bool:
    """Whether any input (an array, or a list of them for a duplicable slot) is bfloat16."""
    for v in inputs:
        if v.__class__ is list:
            if has_bfloat16(v):
                return True
        elif getattr(v, "dtype", None) is BFLOAT16:  # NumPy's one bfloat16 descriptor (no comparison: ~2x faster)
            return True
    return False


def _widened(value):
    if value.__class__ is list:
        return [_widened(v) for v in value]
    if value.__class__ is np.ndarray and value.dtype == BFLOAT16:
        return value.astype(np.float32)
    return value


def _narrowed(value):
    if value.__class__ is list or value.__class__ is tuple:
        return value.__class__(_narrowed(v) for v in value)
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype == np.float32:  # a NumPy scalar too
        return np.asarray(value).astype(BFLOAT16)
    return value
