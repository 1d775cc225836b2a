"""Registry cases for the ops of ops/projection.py; the references are Paddle 1.8's unit tests'
loops (test_bilinear_tensor_product_op.py, test_row_conv_op.py, test_im2sequence_op.py,
test_add_position_encoding_op.py)."""

import numpy as np

from fleetgraph.ops.lod_tensor import LoDTensor, create_lod_tensor

from . import NOT_EXPORTED, case, rand


def ref_bilinear(X, Y, Weight, Bias=None, **a):
    out = np.zeros((X.shape[0], Weight.shape[0]))
    for n in range(X.shape[0]):
        for i in range(Weight.shape[0]):
            out[n, i] = X[n] @ Weight[i] @ Y[n]
    return {"Out": out if Bias is None else out + Bias}


case(
    "bilinear_tensor_product",
    {"X": rand(3, 4), "Y": rand(3, 5, seed=1), "Weight": rand(2, 4, 5, seed=2), "Bias": rand(1, 2, seed=3)},
    reference=ref_bilinear,
)
case(
    "bilinear_tensor_product",
    {"X": rand(2, 3, seed=4), "Y": rand(2, 2, seed=5), "Weight": rand(3, 3, 2, seed=6)},
    name="no_bias",
    reference=ref_bilinear,
)


def ref_row_conv(X, Filter, **a):
    """test_row_conv_op.py's loop: each row adds the next rows of its sequence, weighted by Filter."""
    dense = not isinstance(X, LoDTensor)
    rows = X.reshape(-1, X.shape[-1]) if dense else X.data
    offsets = np.arange(0, rows.shape[0] + 1, X.shape[1]) if dense else X.levels[-1]
    out = np.zeros_like(rows)
    for start, end in zip(offsets[:-1], offsets[1:]):
        for t in range(start, end):
            for k in range(Filter.shape[0]):
                if t + k >= end:
                    break
                out[t] += rows[t + k] * Filter[k]
    return {"Out": out.reshape(X.shape) if dense else LoDTensor(out, X.levels)}


case(
    "row_conv",
    {"X": create_lod_tensor(rand(9, 3), [[2, 4, 0, 3]]), "Filter": rand(3, 3, seed=1)},
    reference=ref_row_conv,
)
case("row_conv", {"X": rand(2, 4, 3, seed=2), "Filter": rand(2, 3, seed=3)}, name="dense", reference=ref_row_conv)


def ref_position_encoding(X, *, alpha, beta, **a):
    """test_add_position_encoding_op.py's loop."""
    dense = not isinstance(X, LoDTensor)
    rows = X.reshape(-1, X.shape[-1]) if dense else X.data
    offsets = np.arange(0, rows.shape[0] + 1, X.shape[1]) if dense else X.levels[-1]
    half = rows.shape[1] // 2
    out = np.copy(rows)
    for start, end in zip(offsets[:-1], offsets[1:]):
        for j in range(end - start):
            for k in range(half):
                val = j / pow(10000.0, k * 1.0 / (half - 1)) if half > 1 else j / 10000.0
                out[start + j, k] = rows[start + j, k] * alpha + np.sin(val) * beta
                out[start + j, half + k] = rows[start + j, half + k] * alpha + np.cos(val) * beta
    return {"Out": out.reshape(X.shape) if dense else LoDTensor(out, X.levels)}


case(
    "add_position_encoding",
    {"X": rand(2, 5, 6)},
    attrs={"alpha": 0.6, "beta": 0.5},
    reference=ref_position_encoding,
)
case(
    "add_position_encoding",
    {"X": create_lod_tensor(rand(7, 4, seed=1), [[3, 0, 4]])},
    attrs={"alpha": 1.5, "beta": 2.0},
    name="lod",
    reference=ref_position_encoding,
)
case("add_position_encoding", {"X": rand(1, 3, 2, seed=2)}, name="one_pair", reference=ref_position_encoding)


def ref_im2sequence(X, Y=None, *, kernels, strides, paddings, out_stride, **a):
    """test_im2sequence_op.py's loops over output positions; with Y, each image's real size."""
    n, c, h, w = X.shape
    up, left, down, right = paddings
    padded = np.pad(X, ((0, 0), (0, 0), (up, down), (left, right)))
    oh = (h + up + down - kernels[0]) // strides[0] + 1
    ow = (w + left + right - kernels[1]) // strides[1] + 1
    rows, lengths = [], []
    for i in range(n):
        hi, wi = oh, ow
        if Y is not None and n > 1:
            rh, rw = -(-int(Y[i, 0]) // out_stride[0]), -(-int(Y[i, 1]) // out_stride[1])
            hi = (rh + up + down - kernels[0]) // strides[0] + 1
            wi = (rw + left + right - kernels[1]) // strides[1] + 1
        for r in range(hi):
            for s in range(wi):
                r0, s0 = r * strides[0], s * strides[1]
                rows.append(padded[i, :, r0 : r0 + kernels[0], s0 : s0 + kernels[1]].reshape(-1))
        lengths.append(hi * wi)
    return {"Out": create_lod_tensor(np.array(rows), [lengths])}


case(
    "im2sequence",
    {"X": rand(2, 2, 4, 5)},
    attrs={"kernels": [2, 2], "strides": [1, 1], "paddings": [0, 0, 0, 0]},
    reference=ref_im2sequence,
)
case(
    "im2sequence",
    {"X": rand(2, 3, 5, 4, seed=1)},
    attrs={"kernels": [3, 2], "strides": [2, 1], "paddings": [1, 0, 2, 1]},
    name="stride_pad",
    reference=ref_im2sequence,
)
# with the real image sizes Y (inference only): test_normalization_projection.py

NOT_EXPORTED.update(
    {
        "row_conv": "rows read across a sequence's LoD offsets, which ONNX tensors do not carry",
        "im2sequence": "its output is a LoD sequence per image; no ONNX exporter yet",
        "add_position_encoding": "positions restart at each LoD sequence; no ONNX exporter yet",
    }
)
