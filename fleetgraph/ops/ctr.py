"""Ops of click-through-rate models: cvm (the show and click counts that lead each embedding,
log-scaled or dropped) and filter_by_instag (the instances whose tags meet a filter), as Paddle 1.8's
kernels (cvm_op.h, filter_by_instag_op.h)."""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ._common import known
from ._xp import full, host, reshape
from .lod_tensor import LoDError, LoDTensor

# -- cvm ----------------------------------------------------------------------------------------


def _cvm_infer(ctx: InferContext) -> None:
    x = ctx.check_rank("X", (2,))
    if known(x[1]) and x[1] < 2:
        raise ctx.error(f"X {fmt_shape(x)}: expected at least the 2 show/click columns")
    width = x[1] if ctx.attr("use_cvm") or not known(x[1]) else x[1] - 2
    ctx.set_output("Y", (x[0], width), ctx.input_dtype("X"), lod_level=ctx.input_var("X").lod_level)


def _cvm(xp, x, cvm, *, use_cvm):
    """With use_cvm, show -> log(show + 1) and click -> log(click + 1) - log(show + 1); without, the
    two columns are dropped."""
    if not use_cvm:
        return x[:, 2:]
    show = xp.log(x[:, 0:1] + 1)
    click = xp.log(x[:, 1:2] + 1) - show
    return xp.concat([show, click, x[:, 2:]], axis=1)


def _cvm_grad(xp, x, cvm, dy, *, use_cvm):
    """Paddle's rule, not a derivative: the show/click columns' gradient is the CVM input itself (one
    row per instance, or per sequence of a LoD X), the rest is Y's gradient passed through."""
    rows = x.data.shape[0] if isinstance(x, LoDTensor) else x.shape[0]
    cvm = cvm.data if isinstance(cvm, LoDTensor) else cvm
    if isinstance(x, LoDTensor) and x.levels:
        lengths = np.diff(x.levels[-1])
        cvm = xp.take(cvm, xp.asarray(np.repeat(np.arange(lengths.size), lengths)), axis=0)
    dy = dy.data if isinstance(dy, LoDTensor) else dy
    dx = xp.concat([reshape(xp, cvm, (rows, 2)), dy[:, 2:] if use_cvm else dy], axis=1)
    return x.with_data(dx) if isinstance(x, LoDTensor) else dx


register_op(
    "cvm",
    inputs=("X", "CVM"),
    outputs=("Y",),
    attrs={"use_cvm": True},
    infer_shape=_cvm_infer,
    grad=make_grad_op(inputs=("X", "CVM", "Y@GRAD"), outputs=("X@GRAD",)),
    kernel=_cvm,
)
register_op(
    "cvm_grad",
    inputs=("X", "CVM", "Y@GRAD"),
    outputs=("X@GRAD",),
    attrs={"use_cvm": True},
    kernel=_cvm_grad,
    takes_lod=True,
)

# -- filter_by_instag -------------------------------------------------------------------------------


def _instag_infer(ctx: InferContext) -> None:
    ins = ctx.check_rank("Ins", (2,))
    ctx.set_output("Out", (-1, ins[1]), ctx.input_dtype("Ins"), lod_level=1)
    ctx.set_output("LossWeight", (-1, 1), "float32", lod_level=1)
    ctx.set_output("IndexMap", (-1, 3), "int64", lod_level=1)


def _instances(ins, is_lod: bool, count: int) -> np.ndarray:
    """Where each instance's rows of Ins start and end: its LoD, or one row each."""
    if not is_lod:
        return np.arange(count + 1)
    if not isinstance(ins, LoDTensor) or not ins.levels:
        raise LoDError("filter_by_instag: is_lod is True but Ins has no LoD; expected one sequence per instance")
    return ins.levels[-1]


