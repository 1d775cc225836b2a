"""Neural-network layer ops: dropout and the lookup_table embeddings (conv, pool and norm have their own modules)."""

from __future__ import annotations

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ._xp import astype, contiguous, largest, mask, reshape, smallest
from .selected_rows import SelectedRows
from .sparse_table import SparseTable

# -- dropout --------------------------------------------------------------------------------------


def _dropout_infer(ctx: InferContext) -> None:
    x = ctx.input_var("X")
    if ctx.attr("dropout_implementation") not in ("downgrade_in_infer", "upscale_in_train"):
        raise ctx.error(
            f"dropout_implementation {ctx.attr('dropout_implementation')!r}: expected "
            "'downgrade_in_infer' or 'upscale_in_train'"
        )
    if not 0.0 <= ctx.attr("dropout_prob") <= 1.0:
        raise ctx.error(f"dropout_prob {ctx.attr('dropout_prob')}: expected a probability in [0, 1]")
    ctx.set_output("Out", x.shape, x.dtype, lod_level=x.lod_level)
    ctx.set_output("Mask", x.shape, "uint8")


def _kept_scale(p: float, implementation: str) -> float:
    """What a kept element is multiplied by in training (1/(1-p) when upscaling, 0 if nothing is kept)."""
    if implementation != "upscale_in_train":
        return 1.0
    return 1.0 / (1.0 - p) if p < 1.0 else 0.0


def _dropout(xp, x, *, dropout_prob, is_test, fix_seed, seed, dropout_implementation, rng):
    if is_test:
        keep = 1.0 if dropout_implementation == "upscale_in_train" else 1.0 - dropout_prob
        return x * x.dtype.type(keep), None
    mask = xp.asarray(rng.uniform(size=x.shape) >= dropout_prob).astype("uint8")
    return x * mask * x.dtype.type(_kept_scale(dropout_prob, dropout_implementation)), mask


def _dropout_grad(xp, mask, dout, *, dropout_prob, is_test, fix_seed, seed, dropout_implementation):
    if is_test:
        keep = 1.0 if dropout_implementation == "upscale_in_train" else 1.0 - dropout_prob
        return dout * dout.dtype.type(keep)
    if mask is None:
        raise ValueError("training-mode dropout_grad needs the forward op's Mask output; bind Mask in dropout")
    return dout * mask * dout.dtype.type(_kept_scale(dropout_prob, dropout_implementation))


def _dropout_grad_infer(ctx: InferContext) -> None:
    g = ctx.input_var("Out@GRAD")
    ctx.set_output("X@GRAD", g.shape, g.dtype)


_DROPOUT_ATTRS = {
    "dropout_prob": 0.5,
    "is_test": False,
    "fix_seed": False,
    "seed": 0,
    "dropout_implementation": "downgrade_in_infer",
}
register_op(
    "dropout",
    inputs=("X",),
    outputs=("Out", "Mask?"),
    attrs=_DROPOUT_ATTRS,
    infer_shape=_dropout_infer,
    grad=make_grad_op(inputs=("Mask", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_dropout,
    random=True,
)
register_op(
    "dropout_grad",
    inputs=("Mask?", "Out@GRAD"),
    outputs=("X@GRAD",),
    attrs=_DROPOUT_ATTRS,
    infer_shape=_dropout_grad_infer,
    kernel=_dropout_grad,
)

# -- lookup_table, lookup_table_v2 ----------------------------------------------------------------


def _lookup_infer(v2: bool):
    def infer(ctx: InferContext) -> None:
        w, ids = ctx.input_var("W"), ctx.input_var("Ids")
        ctx.check_rank("W", (2,))
        if ids.dtype not in ("int64", "int32"):
            raise ctx.error(f"Ids '{ids.name}': expected int64 ids, got {ids.dtype}")
        if not v2 and (not ids.shape or ids.shape[-1] not in (1, -1)):
            raise ctx.error(
                f"Ids '{ids.name}' {fmt_shape(ids.shape)}: expected a last dim of 1, "
                "as lookup_table takes [..., 1] ids (lookup_table_v2 takes any shape)"
            )
        lead = ids.shape if v2 else ids.shape[:-1]
        ctx.set_output("Out", tuple(lead) + (w.shape[1],), w.dtype, lod_level=ids.lod_level)

    return infer


def _flat_ids(xp, w, ids, v2: bool):
    flat = astype(xp, reshape(xp, ids, (-1,)), "int64")
    low, high = (int(smallest(xp, flat)), int(largest(xp, flat))) if flat.shape[0] else (0, 0)
    if low < 0 or high >= w.shape[0]:
        raise IndexError(f"ids must lie in [0, {w.shape[0]}); got ids from {low} to {high}")
    lead = ids.shape if v2 else ids.shape[:-1]
    return flat, tuple(lead) + (w.shape[1],)


def _not_padding(xp, w, flat, padding_idx):
    """[n, 1] weights that zero the rows looked up at padding_idx (-1: no padding row)."""
    return mask(xp, flat != padding_idx, w)[:, None] if padding_idx != -1 else None


def _lookup(v2: bool):
    def kernel(xp, w, ids, *, is_sparse, is_distributed, padding_idx, remote_prefetch):
        flat, shape = _flat_ids(xp, w, ids, v2)
        out = w.lookup(flat) if isinstance(w, SparseTable) else xp.take(w, flat, axis=0)
        keep = _not_padding(xp, w, flat, padding_idx)
        return reshape(xp, out if keep is None else out * keep, shape)

    return kernel


def _lookup_grad(v2: bool):
    def kernel(xp, w, ids, dout, *, is_sparse, is_distributed, padding_idx, remote_prefetch):
        flat, _ = _flat_ids(xp, w, ids, v2)
        rows = reshape(xp, dout, (flat.shape[0], w.shape[1]))
        keep = _not_padding(xp, dout, flat, padding_idx)
        rows = rows if keep is None else rows * keep
        if is_sparse:
            return SelectedRows(flat, contiguous(xp, rows), w.shape[0])
        if isinstance(w, SparseTable):
            raise TypeError("a sparse table's gradient must be sparse; expected is_sparse=True")
        dw = xp.zeros_like(w)
        xp.add.at(dw, flat, rows)
        return dw

    return kernel


def _lookup_grad_infer(ctx: InferContext) -> None:
    w = ctx.input_var("W")
    ctx.set_output("W@GRAD", w.shape, w.dtype, type="selected_rows" if ctx.attr("is_sparse") else "dense_tensor")


_LOOKUP_ATTRS = {"is_sparse": False, "is_distributed": False, "padding_idx": -1, "remote_prefetch": False}
for _name, _v2 in (("lookup_table", False), ("lookup_table_v2", True)):
    register_op(
        _name,
        inputs=("W", "Ids"),
        outputs=("Out",),
        attrs=_LOOKUP_ATTRS,
        infer_shape=_lookup_infer(_v2),
        grad=make_grad_op(inputs=("W", "Ids", "Out@GRAD"), outputs=("W@GRAD",)),
        kernel=_lookup(_v2),
    )
    register_op(
        _name + "_grad",
        inputs=("W", "Ids", "Out@GRAD"),
        outputs=("W@GRAD",),
        attrs=_LOOKUP_ATTRS,
        infer_shape=_lookup_grad_infer,
        kernel=_lookup_grad(_v2),
    )
