"""Cases for the manipulation ops: expand_as, tile, unstack, gather, scatter, one_hot, one_hot_v2,
arg_max, arg_min and argsort, with NumPy oracles after Paddle's unit tests."""

import numpy as np

from . import NOT_DIFFERENTIABLE, NOT_EXPORTED, case, rand

case(
    "expand_as",
    {"X": rand(2, 1, 3, seed=11), "target_tensor": rand(4, 3, 3, seed=12)},
    no_grad=("target_tensor",),
    reference=lambda X, target_tensor: {"Out": np.tile(X, (2, 3, 1))},
)
case(
    "tile",
    {"X": rand(2, 3, seed=13)},
    attrs={"repeat_times": [2, 1, 2]},
    reference=lambda X, repeat_times: {"Out": np.tile(X, repeat_times)},
)
case(
    "unstack",
    {"X": rand(2, 3, 4, seed=14)},
    attrs={"axis": 1, "num": 3},
    outputs={"Y": 3},
    reference=lambda X, axis, num: {"Y": [X[:, i] for i in range(3)]},
)
case(
    "gather",
    {"X": rand(5, 3, seed=15), "Index": np.array([3, 0, 4], "int64")},
    no_grad=("Index",),
    reference=lambda X, Index, **a: {"Out": X[Index]},
)
case(
    "gather",
    {"X": rand(2, 5, 3, seed=16), "Index": np.array([1, 1, 4], "int32")},
    attrs={"overwrite": False, "axis": 1},
    no_grad=("Index",),
    name="axis_1_repeated",
    reference=lambda X, Index, **a: {"Out": X[:, Index]},
)


def _scatter_ref(X, Ids, Updates, overwrite):
    out = X.copy()
    if overwrite:
        out[Ids] = Updates
    else:
        out[Ids] = 0
        np.add.at(out, Ids, Updates)
    return {"Out": out}


case(
    "scatter",
    {"X": rand(5, 3, seed=17), "Ids": np.array([4, 1], "int64"), "Updates": rand(2, 3, seed=18)},
    no_grad=("Ids",),
    reference=_scatter_ref,
)
case(
    "scatter",
    {"X": rand(5, 3, seed=19), "Ids": np.array([2, 0], "int64"), "Updates": rand(2, 3, seed=20)},
    attrs={"overwrite": False},
    no_grad=("Ids",),
    name="add",
    reference=_scatter_ref,
)


def _one_hot_ref(ids, depth):
    return {"Out": (ids[..., None] == np.arange(depth)).astype("float32")}


case(
    "one_hot",
    {"X": np.array([[1], [1], [3], [0]], "int64")},
    attrs={"depth": 4},
    reference=lambda X, depth, **a: _one_hot_ref(X[..., 0], depth),
)
case(
    "one_hot_v2",
    {"X": np.array([[1, 5], [3, 0]], "int64")},
    attrs={"depth": 4, "allow_out_of_range": True},
    reference=lambda X, depth, **a: _one_hot_ref(X, depth),
)
case(
    "arg_max",
    {"X": rand(3, 4, 5, seed=21)},
    attrs={"axis": 1},
    reference=lambda X, **a: {"Out": X.argmax(1)},
)
case(
    "arg_max",
    {"X": rand(3, 4, seed=22)},
    attrs={"flatten": True, "keepdims": True, "dtype": 2},
    name="flatten_int32",
    reference=lambda X, **a: {"Out": X.argmax().reshape(1, 1).astype("int32")},
)
case(
    "arg_min",
    {"X": rand(3, 4, 5, seed=23)},
    attrs={"axis": -1, "keepdims": True},
    reference=lambda X, **a: {"Out": X.argmin(-1)[..., None]},
)


def _argsort_ref(X, axis, descending):
    idx = np.argsort(-X if descending else X, axis=axis, kind="stable")
    return {"Out": np.take_along_axis(X, idx, axis), "Indices": idx}


case(
    "argsort",
    {"X": rand(3, 4, seed=24)},
    attrs={"axis": 0},
    outputs={"Out": 1, "Indices": 1},
    loss_outputs=("Out",),
    reference=_argsort_ref,
)
case(
    "argsort",
    {"X": rand(2, 5, seed=25)},
    attrs={"descending": True},
    outputs={"Out": 1, "Indices": 1},
    loss_outputs=("Out",),
    name="descending",
    reference=_argsort_ref,
)

_INDICES = "an index output, no gradient (as Paddle)"
NOT_DIFFERENTIABLE.update({"one_hot": _INDICES, "one_hot_v2": _INDICES, "arg_max": _INDICES, "arg_min": _INDICES})
NOT_EXPORTED.update(
    dict.fromkeys(
        ("expand_as", "tile", "unstack", "gather", "scatter", "one_hot", "one_hot_v2", "arg_max", "arg_min", "argsort"),
        "no ONNX exporter yet",
    )
)