def _filter_by_instag(xp, ins, ins_tag, filter_tag, *, is_lod, out_val_if_empty):
    """The rows of each instance one of whose tags is in Filter_tag, with IndexMap rows (out start,
    ins start, rows) and a LossWeight of 1 per kept instance; none kept: one row of out_val_if_empty
    and a LossWeight of 0, as Paddle."""
    rows = ins.data if isinstance(ins, LoDTensor) else ins
    if not isinstance(ins_tag, LoDTensor) or not ins_tag.levels:
        raise LoDError("filter_by_instag: Ins_tag has no LoD; expected one sequence of tags per instance")
    tag_offsets, tags = ins_tag.levels[-1], host(ins_tag.data).reshape(-1)
    wanted = set(host(filter_tag).reshape(-1).tolist())
    offsets = _instances(ins, is_lod, tag_offsets.size - 1)
    kept = [i for i in range(tag_offsets.size - 1) if wanted & set(tags[tag_offsets[i] : tag_offsets[i + 1]].tolist())]
    if not kept:
        out = full(xp, (1, rows.shape[1]), out_val_if_empty, rows.dtype)
        index_map = xp.asarray(np.array([[0, 1, 1]], dtype=np.int64))
        one = [np.array([0, 1])]
        return (
            LoDTensor(out, [np.array([0, 1])]),
            LoDTensor(xp.zeros((1, 1), dtype=xp.float32), one),
            LoDTensor(index_map, one),
        )
    starts, lengths = offsets[kept], offsets[np.array(kept) + 1] - offsets[kept]
    out_offsets = np.concatenate([[0], np.cumsum(lengths)])
    picked = np.concatenate([np.arange(s, s + n) for s, n in zip(starts, lengths)]).astype(np.int64)
    out = xp.take(rows, xp.asarray(picked), axis=0)
    index_map = np.stack([out_offsets[:-1], starts, lengths], axis=1).astype(np.int64)
    per_instance = [np.arange(len(kept) + 1)]
    return (
        LoDTensor(out, [out_offsets]),
        LoDTensor(xp.ones((len(kept), 1), dtype=xp.float32), per_instance),
        LoDTensor(xp.asarray(index_map), per_instance),
    )


def _filter_by_instag_grad(xp, ins, loss_weight, index_map, dout, *, is_lod, out_val_if_empty):
    """Each kept instance's rows of Out's gradient back at its rows of Ins, zero elsewhere."""
    rows = ins.data if isinstance(ins, LoDTensor) else ins
    dout = dout.data if isinstance(dout, LoDTensor) else dout
    weights = host(loss_weight.data if isinstance(loss_weight, LoDTensor) else loss_weight).reshape(-1)
    source = np.full(rows.shape[0], -1, dtype=np.int64)  # the row of dout each row of Ins takes
    if not (weights.size == 1 and weights[0] == 0):
        for out_start, ins_start, n in host(index_map.data if isinstance(index_map, LoDTensor) else index_map):
            source[ins_start : ins_start + n] = np.arange(out_start, out_start + n)
    padded = xp.concat([xp.zeros((1, rows.shape[1]), dtype=dout.dtype), dout], axis=0)
    dins = xp.take(padded, xp.asarray(source + 1), axis=0)
    return ins.with_data(dins) if isinstance(ins, LoDTensor) else dins


_INSTAG_ATTRS = {"is_lod": True, "out_val_if_empty": 0}
register_op(
    "filter_by_instag",
    inputs=("Ins", "Ins_tag", "Filter_tag"),
    outputs=("Out", "LossWeight", "IndexMap"),
    attrs=_INSTAG_ATTRS,
    infer_shape=_instag_infer,
    grad=make_grad_op(inputs=("Ins", "LossWeight", "IndexMap", "Out@GRAD"), outputs=("Ins@GRAD",)),
    kernel=_filter_by_instag,
    takes_lod=True,
)
register_op(
    "filter_by_instag_grad",
    inputs=("Ins", "LossWeight", "IndexMap", "Out@GRAD"),
    outputs=("Ins@GRAD",),
    attrs=_INSTAG_ATTRS,
    kernel=_filter_by_instag_grad,
    takes_lod=True,
)
