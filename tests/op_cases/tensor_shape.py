"""Cases for the shape and index ops: unsqueeze2, squeeze2, expand, stack, shape, range,
fill_any_like, gather_nd, elementwise_floordiv and elementwise_mod."""

import numpy as np

from . import NOT_DIFFERENTIABLE, NOT_EXPORTED, case, rand

case(
    "unsqueeze2",
    {"X": rand(2, 3, seed=1)},
    attrs={"axes": [0, 3]},
    outputs={"Out": 1, "XShape": 1},
    loss_outputs=("Out",),
    reference=lambda X, **a: {"Out": X.reshape(1, 2, 3, 1)},
)
case(
    "squeeze2",
    {"X": rand(2, 1, 3, 1, seed=2)},
    attrs={"axes": [1, -1]},
    outputs={"Out": 1, "XShape": 1},
    loss_outputs=("Out",),
    reference=lambda X, **a: {"Out": X.reshape(2, 3)},
)
case(
    "squeeze2",
    {"X": rand(1, 3, 1, seed=3)},
    outputs={"Out": 1, "XShape": 1},
    loss_outputs=("Out",),
    name="every_size_1",
    reference=lambda X, **a: {"Out": X.reshape(3)},
)
case(
    "expand",
    {"X": rand(2, 1, 3, seed=4)},
    attrs={"expand_times": [2, 3, 1]},
    reference=lambda X, expand_times, **a: {"Out": np.tile(X, expand_times)},
)
case(
    "stack",
    {"X": [rand(2, 3, seed=5), rand(2, 3, seed=6), rand(2, 3, seed=7)]},
    attrs={"axis": 1},
    outputs={"Y": 1},
    reference=lambda X, axis, **a: {"Y": np.stack(X, axis=axis)},
)
case("shape", {"Input": rand(4, 2, 3)}, reference=lambda Input: {"Out": np.array([4, 2, 3], "int32")})
case(
    "range",
    {"Start": np.array([1], "int64"), "End": np.array([10], "int64"), "Step": np.array([3], "int64")},
    reference=lambda **a: {"Out": np.arange(1, 10, 3)},
)
case(
    "range",
    {"Start": np.array([1.0], "float32"), "End": np.array([0.0], "float32"), "Step": np.array([-0.25], "float32")},
    name="float_down",
    reference=lambda **a: {"Out": np.arange(1.0, 0.0, -0.25, dtype="float32")},
)
case(
    "fill_any_like",
    {"X": rand(2, 3)},
    attrs={"value": 1.5, "dtype": "float64"},
    reference=lambda X, **a: {"Out": np.full((2, 3), 1.5)},
)
_X = rand(3, 4, 2, seed=8)
case(
    "gather_nd",
    {"X": _X, "Index": np.array([[[0, 1], [2, 3]], [[0, 1], [1, 0]]], "int64")},  # [0, 1] twice: grads add
    no_grad=("Index",),
    reference=lambda X, Index, **a: {"Out": X[Index[..., 0], Index[..., 1]]},
)
case(
    "gather_nd",
    {"X": _X, "Index": np.array([[2], [0]], "int64")},
    no_grad=("Index",),
    name="rows",
    reference=lambda X, Index, **a: {"Out": X[Index[:, 0]]},
)
_A = np.array([[7, -7, 9], [4, -3, 0]], "int64")
_B = np.array([[2, 2, -4], [3, 3, 5]], "int64")
case(
    "elementwise_floordiv",
    {"X": _A, "Y": _B},
    reference=lambda X, Y, **a: {"Out": np.trunc(X / Y).astype("int64")},
)
case("elementwise_mod", {"X": _A, "Y": _B}, reference=lambda X, Y, **a: {"Out": np.remainder(X, Y)})
case(
    "elementwise_mod",
    {"X": np.array([5.5, -5.5], "float32"), "Y": np.array([2.0], "float32")},
    name="float",
    reference=lambda X, Y, **a: {"Out": np.remainder(X, Y)},
)

NOT_DIFFERENTIABLE.update(
    {
        "shape": "its output is the input's shape: integers",
        "range": "integers or a float sequence made from its bounds; Paddle registers no grad for it",
        "fill_any_like": "reads only its input's shape and dtype",
        "elementwise_floordiv": "integer division: piecewise constant, Paddle registers no grad for it",
        "elementwise_mod": "piecewise, Paddle registers no grad for it",
    }
)
NOT_EXPORTED.update(
    dict.fromkeys(
        ("unsqueeze2", "squeeze2", "expand", "stack", "shape", "range", "fill_any_like", "gather_nd"),
        "no ONNX exporter yet",
    )
    | dict.fromkeys(("elementwise_floordiv", "elementwise_mod"), "no ONNX exporter yet")
)
