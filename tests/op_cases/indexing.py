"""Cases for the ops of ops/indexing.py and ops/slicing.py, with NumPy oracles copied from Paddle
1.8.5's unit tests (test_strided_slice_op, test_crop_op, test_pad2d_op, test_unique, test_hash_op,
test_lod_reset_op, test_similarity_focus_op, ...)."""

import numpy as np

from fleetgraph.onnx import to_onnx_indexing  # noqa: F401  (its rules, until onnx/export.py imports it)
from fleetgraph.ops.lod_tensor import LoDTensor, create_lod_tensor

from . import NOT_DIFFERENTIABLE, NOT_EXPORTED, case, rand

# -- strided_slice, crop, crop_tensor --------------------------------------------------------------


def strided_slice_native_forward(input, axes, starts, ends, strides):
    """test_strided_slice_op's oracle: NumPy's basic slicing."""
    index = [slice(None)] * input.ndim
    for a, s, e, st in zip(axes, starts, ends, strides):
        index[a] = slice(s, e, st)
    return input[tuple(index)]


for _name, _axes, _starts, _ends, _strides in (
    ("paddles_test", [0, 1, 2], [-4, 0, 2], [-1, 3, 4], [1, 1, 1]),
    ("negative_strides", [0, 2], [2, -1], [0, -6], [-1, -2]),
    ("clamped", [1, 2], [-10, 1], [100, 5], [2, 3]),
):
    case(
        "strided_slice",
        {"Input": rand(4, 4, 5, seed=31)},
        attrs={"axes": _axes, "starts": _starts, "ends": _ends, "strides": _strides, "infer_flags": [1] * len(_axes)},
        name=_name,
        reference=lambda Input, axes, starts, ends, strides, **a: {
            "Out": strided_slice_native_forward(Input, axes, starts, ends, strides)
        },
    )
case(
    "strided_slice",
    {
        "Input": rand(3, 4, 5, seed=32),
        "StartsTensor": np.array([1, 0], "int32"),
        "EndsTensor": np.array([3, 5], "int32"),
    },
    attrs={"axes": [0, 2], "strides": [1, 2], "infer_flags": [-1, -1]},
    no_grad=("StartsTensor", "EndsTensor"),
    name="starts_and_ends_tensors",
    reference=lambda Input, **a: {"Out": Input[1:3, :, 0:5:2]},
)
case(
    "strided_slice",
    {"Input": rand(3, 4, 5, seed=33)},
    attrs={"axes": [0, 1], "starts": [1, 0], "ends": [2, 4], "strides": [1, 1], "decrease_axis": [0]},
    name="decrease_axis",
    reference=lambda Input, **a: {"Out": Input[1]},
)


def _window_ref(X, offsets, shape):
    return X[tuple(slice(o, o + (n if n != -1 else X.shape[i] - o)) for i, (o, n) in enumerate(zip(offsets, shape)))]


case(
    "crop",
    {"X": rand(8, 8, seed=34)},
    attrs={"shape": [2, 2], "offsets": [1, 2]},
    reference=lambda X, shape, offsets: {"Out": _window_ref(X, offsets, shape)},
)
case(
    "crop",
    {"X": rand(3, 6, 7, seed=35), "Y": rand(2, 3, 4, seed=36), "Offsets": np.array([1, 2, 3], "int32")},
    no_grad=("Y", "Offsets"),
    name="y_and_offsets_tensor",
    reference=lambda X, Y, Offsets, **a: {"Out": _window_ref(X, Offsets, Y.shape)},
)
case(
    "crop_tensor",
    {"X": rand(4, 8, 6, seed=37)},
    attrs={"shape": [2, -1, 3], "offsets": [1, 3, 2]},
    name="minus_one_to_the_end",
    reference=lambda X, shape, offsets: {"Out": _window_ref(X, offsets, shape)},
)
case(
    "crop_tensor",
    {"X": rand(5, 6, seed=38), "Shape": np.array([3, 2], "int32"), "Offsets": np.array([2, 4], "int32")},
    attrs={"offsets": [-1, -1]},
    no_grad=("Shape", "Offsets"),
    name="shape_and_offsets_tensors",
    reference=lambda X, Shape, Offsets, **a: {"Out": _window_ref(X, Offsets, Shape)},
)
case(
    "crop_tensor",
    {
        "X": rand(5, 6, seed=39),
        "ShapeTensor": [np.array([2], "int32"), np.array([3], "int32")],
        "OffsetsTensor": [np.array([1], "int32"), np.array([0], "int32")],
    },
    attrs={"shape": [0, 0], "offsets": [-1, -1]},
    no_grad=("ShapeTensor", "OffsetsTensor"),
    name="tensor_lists",
    reference=lambda X, **a: {"Out": X[1:3, 0:3]},
)

