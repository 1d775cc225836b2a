"""Cases for nn ops (conv2d, pool2d, batch_norm, dropout, embeddings) and metrics."""

from dataclasses import replace

import numpy as np

from . import CASES, case, positive, rand

# -- naive references: one loop per output element, written without the kernels' tricks ------------


def naive_conv2d(x, w, stride=(1, 1), pads=(0, 0, 0, 0), dil=(1, 1), groups=1):
    """Direct convolution; pads are [top, bottom, left, right]."""
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[1]), (pads[2], pads[3])))
    oh = (h + pads[0] + pads[1] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + pads[2] + pads[3] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    out = np.zeros((n, m, oh, ow))
    mg = m // groups
    for b in range(n):
        for o in range(m):
            g = o // mg
            for i in range(oh):
                for j in range(ow):
                    acc = 0.0
                    for ci in range(cg):
                        for p in range(kh):
                            for q in range(kw):
                                acc += (
                                    w[o, ci, p, q]
                                    * xp[b, g * cg + ci, i * stride[0] + p * dil[0], j * stride[1] + q * dil[1]]
                                )
                    out[b, o, i, j] = acc
    return out


def naive_pool2d(x, k, s, pads=(0, 0, 0, 0), kind="max", exclusive=True, ceil_mode=False):
    """Window loops as Paddle's CPU pooling: padding never wins a max, avg divides by the (clipped) window."""
    n, c, h, w = x.shape

    def size(d, kk, ss, p0, p1):
        span = d + p0 + p1 - kk
        return (span + ss - 1) // ss + 1 if ceil_mode else span // ss + 1

    oh, ow = size(h, k[0], s[0], pads[0], pads[1]), size(w, k[1], s[1], pads[2], pads[3])
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            h0, w0 = i * s[0] - pads[0], j * s[1] - pads[2]
            h1, w1 = min(h0 + k[0], h + pads[1]), min(w0 + k[1], w + pads[3])
            full = (h1 - h0) * (w1 - w0)
            win = x[:, :, max(h0, 0) : min(h1, h), max(w0, 0) : min(w1, w)]
            if kind == "max":
                out[:, :, i, j] = win.max(axis=(2, 3))
            else:
                out[:, :, i, j] = win.sum(axis=(2, 3)) / (win.shape[2] * win.shape[3] if exclusive else full)
    return out


def naive_adaptive_pool2d(x, out_hw, kind):
    n, c, h, w = x.shape
    out = np.zeros((n, c) + tuple(out_hw))
    for i in range(out_hw[0]):
        for j in range(out_hw[1]):
            h0, h1 = int(np.floor(i * h / out_hw[0])), int(np.ceil((i + 1) * h / out_hw[0]))
            w0, w1 = int(np.floor(j * w / out_hw[1])), int(np.ceil((j + 1) * w / out_hw[1]))
            win = x[:, :, h0:h1, w0:w1]
            out[:, :, i, j] = win.max(axis=(2, 3)) if kind == "max" else win.mean(axis=(2, 3))
    return out


def naive_batch_norm(x, scale, bias, mean, var, eps, channel_axis=1):
    """Per channel: (x - mean) / sqrt(var + eps) * scale + bias."""
    xc = np.moveaxis(x, channel_axis, -1)
    y = (xc - mean) / np.sqrt(var + eps) * scale + bias
    return np.moveaxis(y, -1, channel_axis)


def batch_stats(x, channel_axis=1):
    axes = tuple(a for a in range(x.ndim) if a != channel_axis)
    return x.mean(axis=axes), x.var(axis=axes)


def _bn_train_ref(X, Scale, Bias, Mean, Variance, epsilon, data_layout, **a):
    axis = 1 if data_layout == "NCHW" else X.ndim - 1
    m, v = batch_stats(X, axis)
    return {
        "Y": naive_batch_norm(X, Scale, Bias, m, v, epsilon, axis),
        "SavedMean": m,
        "SavedVariance": 1 / np.sqrt(v + epsilon),
    }


# -- conv2d ---------------------------------------------------------------------------------------

_conv_outputs = {"Output": 1}
case(
    "conv2d",
    {"Input": rand(2, 2, 4, 4), "Filter": rand(3, 2, 2, 2, seed=1)},
    outputs=_conv_outputs,
    reference=lambda Input, Filter, **a: {"Output": naive_conv2d(Input, Filter)},
)
case(
    "conv2d",
    {"Input": rand(1, 2, 5, 5), "Filter": rand(2, 2, 3, 3, seed=2)},
    outputs=_conv_outputs,
    attrs={"strides": [2, 2], "paddings": [1, 1]},
    name="stride_pad",
    reference=lambda Input, Filter, **a: {"Output": naive_conv2d(Input, Filter, (2, 2), (1, 1, 1, 1))},
)
case(
    "conv2d",
    {"Input": rand(1, 4, 5, 5), "Filter": rand(2, 2, 2, 2, seed=3)},
    outputs=_conv_outputs,
    attrs={"groups": 2, "dilations": [2, 2]},
    name="groups_dilation",
    reference=lambda Input, Filter, **a: {"Output": naive_conv2d(Input, Filter, dil=(2, 2), groups=2)},
)
case(
    "conv2d",
    {"Input": rand(1, 2, 4, 5), "Filter": rand(2, 2, 2, 3, seed=4)},
    outputs=_conv_outputs,
    attrs={"paddings": [1, 0, 0, 2], "strides": [1, 2]},
    name="asymmetric_pads",
    reference=lambda Input, Filter, **a: {"Output": naive_conv2d(Input, Filter, (1, 2), (1, 0, 0, 2))},
)
case(
    "conv2d",
    {"Input": rand(1, 2, 5, 5), "Filter": rand(2, 2, 2, 2, seed=5)},
    outputs=_conv_outputs,
    attrs={"padding_algorithm": "SAME", "strides": [2, 2]},
    name="same",
    reference=lambda Input, Filter, **a: {"Output": naive_conv2d(Input, Filter, (2, 2), (0, 1, 0, 1))},
)
case(
    "conv2d",
    {"Input": rand(1, 2, 4, 4), "Filter": rand(2, 2, 3, 3, seed=6)},
    outputs=_conv_outputs,
    attrs={"padding_algorithm": "VALID", "paddings": [5, 5]},
    name="valid",
    reference=lambda Input, Filter, **a: {"Output": naive_conv2d(Input, Filter)},
)

# -- pool2d ---------------------------------------------------------------------------------------

case(
    "pool2d",
    {"X": rand(2, 2, 4, 4)},
    attrs={"ksize": [2, 2], "strides": [2, 2]},
    name="max",
    reference=lambda X, **a: {"Out": naive_pool2d(X, (2, 2), (2, 2))},
)
case(
    "pool2d",
    {"X": rand(1, 2, 5, 5)},
    attrs={"ksize": [3, 3], "strides": [2, 2], "paddings": [1, 1]},
    name="max_padded",
    reference=lambda X, **a: {"Out": naive_pool2d(X, (3, 3), (2, 2), (1, 1, 1, 1))},
)
case(
    "pool2d",
    {"X": rand(1, 2, 5, 5)},
    attrs={"pooling_type": "avg", "ksize": [3, 3], "strides": [2, 2], "paddings": [1, 1]},
    name="avg_exclusive",
    reference=lambda X, **a: {"Out": naive_pool2d(X, (3, 3), (2, 2), (1, 1, 1, 1), "avg")},
)
case(
    "pool2d",
    {"X": rand(1, 2, 5, 5)},
    attrs={"pooling_type": "avg", "ksize": [3, 3], "strides": [2, 2], "paddings": [1, 1], "exclusive": False},
    name="avg_inclusive",
    reference=lambda X, **a: {"Out": naive_pool2d(X, (3, 3), (2, 2), (1, 1, 1, 1), "avg", exclusive=False)},
)
case(
    "pool2d",
    {"X": rand(1, 2, 5, 5)},
    attrs={"ksize": [2, 2], "strides": [2, 2], "ceil_mode": True},
    name="max_ceil_mode",
    reference=lambda X, **a: {"Out": naive_pool2d(X, (2, 2), (2, 2), ceil_mode=True)},
)
case(
    "pool2d",
    {"X": rand(1, 2, 5, 5)},
    attrs={"pooling_type": "avg", "ksize": [2, 2], "strides": [2, 2], "ceil_mode": True, "exclusive": False},
    name="avg_ceil_mode",
    reference=lambda X, **a: {"Out": naive_pool2d(X, (2, 2), (2, 2), kind="avg", exclusive=False, ceil_mode=True)},
)
case(
    "pool2d",
    {"X": rand(2, 3, 3, 3)},
    attrs={"pooling_type": "avg", "global_pooling": True},
    name="global_avg",
    reference=lambda X, **a: {"Out": X.mean(axis=(2, 3), keepdims=True)},
)
case(
    "pool2d",
    {"X": rand(2, 3, 3, 3)},
    attrs={"global_pooling": True},
    name="global_max",
    reference=lambda X, **a: {"Out": X.max(axis=(2, 3), keepdims=True)},
)
case(
    "pool2d",
    {"X": rand(1, 2, 4, 6)},
    attrs={"pooling_type": "avg", "adaptive": True, "ksize": [2, 3]},
    name="adaptive_even",
    reference=lambda X, **a: {"Out": naive_adaptive_pool2d(X, (2, 3), "avg")},
)
case(
    "pool2d",
    {"X": rand(1, 2, 5, 5)},
    attrs={"pooling_type": "avg", "adaptive": True, "ksize": [3, 2]},
    name="adaptive_uneven_avg",
    reference=lambda X, **a: {"Out": naive_adaptive_pool2d(X, (3, 2), "avg")},
)
case(
    "pool2d",
    {"X": rand(1, 2, 5, 5)},
    attrs={"adaptive": True, "ksize": [3, 2]},
    name="adaptive_uneven_max",
    reference=lambda X, **a: {"Out": naive_adaptive_pool2d(X, (3, 2), "max")},
)
case(
    "pool2d",
    {"X": rand(1, 2, 5, 5)},
    attrs={"pooling_type": "avg", "adaptive": True, "ksize": [1, 1]},
    name="adaptive_1x1",
    reference=lambda X, **a: {"Out": X.mean(axis=(2, 3), keepdims=True)},
)
case(
    "pool2d",
    {"X": rand(1, 2, 5, 5)},
    attrs={"ksize": [2, 2], "strides": [2, 2], "padding_algorithm": "SAME"},
    name="max_same",
    reference=lambda X, **a: {"Out": naive_pool2d(X, (2, 2), (2, 2), (0, 1, 0, 1))},
)

# -- batch_norm -----------------------------------------------------------------------------------

_bn_outputs = {"Y": 1, "SavedMean": 1, "SavedVariance": 1}
_bn_stats = {"Mean": rand(3, seed=8) * 0.1, "Variance": positive(3, seed=9)}
case(
    "batch_norm",
    {"X": rand(2, 3, 2, 2), "Scale": positive(3, seed=1), "Bias": rand(3, seed=2), **_bn_stats},
    outputs=_bn_outputs,
    loss_outputs=("Y",),
    no_grad=("Mean", "Variance"),
    name="nchw_train",
    reference=_bn_train_ref,
)
case(
    "batch_norm",
    {"X": rand(5, 3), "Scale": positive(3, seed=3), "Bias": rand(3, seed=4), **_bn_stats},
    outputs=_bn_outputs,
    loss_outputs=("Y",),
    no_grad=("Mean", "Variance"),
    name="rank2_train",
    reference=_bn_train_ref,
)
case(
    "batch_norm",
    {"X": rand(2, 2, 2, 3), "Scale": positive(3, seed=5), "Bias": rand(3, seed=6), **_bn_stats},
    attrs={"data_layout": "NHWC"},
    outputs=_bn_outputs,
    loss_outputs=("Y",),
    no_grad=("Mean", "Variance"),
    name="nhwc_train",
    reference=_bn_train_ref,
)
for _mode in ({"is_test": True}, {"use_global_stats": True}):
    case(
        "batch_norm",
        {"X": rand(2, 3, 2, 2), "Scale": positive(3, seed=7), "Bias": rand(3, seed=8), **_bn_stats},
        attrs=_mode,
        outputs=_bn_outputs,
        loss_outputs=("Y",),
        no_grad=("Mean", "Variance"),
        name=next(iter(_mode)),
        reference=lambda X, Scale, Bias, Mean, Variance, epsilon, **a: {
            "Y": naive_batch_norm(X, Scale, Bias, Mean, Variance, epsilon),
            "SavedMean": Mean,
            "SavedVariance": 1 / np.sqrt(Variance + epsilon),
        },
    )

case(
    "batch_norm",
    {"X": rand(2, 3, 2, 1, 2), "Scale": positive(3, seed=10), "Bias": rand(3, seed=11), **_bn_stats},
    outputs=_bn_outputs,
    loss_outputs=("Y",),
    no_grad=("Mean", "Variance"),
    name="ncdhw_train",
    reference=_bn_train_ref,
)
# In a job of one process sync_batch_norm is batch_norm: the same cases (over ranks: test_sync_batch_norm.py).
for _case in list(CASES["batch_norm"]):
    CASES.setdefault("sync_batch_norm", []).append(replace(_case, op_type="sync_batch_norm"))

# -- dropout (deterministic settings here; random masks in test_ops_nn.py) -------------------------

_drop_outputs = {"Out": 1, "Mask": 1}
case(
    "dropout",
    {"X": rand(3, 4)},
    attrs={"is_test": True, "dropout_prob": 0.3},
    name="test_downgrade",
    reference=lambda X, dropout_prob, **a: {"Out": X * (1 - dropout_prob)},
)
case(
    "dropout",
    {"X": rand(3, 4)},
    attrs={"is_test": True, "dropout_prob": 0.3, "dropout_implementation": "upscale_in_train"},
    name="test_upscale",
    reference=lambda X, **a: {"Out": X},
)
case(
    "dropout",
    {"X": rand(3, 4)},
    attrs={"dropout_prob": 0.0, "fix_seed": True, "seed": 3},
    name="train_keep_all",
    outputs=_drop_outputs,
    loss_outputs=("Out",),
    reference=lambda X, **a: {"Out": X, "Mask": np.ones(X.shape, dtype=np.uint8)},
)
case(
    "dropout",
    {"X": rand(3, 4)},
    attrs={"dropout_prob": 1.0, "fix_seed": True, "seed": 3, "dropout_implementation": "upscale_in_train"},
    name="train_drop_all",
    outputs=_drop_outputs,
    loss_outputs=("Out",),
    reference=lambda X, **a: {"Out": np.zeros_like(X), "Mask": np.zeros(X.shape, dtype=np.uint8)},
)

# -- lookup_table, lookup_table_v2 ----------------------------------------------------------------

_table = rand(6, 3, seed=11)
_ids = np.array([[[1], [4]], [[4], [0]], [[5], [1]]], dtype=np.int64)  # [3, 2, 1], repeats on purpose


def _embed(W, ids, padding_idx):
    out = W[ids]
    return np.where((ids == padding_idx)[..., None] & (padding_idx != -1), 0.0, out)


case(
    "lookup_table",
    {"W": _table, "Ids": _ids},
    no_grad=("Ids",),
    reference=lambda W, Ids, padding_idx, **a: {"Out": _embed(W, Ids[..., 0], padding_idx)},
)
case(
    "lookup_table",
    {"W": _table, "Ids": _ids},
    attrs={"padding_idx": 4},
    no_grad=("Ids",),
    name="padding_idx",
    reference=lambda W, Ids, padding_idx, **a: {"Out": _embed(W, Ids[..., 0], padding_idx)},
)
case(
    "lookup_table_v2",
    {"W": _table, "Ids": _ids[..., 0]},
    no_grad=("Ids",),
    reference=lambda W, Ids, padding_idx, **a: {"Out": _embed(W, Ids, padding_idx)},
)
case(
    "lookup_table_v2",
    {"W": _table, "Ids": _ids[..., 0].astype(np.int32)},
    attrs={"padding_idx": 1},
    no_grad=("Ids",),
    name="int32_padding_idx",
    reference=lambda W, Ids, padding_idx, **a: {"Out": _embed(W, Ids, padding_idx)},
)

# -- metrics --------------------------------------------------------------------------------------


def _top_k_ref(X, k):
    order = np.array([sorted(range(X.shape[-1]), key=lambda j: -row[j])[:k] for row in X.reshape(-1, X.shape[-1])])
    idx = order.reshape(X.shape[:-1] + (k,))
    return {"Out": np.take_along_axis(X, idx, -1), "Indices": idx}


case(
    "top_k",
    {"X": rand(3, 5)},
    attrs={"k": 2},
    outputs={"Out": 1, "Indices": 1},
    loss_outputs=("Out",),
    reference=_top_k_ref,
)
case(
    "top_k",
    {"X": rand(2, 2, 4)},
    attrs={"k": 4},
    outputs={"Out": 1, "Indices": 1},
    loss_outputs=("Out",),
    name="rank3_all",
    reference=_top_k_ref,
)


def _top_k_v2_ref(X, k, axis, largest, sorted):
    moved = np.moveaxis(X, axis, -1)
    out = _top_k_ref(moved if largest else -moved, k)
    idx = np.moveaxis(out["Indices"], -1, axis)
    return {"Out": np.take_along_axis(X, idx, axis), "Indices": idx}


case(
    "top_k_v2",
    {"X": rand(3, 5)},
    attrs={"k": 2, "axis": -1, "largest": True, "sorted": True},
    outputs={"Out": 1, "Indices": 1},
    loss_outputs=("Out",),
    reference=_top_k_v2_ref,
)
case(
    "top_k_v2",
    {"X": rand(4, 3, 2)},
    attrs={"k": 3, "axis": 0, "largest": False, "sorted": True},
    outputs={"Out": 1, "Indices": 1},
    loss_outputs=("Out",),
    name="axis0_smallest",
    reference=_top_k_v2_ref,
)


def _accuracy_ref(Out, Indices, Label):
    correct = sum(int(Label[i, 0] in Indices[i]) for i in range(len(Label)))
    return {
        "Accuracy": np.array([correct / len(Label)], dtype=np.float32),
        "Correct": np.array([correct], dtype=np.int32),
        "Total": np.array([len(Label)], dtype=np.int32),
    }


case(
    "accuracy",
    {
        "Out": rand(4, 2),
        "Indices": np.array([[0, 3], [1, 2], [2, 0], [4, 1]], dtype=np.int64),
        "Label": np.array([[3], [0], [2], [1]], dtype=np.int64),
    },
    outputs={"Accuracy": 1, "Correct": 1, "Total": 1},
    reference=_accuracy_ref,
)


def _auc_reference(Predict, Label, StatPos, StatNeg, **attrs):
    """Pairwise AUC: the share of (positive, negative) pairs ordered right, ties counting half, over
    the scores' buckets (n = num_thresholds)."""
    n = attrs["num_thresholds"]
    b = np.floor(Predict[:, 1] * n).astype(int)
    pos, neg = b[Label[:, 0] == 1], b[Label[:, 0] == 0]
    wins = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return {"AUC": np.array([wins / (len(pos) * len(neg))])}


_p = np.random.default_rng(3).uniform(size=12)
_labels = (np.arange(12) % 3 == 0).astype("int64").reshape(-1, 1)
case(
    "auc",
    {
        "Predict": np.stack([1 - _p, _p], axis=1),
        "Label": _labels,
        "StatPos": np.zeros((1, 11), "int64"),
        "StatNeg": np.zeros((1, 11), "int64"),
    },
    attrs={"num_thresholds": 10, "slide_steps": 0},
    outputs={"AUC": 1},
    reference=_auc_reference,
)
