"""Sequence ops that edit which rows each sequence of a LoD tensor holds: sequence_erase drops
given tokens and shortens the sequences' last LoD level to match."""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, register_op
from ..ir.errors import fmt_shape
from ._xp import host, reshape
from .lod_tensor import LoDTensor
from .sequence import _sequence_var, _sequences

# -- sequence_erase -------------------------------------------------------------------------------


def _erase_infer(ctx: InferContext) -> None:
    x = _sequence_var(ctx, "X")
    if len(x.shape) != 2 or x.shape[1] not in (1, -1):
        raise ctx.error(f"X '{x.name}' {fmt_shape(x.shape)}: expected token ids of shape [N, 1]")
    if not x.dtype.startswith(("int", "uint")):
        raise ctx.error(f"X '{x.name}' is {x.dtype}; expected integer token ids")
    ctx.set_output("Out", (-1, 1), x.dtype, lod_level=x.lod_level)


def _erase(xp, x, *, tokens):
    """Out keeps the ids of X that are not in `tokens`, in order; the outer LoD levels stay and the
    last level counts the rows each sequence kept (the erased rows are known only from the values,
    so the kept positions are found on the host and gathered in one take)."""
    seq = _sequences(x, "sequence_erase: X")
    ids = reshape(xp, seq.data, (-1,))
    keep = ~np.isin(host(ids), np.asarray(tokens, dtype=np.int64))
    kept = np.concatenate(([0], np.cumsum(keep)))
    levels = (*seq.levels[:-1], kept[seq.levels[-1]])
    out = reshape(xp, xp.take(ids, xp.asarray(np.flatnonzero(keep)), axis=0), (-1, 1))
    return LoDTensor(out, levels)


register_op(
    "sequence_erase",
    inputs=("X",),
    outputs=("Out",),
    attrs={"tokens": []},
    infer_shape=_erase_infer,
    kernel=_erase,
    takes_lod=True,
)
