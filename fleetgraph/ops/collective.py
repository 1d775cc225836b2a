"""Collective communication ops (c_allreduce_sum, c_broadcast, stream syncs, communicator init) and
coalesce_tensor.

The c_* ops keep Paddle's slots and attrs; their kernels call the process's communicator
(`ctx.comm`, rings over ZeroMQ in `executor/comm/ring.py`), which works on host NumPy arrays. All of
them are side-effecting, so no pass drops or reorders them. `coalesce_tensor`
is an ordinary op with a kernel: it packs its inputs into one contiguous buffer and returns views
of it, which is what lets one all-reduce of the buffer update every gradient at once.
"""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, register_op
from ..ir.dtypes import convert_dtype
from ..ir.errors import fmt_shape
from ..ir.registry import COMMON_ATTRS, GRAD_SUFFIX
from ._common import prod
from ._xp import dtype_of, full, reshape

# -- communication --------------------------------------------------------------------------------


def _same_as_inputs(ctx: InferContext) -> None:
    """Out[i] is X[i]: the sync and reduce ops name the variable they act on as their output too."""
    for i, var in enumerate(ctx.input_vars("X")):
        ctx.set_output("Out", var.shape, var.dtype, i=i)


def _allreduce_sum(xp, x, *, ring_id, use_calc_stream, use_model_parallel, ctx):
    """In place when x is writable and contiguous: a coalesce_tensor buffer's views see the sum.
    A failure names the ring and peer here; the executor adds the op and the variable."""
    return ctx.comm.ring(ring_id).allreduce(x)


def collective_grad(op_type: str):
    """The grad maker of a collective whose gradient is collective `op_type` from Out@GRAD to X@GRAD,
    with the forward op's attrs (Paddle's makers: SetAttrMap(Attrs()))."""

    def maker(op) -> list[dict]:
        (x,), (out,) = op.input("X"), op.output("Out")
        attrs = {k: v for k, v in op.attrs.items() if k not in COMMON_ATTRS}
        return [dict(type=op_type, inputs={"X": [out + GRAD_SUFFIX]}, outputs={"Out": [x + GRAD_SUFFIX]}, attrs=attrs)]

    return maker


def _allreduce_sum_grad(op) -> list[dict]:
    """Paddle's: the all-reduced Out@GRAD (each rank's loss is a term of the objective); with
    use_model_parallel (Paddle 2.1's c_identity) Out@GRAD passes through unchanged."""
    if op.attrs.get("use_model_parallel"):
        (x,), (out,) = op.input("X"), op.output("Out")
        return [dict(type="assign", inputs={"X": [out + GRAD_SUFFIX]}, outputs={"Out": [x + GRAD_SUFFIX]}, attrs={})]
    return collective_grad("c_allreduce_sum")(op)


def _broadcast(xp, x, *, ring_id, root, use_calc_stream, ctx):
    return ctx.comm.ring(ring_id).broadcast(x, root)


def _sync_stream(xp, xs, *, ctx, ring_id=0):
    """On the CPU every kernel has finished when the next one starts: nothing to wait for."""
    return list(xs)


def _comm_init(xp, x, *, nranks, rank, ring_id, endpoints, ctx):
    ctx.comm.init_ring(ring_id, nranks, rank, list(endpoints))
    return ()


register_op(
    "c_allreduce_sum",
    inputs=("X",),
    outputs=("Out",),
    attrs={"ring_id": 0, "use_calc_stream": False, "use_model_parallel": False},
    infer_shape=_same_as_inputs,
    inplace={"Out": "X"},
    grad=_allreduce_sum_grad,
    side_effect=True,
    kernel=_allreduce_sum,
    needs_context=True,
)
register_op(
    "c_broadcast",
    inputs=("X",),
    outputs=("Out",),
    attrs={"ring_id": 0, "root": 0, "use_calc_stream": False},
    infer_shape=_same_as_inputs,
    inplace={"Out": "X"},
    side_effect=True,
    kernel=_broadcast,
    needs_context=True,
)
# The stream syncs are ordering markers: compute must finish before communication reads a buffer
# (calc), and communication must finish before the optimizer reads what it wrote (comm).
register_op(
    "c_sync_calc_stream",
    inputs=("X*",),
    outputs=("Out*",),
    side_effect=True,
    kernel=_sync_stream,
    needs_context=True,
)
register_op(
    "c_sync_comm_stream",
    inputs=("X*",),
    outputs=("Out*",),
    attrs={"ring_id": 0},
    side_effect=True,
    kernel=_sync_stream,
    needs_context=True,
)
register_op(
    "c_comm_init",
    inputs=("X?",),
    attrs={"nranks": 1, "rank": 0, "ring_id": 0, "endpoints": []},
    side_effect=True,
    kernel=_comm_init,
    needs_context=True,
)

# -- coalesce_tensor ------------------------------------------------------------------------------

# With use_align each input starts at a multiple of this many bytes, as Paddle aligns on a GPU.
ALIGNMENT_BYTES = 256


def coalesced_offsets(sizes: list[int], itemsize: int, use_align: bool) -> tuple[list[int], int]:
    """Start offset (in elements) of each input in the fused buffer, and the buffer's length."""
    step = max(1, ALIGNMENT_BYTES // itemsize) if use_align else 1
    offsets, total = [], 0
    for n in sizes:
        offsets.append(total)
        total += -(-n // step) * step
    return offsets, total


def _coalesce_infer(ctx: InferContext) -> None:
    dtype = convert_dtype(ctx.attr("dtype"))
    inputs = ctx.input_vars("Input")
    outputs = ctx.op.outputs.get("Output", [])
    if len(outputs) != len(inputs):
        raise ctx.error(f"Output has {len(outputs)} variables; expected one per Input, got {len(inputs)} inputs")
    for var in inputs:
        if var.dtype != dtype:
            raise ctx.error(f"input '{var.name}' has dtype {var.dtype}; expected dtype {dtype}, as attr dtype says")
        if any(d < 0 for d in var.shape):
            raise ctx.error(f"input '{var.name}' has shape {fmt_shape(var.shape)}; expected a fully known shape")
    for i, var in enumerate(inputs):
        ctx.set_output("Output", var.shape, dtype, i=i)
    itemsize = np.dtype(dtype).itemsize
    _, total = coalesced_offsets([prod(v.shape) for v in inputs], itemsize, ctx.attr("use_align"))
    ctx.set_output("FusedOutput", (total,), dtype)


def _coalesce(xp, inputs, *, copy_data, set_constant, constant, dtype, use_align):
    """One contiguous buffer; Output[i] is a view of it shaped like Input[i]. copy_data wins over
    set_constant, as in Paddle's kernel."""
    dtype = convert_dtype(dtype)
    sizes = [int(x.size) for x in inputs]
    offsets, total = coalesced_offsets(sizes, np.dtype(dtype).itemsize, use_align)
    if set_constant and not copy_data:
        fused = full(xp, (total,), constant, dtype)
    else:
        fused = xp.zeros((total,), dtype=dtype_of(xp, dtype))
    views = []
    for x, start, n in zip(inputs, offsets, sizes):
        view = reshape(xp, fused[start : start + n], x.shape)
        if copy_data:
            view[...] = x
        views.append(view)
    return views, fused


register_op(
    "coalesce_tensor",
    inputs=("Input*",),
    outputs=("Output*", "FusedOutput"),
    attrs={"copy_data": True, "set_constant": False, "constant": 0.0, "dtype": "float32", "use_align": False},
    infer_shape=_coalesce_infer,
    kernel=_coalesce,
)