# -- pad, pad_constant_like, pad2d ------------------------------------------------------------------

case(
    "pad",
    {"X": rand(3, 4, seed=40)},
    attrs={"paddings": [0, 1, 2, 3], "pad_value": 0.5},
    reference=lambda X, paddings, pad_value: {"Out": np.pad(X, ((0, 1), (2, 3)), constant_values=pad_value)},
)
case(
    "pad_constant_like",
    {"X": rand(4, 5, 3, seed=41), "Y": rand(2, 5, 1, seed=42)},
    attrs={"pad_value": 0.1},
    no_grad=("X",),
    reference=lambda X, Y, pad_value: {"Out": np.pad(Y, ((0, 2), (0, 0), (0, 2)), constant_values=pad_value)},
)


def _pad2d_ref(X, paddings, mode, pad_value, data_format, Paddings=None):
    """test_pad2d_op's oracle: np.pad over the image axes."""
    top, bottom, left, right = paddings if Paddings is None else Paddings
    widths = ((0, 0), (0, 0), (top, bottom), (left, right))
    if data_format == "NHWC":
        widths = ((0, 0), (top, bottom), (left, right), (0, 0))
    if mode == "constant":
        return {"Out": np.pad(X, widths, mode="constant", constant_values=pad_value)}
    return {"Out": np.pad(X, widths, mode=mode)}


for _mode, _format, _pads in (
    ("constant", "NCHW", [0, 1, 2, 3]),
    ("reflect", "NCHW", [0, 1, 2, 3]),
    ("edge", "NCHW", [1, 2, 2, 1]),
    ("reflect", "NHWC", [2, 1, 1, 2]),
    ("constant", "NHWC", [1, 0, 0, 2]),
):
    case(
        "pad2d",
        {"X": rand(2, 3, 4, 4, seed=43)},
        attrs={"paddings": _pads, "mode": _mode, "pad_value": 1.5, "data_format": _format},
        name=f"{_mode}_{_format}",
        reference=_pad2d_ref,
    )
case(
    "pad2d",
    {"X": rand(2, 3, 4, 5, seed=44), "Paddings": np.array([1, 1, 2, 0], "int32")},
    attrs={"mode": "edge"},
    no_grad=("Paddings",),
    name="paddings_tensor",
    reference=_pad2d_ref,
)

# -- roll, flip, reverse --------------------------------------------------------------------------

case(
    "roll",
    {"X": rand(4, 5, 3, seed=45)},
    attrs={"shifts": [2, -1], "dims": [0, 2]},
    reference=lambda X, shifts, dims: {"Out": np.roll(X, shifts, dims)},
)
case(
    "flip",
    {"X": rand(3, 4, 2, seed=46)},
    attrs={"dims": [0, -1]},
    reference=lambda X, dims: {"Out": np.flip(X, dims)},
)
case(
    "flip",
    {"X": create_lod_tensor(rand(5, 2, seed=47), [[2, 3]])},
    attrs={"dims": [1]},
    name="keeps_lod",
    reference=lambda X, dims: {"Out": LoDTensor(np.flip(X.data, 1), X.levels)},
)
case(
    "reverse",
    {"X": rand(3, 4, 5, seed=48)},
    attrs={"axis": [0, 2]},
    reference=lambda X, axis: {"Out": np.flip(X, axis)},
)

# -- index_select, index_sample, where_index, unique ------------------------------------------------

case(
    "index_select",
    {"X": rand(3, 5, 2, seed=49), "Index": np.array([4, 0, 4, 1], "int64")},
    attrs={"dim": 1},
    no_grad=("Index",),
    reference=lambda X, Index, dim: {"Out": np.take(X, Index, axis=dim)},
)
case(
    "index_sample",
    {"X": rand(4, 6, seed=50), "Index": np.array([[0, 5, 5], [1, 2, 3], [4, 4, 4], [3, 0, 1]], "int32")},
    no_grad=("Index",),
    reference=lambda X, Index: {"Out": np.take_along_axis(X, Index.astype("int64"), 1)},
)
case(
    "where_index",
    {"Condition": np.array([[True, False, True], [False, False, True]])},
    reference=lambda Condition: {"Out": np.argwhere(Condition).astype("int64")},
)
case(
    "where_index",
    {"Condition": np.zeros(3, "int32")},
    name="nothing_true",
    reference=lambda Condition: {"Out": np.zeros((0, 1), "int64")},
)
case(
    "unique",
    {"X": np.array([2, 3, 3, 1, 5, 3], "int64")},
    attrs={"dtype": 2},
    outputs={"Out": 1, "Index": 1},
    reference=lambda X, dtype: {"Out": np.array([2, 3, 1, 5], "int64"), "Index": np.array([0, 1, 1, 2, 3, 1], "int32")},
)


