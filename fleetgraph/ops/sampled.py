"""Training losses that score a few classes of a large vocabulary instead of all of them: nce
(noise-contrastive estimation against sampled negative classes) and hierarchical_sigmoid (a binary
tree of logistic classifiers, Paddle's complete tree or a custom one).

Both pick rows of their weight table by class ids. The ids are small integer tables computed on the
host (sampled classes, tree paths); the kernels gather the rows they name, and their weight
gradients sum the rows back per distinct id through a padded gather (no scatter-add, so the array
API suffices), dense or, with `is_sparse`, as SelectedRows of those ids.
"""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ..ir.registry import infer_grad_shapes
from ._xp import astype, reshape, total
from ._xp import host as _host
from .rng import generator_for
from .selected_rows import SelectedRows
from .sequence_rows import _padded, _segments

_CHUNK = 16  # rows summed in one padded gather: bounds its padding by the number of rows


def _sum_rows(xp, ids: np.ndarray, rows):
    """(distinct ids sorted, the sum of `rows` [M, D] over each id's entries of `ids` [M]): the rows
    ordered by id, then each id's run summed in chunks of _CHUNK rows, the chunks' sums again, until
    one sum per id is left. A frequent id (a common word, the log-uniform sampler's class 0) costs
    more rounds, not a padded copy of M rows for every id."""
    order = np.argsort(ids, kind="stable")
    ordered = ids[order]
    starts = np.flatnonzero(np.concatenate([[ids.size > 0], ordered[1:] != ordered[:-1]]))
    offsets = np.append(starts, ids.size)
    values = xp.take(rows, xp.asarray(order), axis=0)
    while True:
        lengths = np.diff(offsets)
        chunks = -(-lengths // _CHUNK)  # each run's chunks, a run of _CHUNK rows or fewer is one
        within = np.arange(chunks.sum()) - np.repeat(np.cumsum(chunks) - chunks, chunks)  # chunk k of its run
        first = np.repeat(offsets[:-1], chunks) + _CHUNK * within
        grid, valid, _ = _segments(np.append(first, offsets[-1]), min(_CHUNK, int(lengths.max(initial=0))))
        values = total(xp, _padded(xp, values, grid, valid, 0.0), axis=1)
        if chunks.sum() == lengths.size:
            return ordered[starts], values
        offsets = np.append(0, np.cumsum(chunks))


def _weight_grad(xp, ids: np.ndarray, rows, height: int, sparse: bool):
    """The gradient of a [height, D] table whose rows `ids` received `rows`: SelectedRows of the
    distinct ids (Paddle's sorted rows) or the dense table, zero where no id points."""
    distinct, sums = _sum_rows(xp, ids, rows)
    if sparse:
        return SelectedRows(distinct.astype(np.int64), sums, height)
    slot = np.zeros(height, dtype=np.int64)
    slot[distinct] = np.arange(1, distinct.size + 1)
    zero = xp.zeros((1, rows.shape[1]), dtype=rows.dtype)
    return xp.take(xp.concat([zero, sums], axis=0), xp.asarray(slot), axis=0)


def _rows_of(xp, table, ids: np.ndarray):
    """table[ids] for a host id array of any shape: shape ids.shape + table.shape[1:]."""
    flat = xp.take(table, xp.asarray(ids.reshape(-1)), axis=0)
    return reshape(xp, flat, (*ids.shape, *table.shape[1:]))


def _flat(xp, a):
    return None if a is None else reshape(xp, a, (-1,))


# -- nce ------------------------------------------------------------------------------------------

UNIFORM, LOG_UNIFORM, CUSTOM_DIST = 0, 1, 2  # Paddle's `sampler` attr


def _nce_infer(ctx: InferContext) -> None:
    x, label, w = ctx.check_rank("Input", (2,)), ctx.check_rank("Label", (1, 2)), ctx.check_rank("Weight", (2,))
    classes, negatives = ctx.attr("num_total_classes"), ctx.attr("num_neg_samples")
    if ctx.input_dtype("Label") != "int64":
        raise ctx.error(f"Label '{ctx.op.inputs['Label'][0]}' is {ctx.input_dtype('Label')}; expected int64 class ids")
    if w[0] >= 0 and w[0] != classes:
        raise ctx.error(f"num_total_classes {classes}: expected Weight's rows, {fmt_shape(w)}")
    if x[1] >= 0 and w[1] >= 0 and x[1] != w[1]:
        raise ctx.error(f"Input {fmt_shape(x)} and Weight {fmt_shape(w)}: expected rows of one width")
    if x[0] >= 0 and label[0] >= 0 and x[0] != label[0]:
        raise ctx.error(f"Input {fmt_shape(x)} and Label {fmt_shape(label)}: expected one label row per input row")
    if ctx.has_input("Bias") and ctx.input_shape("Bias")[0] not in (classes, -1):
        raise ctx.error(f"Bias {fmt_shape(ctx.input_shape('Bias'))}: expected one value per class, {classes}")
    custom = ctx.attr("custom_neg_classes")
    if custom and len(custom) != negatives:
        raise ctx.error(f"custom_neg_classes has {len(custom)} classes; expected num_neg_samples, {negatives}")
    sampler = ctx.attr("sampler")
    if sampler not in (UNIFORM, LOG_UNIFORM, CUSTOM_DIST):
        raise ctx.error(f"sampler {sampler}: expected 0 (uniform), 1 (log_uniform) or 2 (custom_dist)")
    tables = ("CustomDistProbs", "CustomDistAlias", "CustomDistAliasProbs")
    if sampler == CUSTOM_DIST and not all(ctx.has_input(s) for s in tables):
        raise ctx.error(f"sampler 2 (custom_dist) samples from its tables; expected inputs {', '.join(tables)}")
    true = label[1] if len(label) == 2 else 1
    width = -1 if true < 0 else true + negatives
    ctx.set_output("Cost", (x[0], 1), ctx.input_dtype("Input"))
    ctx.set_output("SampleLogits", (x[0], width), ctx.input_dtype("Input"))
    ctx.set_output("SampleLabels", (x[0], width), "int64")


def _negatives(rows: int, negatives: int, classes: int, sampler: int, tables, rng) -> np.ndarray:
    """[rows, negatives] classes drawn as Paddle's samplers draw them (math/sampler.cc)."""
    index = rng.fresh(rows * negatives)
    u = rng.uniform01(index, 0)
    if sampler == UNIFORM:
        drawn = np.floor(u * classes).astype(np.int64)
    elif sampler == LOG_UNIFORM:  # inverse transform of P(v) ~ 1 / (v + 1), folded into [0, classes - 1)
        drawn = (np.exp(u * np.log(classes)).astype(np.int64) - 1) % max(classes - 1, 1)
    else:  # Walker's alias method: a column uniformly, then it or its alias
        _, alias, alias_probs = tables
        column = np.floor(u * classes).astype(np.int64)
        to_alias = (rng.uniform01(index, 1) > alias_probs[column]) & (alias[column] != -1)
        drawn = np.where(to_alias, alias[column], column)
    return drawn.reshape(rows, negatives)


def _noise(xp, labels: np.ndarray, true: int, dtype, classes: int, negatives: int, sampler: int, tables):
    """k P(c) of each sampled class under the sampler (Paddle's Sampler::Probability times
    num_neg_samples), and which columns hold the true classes."""
    if sampler == UNIFORM:
        p = np.full(labels.shape, 1.0 / classes)
    elif sampler == LOG_UNIFORM:
        p = np.log((labels + 2.0) / (labels + 1.0)) / np.log(classes)
    else:
        p = tables[0].astype(np.float64)[labels]
    return astype(xp, xp.asarray(p * negatives), dtype), xp.asarray(np.arange(labels.shape[1]) < true)


def _tables(probs, alias, alias_probs, classes: int):
    if probs is None:
        return None
    tables = tuple(_host(t).reshape(-1) for t in (probs, alias, alias_probs))
    if any(t.size != classes for t in tables):
        sizes = [t.size for t in tables]
        raise ValueError(f"custom_dist tables have {sizes} entries; expected num_total_classes, {classes}, each")
    return tables


def _nce(
    xp,
    x,
    label,
    weight,
    bias,
    sample_weight,
    probs,
    alias,
    alias_probs,
    *,
    num_total_classes,
    num_neg_samples,
    sampler,
    seed,
    custom_neg_classes,
    rng,
    **_,
):
    """SampleLabels: each row's true classes, then num_neg_samples negatives (custom_neg_classes,
    else drawn; a seeded op draws from its seed alone, as Paddle's sampler, so every run and eager
    mode draw the same). SampleLogits: sigmoid(x . w_c + b_c) of each. Cost: the NCE loss of each row,
    -log(o / (o + k P(c))) for true classes and -log(k P(c) / (o + k P(c))) for negatives."""
    tables = _tables(probs, alias, alias_probs, num_total_classes)
    true = _host(label).reshape(x.shape[0], -1).astype(np.int64)
    if custom_neg_classes:
        drawn = np.broadcast_to(np.asarray(custom_neg_classes, dtype=np.int64), (true.shape[0], num_neg_samples))
    else:
        stream = generator_for(seed, "nce") if seed else rng
        drawn = _negatives(true.shape[0], num_neg_samples, num_total_classes, sampler, tables, stream)
    labels = np.concatenate([true, drawn], axis=1)
    if labels.size and (labels.min() < 0 or labels.max() >= num_total_classes):
        raise IndexError(f"class ids from {labels.min()} to {labels.max()}; expected them in [0, {num_total_classes})")
    logits = xp.matmul(_rows_of(xp, weight, labels), x[:, :, None])[:, :, 0]
    if bias is not None:
        logits = logits + _rows_of(xp, _flat(xp, bias), labels)
    o = 1.0 / (1.0 + xp.exp(-logits))
    b, is_true = _noise(xp, labels, true.shape[1], x.dtype, num_total_classes, num_neg_samples, sampler, tables)
    cost = -xp.log(xp.where(is_true, o, b) / (o + b))
    if sample_weight is not None:
        cost = cost * _flat(xp, sample_weight)[:, None]
    return total(xp, cost, axis=1, keepdims=True), o, xp.asarray(labels)


def _nce_grad(
    xp,
    x,
    label,
    bias,
    weight,
    logits,
    sample_labels,
    sample_weight,
    probs,
    alias,
    alias_probs,
    dcost,
    *,
    num_total_classes,
    num_neg_samples,
    sampler,
    is_sparse,
    **_,
):
    """The gradient of Cost through each sample's logit (Paddle's nce_grad); Weight@GRAD is
    SelectedRows of the sampled classes with is_sparse, Bias@GRAD always dense, as Paddle's."""
    tables = _tables(probs, alias, alias_probs, num_total_classes)
    labels = _host(sample_labels).astype(np.int64)
    true = labels.shape[1] - num_neg_samples
    o = logits
    b, is_true = _noise(xp, labels, true, x.dtype, num_total_classes, num_neg_samples, sampler, tables)
    g = xp.where(is_true, (b / (o + b)) * (o - 1.0), o * (1.0 - o) / (o + b)) * reshape(xp, dcost, (-1, 1))
    if sample_weight is not None:
        g = g * _flat(xp, sample_weight)[:, None]
    w_rows = _rows_of(xp, weight, labels)
    dx = xp.matmul(g[:, None, :], w_rows)[:, 0, :]
    ids = labels.reshape(-1)
    dw_rows = reshape(xp, g[:, :, None] * x[:, None, :], (ids.size, x.shape[1]))
    dw = _weight_grad(xp, ids, dw_rows, weight.shape[0], is_sparse)
    db = None
    if bias is not None:
        db = reshape(xp, _weight_grad(xp, ids, reshape(xp, g, (-1, 1)), bias.shape[0], False), bias.shape)
    return dx, db, dw


def _sparse_weight_grad_infer(slot: str):
    def infer(ctx: InferContext) -> None:
        infer_grad_shapes(ctx)
        if ctx.has_output(slot):
            var = ctx.output_vars(slot)[0]
            var.type = "selected_rows" if ctx.attr("is_sparse") else "dense_tensor"

    return infer


_PREFETCH_ATTRS = {"remote_prefetch": False, "trainer_id": 0, "height_sections": [], "epmap": [], "table_names": []}
_NCE_ATTRS = {
    "num_total_classes": 0,
    "num_neg_samples": 10,
    "sampler": UNIFORM,
    "seed": 0,
    "is_sparse": False,
    **_PREFETCH_ATTRS,
    "custom_neg_classes": [],
}
_CUSTOM_DIST = ("CustomDistProbs?", "CustomDistAlias?", "CustomDistAliasProbs?")
_NCE_GRAD_INPUTS = (
    "Input",
    "Label",
    "Bias?",
    "Weight",
    "SampleLogits",
    "SampleLabels",
    "SampleWeight?",
    *_CUSTOM_DIST,
    "Cost@GRAD",
)
register_op(
    "nce",
    inputs=("Input", "Label", "Weight", "Bias?", "SampleWeight?", *_CUSTOM_DIST),
    outputs=("Cost", "SampleLogits", "SampleLabels"),
    attrs=_NCE_ATTRS,
    infer_shape=_nce_infer,
    grad=make_grad_op(
        inputs=tuple(s.rstrip("?") for s in _NCE_GRAD_INPUTS), outputs=("Input@GRAD", "Bias@GRAD", "Weight@GRAD")
    ),
    kernel=_nce,
    random=True,
)
register_op(
    "nce_grad",
    inputs=_NCE_GRAD_INPUTS,
    outputs=("Input@GRAD", "Bias@GRAD", "Weight@GRAD"),
    attrs=_NCE_ATTRS,
    infer_shape=_sparse_weight_grad_infer("Weight@GRAD"),
    kernel=_nce_grad,
)

# -- hierarchical_sigmoid -------------------------------------------------------------------------


def _bit_length(n: int) -> int:
    """Paddle's FindLastSet: the 1-based index of the highest set bit (0 for 0)."""
    return int(n).bit_length()


def _codes(label, path_table, path_code, num_classes: int):
    """Host tables [N, L] of each row's path: the weight row of each node (`index`, 0 past the
    path), the branch taken (`bit`) and whether the node is on the path (`valid`). The default tree
    codes class c as c + num_classes, whose prefixes name the nodes and whose bits the branches
    (Paddle's SimpleCode); a custom tree reads them from PathTable and PathCode, a path ending at
    its first negative entry."""
    ids = _host(label).reshape(-1).astype(np.int64)
    if path_table is None:
        code = ids + num_classes
        shifts = np.arange(_bit_length(num_classes - 1))
        index = (code[:, None] >> (shifts + 1)) - 1
        bit = (code[:, None] >> shifts) & 1
        valid = index >= 0
    else:
        index, bit = _host(path_table).astype(np.int64), _host(path_code).astype(np.int64)
        valid = np.cumprod(index >= 0, axis=1).astype(bool)
    return np.where(valid, index, 0), (bit != 0) & valid, valid


def _hsigmoid_infer(ctx: InferContext) -> None:
    x, w = ctx.check_rank("X", (2,)), ctx.check_rank("W", (2,))
    if x[1] >= 0 and w[1] >= 0 and x[1] != w[1]:
        raise ctx.error(f"X {fmt_shape(x)} and W {fmt_shape(w)}: expected rows of one width")
    if ctx.has_input("PathTable") != ctx.has_input("PathCode"):
        raise ctx.error("a custom tree needs both PathTable and PathCode; expected both or neither")
    if ctx.has_input("PathTable"):
        width = ctx.check_rank("PathTable", (2,))[1]
    else:
        if ctx.attr("num_classes") < 2:
            raise ctx.error(f"num_classes {ctx.attr('num_classes')}: the default tree expects 2 or more")
        width = _bit_length(ctx.attr("num_classes") - 1)
    x_var = ctx.input_var("X")
    ctx.set_output("Out", (x[0], 1), x_var.dtype, lod_level=x_var.lod_level)
    ctx.set_output("PreOut", (x[0], width), x_var.dtype)
    ctx.set_output("W_Out", w, ctx.input_dtype("W"))


def _hsigmoid(xp, x, w, label, path_table, path_code, bias, *, num_classes, **_):
    """PreOut[i, j] = softplus(clip(x_i . w_node + b_node, -40, 40)) for node j of row i's path
    (softplus(0) past its end); Out[i] = sum_j PreOut[i, j] - sum of the pre-activations whose branch
    bit is 1: the cross entropy of every binary decision on the path (plus log 2 per node past its
    end, as Paddle's)."""
    index, bit, valid = _codes(label, path_table, path_code, num_classes)
    pre = xp.matmul(_rows_of(xp, w, index), x[:, :, None])[:, :, 0]
    if bias is not None:
        pre = pre + _rows_of(xp, _flat(xp, bias), index)
    pre = xp.clip(xp.where(xp.asarray(valid), pre, 0.0), -40.0, 40.0)
    chosen = total(xp, xp.where(xp.asarray(bit), pre, 0.0), axis=1, keepdims=True)
    pre_out = xp.log1p(xp.exp(pre))
    return total(xp, pre_out, axis=1, keepdims=True) - chosen, pre_out, w


def _hsigmoid_grad(xp, x, w, bias, label, path_table, path_code, pre_out, dout, *, num_classes, is_sparse, **_):
    """d pre-activation = (sigmoid - bit) * dOut on the path (Paddle's, which ignores the clip);
    W@GRAD is SelectedRows of the path's nodes with is_sparse."""
    index, bit, valid = _codes(label, path_table, path_code, num_classes)
    sigmoid = 1.0 - xp.exp(-pre_out)
    g = xp.where(xp.asarray(valid), (sigmoid - astype(xp, xp.asarray(bit), x.dtype)) * dout, 0.0)
    dx = xp.matmul(g[:, None, :], _rows_of(xp, w, index))[:, 0, :]
    on_path = np.flatnonzero(valid.reshape(-1))
    ids, positions = index.reshape(-1)[on_path], xp.asarray(on_path)
    flat_g = xp.take(reshape(xp, g, (-1, 1)), positions, axis=0)
    rows = flat_g * xp.take(x, xp.asarray(on_path // index.shape[1]), axis=0)
    dw = _weight_grad(xp, ids, rows, w.shape[0], is_sparse)
    db = None if bias is None else reshape(xp, _weight_grad(xp, ids, flat_g, bias.shape[0], False), bias.shape)
    return dx, dw, db


_HSIGMOID_ATTRS = {"num_classes": 2, **_PREFETCH_ATTRS, "is_sparse": False}
_HSIGMOID_GRAD_INPUTS = ("X", "W", "Bias?", "Label", "PathTable?", "PathCode?", "PreOut", "Out@GRAD")
register_op(
    "hierarchical_sigmoid",
    inputs=("X", "W", "Label", "PathTable?", "PathCode?", "Bias?"),
    outputs=("Out", "PreOut", "W_Out?"),
    attrs=_HSIGMOID_ATTRS,
    infer_shape=_hsigmoid_infer,
    grad=make_grad_op(
        inputs=tuple(s.rstrip("?") for s in _HSIGMOID_GRAD_INPUTS), outputs=("X@GRAD", "W@GRAD", "Bias@GRAD")
    ),
    kernel=_hsigmoid,
)
register_op(
    "hierarchical_sigmoid_grad",
    inputs=_HSIGMOID_GRAD_INPUTS,
    outputs=("X@GRAD", "W@GRAD", "Bias@GRAD"),
    attrs=_HSIGMOID_ATTRS,
    infer_shape=_sparse_weight_grad_infer("W@GRAD"),
    kernel=_hsigmoid_grad,
)
