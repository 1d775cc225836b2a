"""The collectives Paddle 2.0's model parallelism (`paddle.distributed.split`) adds to a program:
c_allgather and its gradient c_reducescatter (and back), with Paddle's slots and attrs.

Both run over the process's ring (`ctx.comm.ring(ring_id)`), which sums: a gather is one sum of a
zero buffer in which each rank filled its own slot (exact, at nranks times the bytes), and a
reduce-scatter is a sum of which each rank keeps its own rows. Rank r's rows come r-th along axis 0,
as NCCL's allgather lays them out.
"""

from __future__ import annotations

import numpy as np

from ..ir import FleetgraphError, InferContext, register_op
from ..ir.errors import fmt_shape
from ._xp import host
from .collective import collective_grad

_ATTRS = {"ring_id": 0, "use_calc_stream": False, "nranks": 1}


def gathered_by_sum(ring, value, name: str = "") -> np.ndarray:
    """Every rank's `value` stacked in rank order (shape [nranks, *value.shape]), by one all-reduce."""
    value = host(value)
    buffer = np.zeros((ring.nranks, *value.shape), dtype=value.dtype)
    buffer[ring.rank] = value
    return ring.allreduce(buffer, name)


def _checked_ring(ctx, op_type: str, ring_id: int, nranks: int):
    ring = ctx.comm.ring(ring_id)
    if ring.nranks != nranks:
        raise FleetgraphError(f"{op_type}: nranks; expected the {ring.nranks} ranks of ring {ring_id}, got {nranks}")
    return ring


def _allgather(xp, x, *, ring_id, use_calc_stream, nranks, ctx):
    ring = _checked_ring(ctx, "c_allgather", ring_id, nranks)
    stacked = gathered_by_sum(ring, x, "c_allgather")
    return xp.asarray(stacked.reshape((nranks * stacked.shape[1], *stacked.shape[2:])))


def _reducescatter(xp, x, *, ring_id, use_calc_stream, nranks, ctx):
    ring = _checked_ring(ctx, "c_reducescatter", ring_id, nranks)
    summed = ring.allreduce(np.array(host(x), order="C"), "c_reducescatter")
    rows = summed.shape[0] // nranks
    return xp.asarray(summed[ring.rank * rows : (ring.rank + 1) * rows].copy())


def _allgather_infer(ctx: InferContext) -> None:
    nranks, x = ctx.attr("nranks"), ctx.input_var("X")
    if nranks < 2:
        raise ctx.error(f"nranks; expected >= 2 (the value of nranks should be >=2), got {nranks}")
    if not x.shape:
        raise ctx.error("X; expected a tensor of rank >= 1 to gather along axis 0, got a scalar")
    rows = x.shape[0] * nranks if x.shape[0] >= 0 else -1
    ctx.set_output("Out", (rows, *x.shape[1:]), x.dtype)


def _reducescatter_infer(ctx: InferContext) -> None:
    nranks, x = ctx.attr("nranks"), ctx.input_var("X")
    if nranks < 1:
        raise ctx.error(f"nranks; expected >= 1, got {nranks}")
    if not x.shape:
        raise ctx.error("X; expected a tensor of rank >= 1 to scatter along axis 0, got a scalar")
    rows = x.shape[0]
    if rows >= 0 and rows % nranks:
        raise ctx.error(f"X has shape {fmt_shape(x.shape)}; expected dim 0 divisible by nranks ({nranks})")
    ctx.set_output("Out", (rows // nranks if rows >= 0 else -1, *x.shape[1:]), x.dtype)


register_op(
    "c_allgather",
    inputs=("X",),
    outputs=("Out",),
    attrs=dict(_ATTRS),
    infer_shape=_allgather_infer,
    grad=collective_grad("c_reducescatter"),
    side_effect=True,
    kernel=_allgather,
    needs_context=True,
)
register_op(
    "c_reducescatter",
    inputs=("X",),
    outputs=("Out",),
    attrs=dict(_ATTRS),
    infer_shape=_reducescatter_infer,
    grad=collective_grad("c_allgather"),
    side_effect=True,
    kernel=_reducescatter,
    needs_context=True,
)