def _first_seen(X, dtype=3):
    """test_unique's oracle for random input: np.unique, reordered by first appearance."""
    values, first = np.unique(X, return_index=True)
    out = values[np.argsort(first)]
    index_type = "int32" if dtype == 2 else "int64"
    index = np.array([list(out).index(v) for v in X], index_type)
    return {"Out": out, "Index": index, "Count": np.array([(X == v).sum() for v in out], index_type)}


_ids = np.random.default_rng(3).integers(0, 20, size=40).astype("int64")
case(
    "unique",
    {"X": _ids},
    attrs={"dtype": 3},
    outputs={"Out": 1, "Index": 1},
    name="random",
    reference=lambda X, dtype: {k: v for k, v in _first_seen(X, dtype).items() if k != "Count"},
)
case(
    "unique_with_counts",
    {"X": rand(30, seed=51).round(1)},
    attrs={"dtype": 2},
    outputs={"Out": 1, "Index": 1, "Count": 1},
    reference=_first_seen,
)

# -- scatter_nd_add, multiplex, shard_index, hash ---------------------------------------------------


def _scatter_nd_add_ref(X, Index, Updates):
    """test_scatter_nd_op's numpy_scatter_nd_add."""
    out = X.copy()
    depth = Index.shape[-1]
    for idx, upd in zip(Index.reshape(-1, depth), Updates.reshape(-1, *X.shape[depth:])):
        out[tuple(idx)] += upd
    return {"Out": out}


case(
    "scatter_nd_add",
    {"X": rand(6, seed=52), "Index": np.array([[1], [2], [3], [1]], "int64"), "Updates": rand(4, seed=53)},
    no_grad=("Index",),
    name="simple_repeated",
    reference=_scatter_nd_add_ref,
)
case(
    "scatter_nd_add",
    {
        "X": rand(3, 4, 5, seed=54),
        "Index": np.array([[[0, 1], [2, 3]], [[0, 1], [1, 0]]], "int32"),
        "Updates": rand(2, 2, 5, seed=55),
    },
    no_grad=("Index",),
    name="high_rank_diff",
    reference=_scatter_nd_add_ref,
)
case(
    "multiplex",
    {"Ids": np.array([[2], [0], [1], [2]], "int32"), "X": [rand(4, 3, seed=56 + k) for k in range(3)]},
    no_grad=("Ids",),
    reference=lambda Ids, X: {"Out": np.stack([X[k][i] for i, k in enumerate(Ids.ravel())])},
)


