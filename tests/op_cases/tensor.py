"""Cases for tensor-making and -shaping ops."""

import numpy as np

from . import case, rand

case(
    "fill_constant",
    {},
    attrs={"shape": [2, 3], "value": 1.5, "dtype": "float64"},
    reference=lambda **a: {"Out": np.full((2, 3), 1.5)},
)
case("fill_zeros_like", {"X": rand(2, 3)}, reference=lambda X: {"Out": np.zeros((2, 3))})
case("assign", {"X": rand(2, 3)}, reference=lambda X: {"Out": X})
case(
    "cast",
    {"X": rand(2, 3)},
    attrs={"in_dtype": "float64", "out_dtype": "float64"},
    reference=lambda X, **a: {"Out": X},
)
case(
    "reshape2",
    {"X": rand(2, 3, 4)},
    attrs={"shape": [0, -1]},
    outputs={"Out": 1, "XShape": 1},
    loss_outputs=("Out",),
    reference=lambda X, shape: {"Out": X.reshape(2, 12)},
)
case(
    "transpose2",
    {"X": rand(2, 3, 4)},
    attrs={"axis": [2, 0, 1]},
    outputs={"Out": 1, "XShape": 1},
    loss_outputs=("Out",),
    reference=lambda X, axis: {"Out": X.transpose(2, 0, 1)},
)
case(
    "concat",
    {"X": [rand(2, 3, seed=1), rand(2, 1, seed=2)]},
    attrs={"axis": 1},
    reference=lambda X, axis: {"Out": np.concatenate(X, axis=1)},
)
case(
    "split",
    {"X": rand(4, 6)},
    attrs={"num": 3, "axis": 1},
    outputs={"Out": 3},
    reference=lambda X, **a: {"Out": np.split(X, 3, axis=1)},
)
case(
    "split",
    {"X": rand(5, 2)},
    attrs={"sections": [2, -1], "axis": 0},
    outputs={"Out": 2},
    name="sections",
    reference=lambda X, **a: {"Out": [X[:2], X[2:]]},
)
case(
    "split_byref",
    {"X": rand(5, 2)},
    attrs={"sections": [3, 2]},
    outputs={"Out": 2},
    reference=lambda X, **a: {"Out": [X[:3], X[3:]]},
)
case(
    "slice",
    {"Input": rand(5, 4)},
    attrs={"axes": [0, 1], "starts": [1, 0], "ends": [4, -1]},
    reference=lambda Input, **a: {"Out": Input[1:4, 0:-1]},
)
case(
    "where",
    {"Condition": rand(3, 4) > 0, "X": rand(3, 4, seed=1), "Y": rand(3, 4, seed=2)},
    no_grad=("Condition",),
    reference=lambda Condition, X, Y: {"Out": np.where(Condition, X, Y)},
)
case(
    "slice",
    {"Input": rand(5, 4, 3)},
    attrs={"axes": [0, 2], "starts": [2, 0], "ends": [3, 2], "decrease_axis": [0]},
    name="decrease",
    reference=lambda Input, **a: {"Out": Input[2, :, 0:2]},
)
case(
    "fill_constant_batch_size_like",
    {"Input": rand(6, 2)},
    attrs={"shape": [-1, 3], "value": 1.5, "dtype": "float32"},
    reference=lambda Input, **a: {"Out": np.full((6, 3), 1.5)},
)
case(
    "assign_value",
    {},
    attrs={"shape": [2, 2], "dtype": "int64", "int64_values": [1, 2, 3, 4]},
    reference=lambda **a: {"Out": np.array([[1, 2], [3, 4]])},
)