def _shard_ref(X, index_num, nshards, shard_id, ignore_value):
    """test_shard_index_op's common_setup oracle."""
    size = (index_num + nshards - 1) // nshards
    return {"Out": np.where(X // size == shard_id, X % size, ignore_value).astype(X.dtype)}


for _shard in (0, 1, 2):
    case(
        "shard_index",
        {"X": np.random.default_rng(4).integers(0, 20, size=(10, 1)).astype("int64")},
        attrs={"index_num": 20, "nshards": 3, "shard_id": _shard, "ignore_value": -1},
        name=f"shard_{_shard}",
        reference=_shard_ref,
    )

# test_hash_op's inputs and the values Paddle's XXH64 gave
_np_rng = np.random.RandomState(1)
_hash_in = _np_rng.randint(0, 10, (8, 1)).astype("int32")
_hash_out = np.array(
    [[3481, 7475], [1719, 5986], [8473, 694], [3481, 7475], [4372, 9456], [4372, 9456], [6897, 3218], [9038, 7951]]
).reshape(8, 2, 1)
case(
    "hash",
    {"X": create_lod_tensor(_hash_in, [[2, 6]])},
    attrs={"num_hash": 2, "mod_by": 10000},
    name="lod",
    reference=lambda X, **a: {"Out": LoDTensor(_hash_out.astype("int32"), X.levels)},
)
case(
    "hash",
    {"X": np.array([1, 2**32 + 1]).reshape((2, 1)).astype("int64")},
    attrs={"num_hash": 2, "mod_by": 10000},
    name="int64",
    reference=lambda X, **a: {"Out": np.array([1269, 9609, 3868, 7268]).reshape((2, 2, 1))},
)
case(
    "hash",
    {"X": np.array([10, 5]).reshape((2, 1)).astype("int64")},
    attrs={"num_hash": 2, "mod_by": 2**32},
    name="int64_mod_by",
    reference=lambda X, **a: {"Out": np.array([1204014882, 393011615, 3586283837, 2814821595]).reshape((2, 2, 1))},
)

# -- lod_reset ----------------------------------------------------------------------------------

_x = rand(10, 20, seed=59)
case(
    "lod_reset",
    {"X": create_lod_tensor(_x, [[3, 2, 5]])},
    attrs={"target_lod": [0, 7, 10]},
    name="by_attr",
    reference=lambda X, **a: {"Out": create_lod_tensor(X.data, [[7, 3]])},
)
case(
    "lod_reset",
    {"X": create_lod_tensor(_x, [[3, 2, 5]]), "Y": np.array([0, 4, 7, 10], "int32")},
    attrs={"target_lod": [0, 7, 10]},
    no_grad=("Y",),
    name="by_input_over_attr",
    reference=lambda X, Y, **a: {"Out": create_lod_tensor(X.data, [[4, 3, 3]])},
)
case(
    "lod_reset",
    {"X": create_lod_tensor(_x, [[3, 2, 5]]), "Y": create_lod_tensor(rand(10, 10, seed=60), [[4, 3, 3]])},
    no_grad=("Y",),
    name="y_is_lod_tensor",
    reference=lambda X, Y, **a: {"Out": create_lod_tensor(X.data, [[4, 3, 3]])},
)
case(
    "lod_reset",
    {"X": _x},
    attrs={"target_lod": [0, 1, 3, 6, 10], "append": True},
    name="append_to_no_lod",
    reference=lambda X, **a: {"Out": create_lod_tensor(X, [[1, 2, 3, 4]])},
)

# -- similarity_focus -----------------------------------------------------------------------------


def _similarity_focus_ref(X, axis, indexes):
    """test_similarity_focus_op's oracle, for any axis: per batch and index, the plane's largest
    entries in turn while their row and column are free, repeated along axis."""
    data = np.moveaxis(X, axis, 1)
    out = np.zeros_like(data)
    for b in range(data.shape[0]):
        res = np.zeros(data.shape[2:])
        for index in indexes:
            plane = data[b, index].copy()
            rows, cols = set(), set()
            for _ in range(plane.size):
                r, c = np.unravel_index(plane.argmax(), plane.shape)
                if r not in rows and c not in cols:
                    rows.add(r), cols.add(c)
                    res[r, c] = 1
                    if len(rows) == min(plane.shape):
                        break
                plane[r, c] = -np.inf
        out[b] = res
    return {"Out": np.moveaxis(out, 1, axis)}


case(
    "similarity_focus",
    {
        "X": np.array(
            [
                [[[0.8, 0.1], [0.4, 0.5]], [[0.9, 0.7], [0.9, 0.9]], [[0.8, 0.9], [0.1, 0.2]]],
                [[[0.2, 0.5], [0.3, 0.4]], [[0.9, 0.7], [0.8, 0.4]], [[0.0, 0.2], [0.4, 0.7]]],
            ]
        )
    },
    attrs={"axis": 1, "indexes": [0]},
    name="paddles_test",
    reference=_similarity_focus_ref,
)
case(
    "similarity_focus",
    {"X": rand(2, 3, 4, 5, seed=61)},
    attrs={"axis": 2, "indexes": [0, 3]},
    name="axis_2_two_indexes",
    reference=_similarity_focus_ref,
)

_INDICES = "an integer output, no gradient (as Paddle)"
NOT_DIFFERENTIABLE.update(
    {
        "where_index": _INDICES,
        "unique": _INDICES,
        "unique_with_counts": _INDICES,
        "shard_index": _INDICES,
        "hash": _INDICES,
        "similarity_focus": "a 0/1 mask chosen by sorting; Paddle registers no gradient",
    }
)
NOT_EXPORTED.update(
    {
        "hash": "XXH64 over each row's bytes has no ONNX operator",
        "lod_reset": "sets the output's LoD; ONNX tensors carry no LoD",
        "similarity_focus": "a greedy row/column selection with no ONNX operator",
    }
)
