"""Cases for math, activation and loss ops."""

import numpy as np

from . import NOT_DIFFERENTIABLE, case, positive, rand


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


_OPS = (
    ("add", np.add),
    ("sub", np.subtract),
    ("mul", np.multiply),
    ("div", np.divide),
    ("pow", np.power),
    ("min", np.minimum),
    ("max", np.maximum),
)
for name, fn in _OPS:
    op = f"elementwise_{name}"
    y_op = positive if name in ("div", "pow") else rand
    if name in ("min", "max"):  # Y apart from X: at a tie the derivative is one-sided
        y_op = lambda *shape: rand(*shape, seed=100)  # noqa: E731
    if name == "pow":  # a positive base: the gradient takes its log
        case(op, {"X": positive(3, 4), "Y": rand(3, 4)}, name="positive", reference=lambda X, Y, axis: {"Out": X**Y})
        continue
    case(op, {"X": rand(3, 4), "Y": y_op(3, 4)}, reference=lambda X, Y, axis, fn=fn: {"Out": fn(X, Y)})
    case(
        op,
        {"X": rand(2, 3, 4), "Y": y_op(3)},
        attrs={"axis": 1},
        name="axis1",
        reference=lambda X, Y, axis, fn=fn: {"Out": fn(X, Y.reshape(1, 3, 1))},
    )
    case(op, {"X": rand(2, 3, 4), "Y": y_op(4)}, name="trailing", reference=lambda X, Y, axis, fn=fn: {"Out": fn(X, Y)})
    case(
        op,
        {"X": rand(2, 3), "Y": y_op(3, 1)},
        attrs={"axis": 1},
        name="trailing_ones",
        reference=lambda X, Y, axis, fn=fn: {"Out": fn(X, Y.reshape(1, 3))},
    )

case("mul", {"X": rand(4, 3), "Y": rand(3, 5)}, reference=lambda X, Y, **a: {"Out": X @ Y})
case(
    "mul",
    {"X": rand(2, 3, 4), "Y": rand(12, 2)},
    attrs={"x_num_col_dims": 1},
    name="flatten",
    reference=lambda X, Y, **a: {"Out": X.reshape(2, 12) @ Y},
)
case("matmul", {"X": rand(3, 4), "Y": rand(4, 2)}, reference=lambda X, Y, **a: {"Out": X @ Y})
case(
    "matmul",
    {"X": rand(2, 4, 3), "Y": rand(2, 2, 4)},
    attrs={"transpose_X": True, "transpose_Y": True, "alpha": 0.5},
    name="batched_transposed",
    reference=lambda X, Y, **a: {"Out": 0.5 * np.swapaxes(X, 1, 2) @ np.swapaxes(Y, 1, 2)},
)
case("matmul", {"X": rand(2, 3, 4), "Y": rand(4, 5)}, name="broadcast", reference=lambda X, Y, **a: {"Out": X @ Y})
case(
    "matmul",
    {"X": rand(2, 3, 4), "Y": rand(5, 4)},
    attrs={"transpose_Y": True, "alpha": 0.5},
    name="rows_transposed_y",
    reference=lambda X, Y, **a: {"Out": 0.5 * X @ Y.T},
)
case(
    "scale",
    {"X": rand(3, 2)},
    attrs={"scale": 2.5, "bias": 0.5},
    reference=lambda X, scale, bias, bias_after_scale: {"Out": X * scale + bias},
)
case(
    "scale",
    {"X": rand(3, 2)},
    attrs={"scale": 2.0, "bias": 1.0, "bias_after_scale": False},
    name="bias_first",
    reference=lambda X, scale, bias, bias_after_scale: {"Out": (X + bias) * scale},
)
case(
    "sum",
    {"X": [rand(2, 3, seed=1), rand(2, 3, seed=2), rand(2, 3, seed=3)]},
    reference=lambda X, **a: {"Out": X[0] + X[1] + X[2]},
)
case("reduce_sum", {"X": rand(2, 3, 4)}, attrs={"dim": [1]}, reference=lambda X, **a: {"Out": X.sum(axis=1)})
case(
    "reduce_sum",
    {"X": rand(2, 3)},
    attrs={"reduce_all": True},
    name="all",
    reference=lambda X, **a: {"Out": X.sum().reshape(1)},
)
case(
    "reduce_mean",
    {"X": rand(2, 3, 4)},
    attrs={"dim": [0, 2], "keep_dim": True},
    reference=lambda X, **a: {"Out": X.mean(axis=(0, 2), keepdims=True)},
)
case(
    "reduce_mean",
    {"X": rand(5, 1)},
    attrs={"dim": [0], "reduce_all": True},
    name="all",
    reference=lambda X, **a: {"Out": X.mean().reshape(1)},
)
case("mean", {"X": rand(3, 4)}, reference=lambda X: {"Out": X.mean().reshape(1)})
for _name, _fn in (("reduce_max", np.max), ("reduce_min", np.min), ("reduce_prod", np.prod)):
    case(
        _name, {"X": rand(2, 3, 4, seed=8)}, attrs={"dim": [1]}, reference=lambda X, fn=_fn, **a: {"Out": fn(X, axis=1)}
    )
    case(
        _name,
        {"X": rand(2, 3, seed=9)},
        attrs={"dim": [0, -1], "keep_dim": True},
        name="keep",
        reference=lambda X, fn=_fn, **a: {"Out": fn(X, axis=(0, 1), keepdims=True)},
    )
_B = np.array([[True, False, True], [True, True, True]])
for _name, _fn in (("reduce_all", np.all), ("reduce_any", np.any)):
    case(_name, {"X": _B}, attrs={"dim": [1]}, reference=lambda X, fn=_fn, **a: {"Out": fn(X, axis=1)})
    case(
        _name,
        {"X": _B},
        attrs={"reduce_all": True},
        name="all",
        reference=lambda X, fn=_fn, **a: {"Out": fn(X).reshape(1)},
    )
NOT_DIFFERENTIABLE.update(dict.fromkeys(("reduce_all", "reduce_any"), "bool in, bool out"))

case("relu", {"X": rand(3, 4)}, reference=lambda X: {"Out": np.maximum(X, 0)})
case("sigmoid", {"X": rand(3, 4, low=-5, high=5)}, reference=lambda X: {"Out": 1 / (1 + np.exp(-X))})
case("tanh", {"X": rand(3, 4)}, reference=lambda X: {"Out": np.tanh(X)})
case("softmax", {"X": rand(3, 4)}, reference=lambda X, axis: {"Out": _softmax(X)})
case("softmax", {"X": rand(3, 4)}, attrs={"axis": 0}, name="axis0", reference=lambda X, axis: {"Out": _softmax(X, 0)})
case("log_softmax", {"X": rand(3, 4)}, reference=lambda X, axis: {"Out": np.log(_softmax(X))})
case(
    "log_softmax",
    {"X": rand(3, 4)},
    attrs={"axis": 0},
    name="axis0",
    reference=lambda X, axis: {"Out": np.log(_softmax(X, 0))},
)
case("square", {"X": rand(3, 4)}, reference=lambda X: {"Out": X * X})
case("exp", {"X": rand(3, 4)}, reference=lambda X: {"Out": np.exp(X)})
case("log", {"X": positive(3, 4)}, reference=lambda X: {"Out": np.log(X)})
case("sqrt", {"X": positive(3, 4)}, reference=lambda X: {"Out": np.sqrt(X)})
case("abs", {"X": positive(3, 4) * np.array([1, -1, 1, -1])}, reference=lambda X: {"Out": np.abs(X)})
case("sign", {"X": rand(3, 4)}, reference=lambda X: {"Out": np.sign(X)})
case("floor", {"X": rand(3, 4, low=-3, high=3)}, reference=lambda X: {"Out": np.floor(X)})
case("cos", {"X": rand(3, 4)}, reference=lambda X: {"Out": np.cos(X)})
case("ceil", {"X": rand(3, 4, low=-3, high=3)}, reference=lambda X: {"Out": np.ceil(X)})
for name, fn in (("less_than", np.less), ("less_equal", np.less_equal), ("greater_than", np.greater)):
    case(name, {"X": rand(3, 4), "Y": rand(4)}, reference=lambda X, Y, fn=fn, **a: {"Out": fn(X, Y)})
for name, fn in (("greater_equal", np.greater_equal), ("equal", np.equal), ("not_equal", np.not_equal)):
    x = np.array([[1.0, 2.0, 3.0]], "float32")
    case(name, {"X": x, "Y": np.array([2.0], "float32")}, reference=lambda X, Y, fn=fn, **a: {"Out": fn(X, Y)})
case(
    "increment",
    {"X": np.array([-1], "int64")},
    attrs={"step": 1.0},
    reference=lambda X, step: {"Out": np.array([0], "int64")},
)

_labels = np.array([[0], [2], [1]], dtype=np.int64)
_probs = _softmax(rand(3, 4))
case(
    "cross_entropy",
    {"X": _probs, "Label": _labels},
    outputs={"Y": 1},
    no_grad=("Label",),
    reference=lambda X, Label, **a: {"Y": -np.log(np.take_along_axis(X, Label, 1))},
)
case(
    "cross_entropy",
    {"X": _probs, "Label": _softmax(rand(3, 4, seed=5))},
    attrs={"soft_label": True},
    outputs={"Y": 1},
    no_grad=("Label",),
    name="soft",
    reference=lambda X, Label, **a: {"Y": -(Label * np.log(X)).sum(1, keepdims=True)},
)
case(
    "cross_entropy",
    {"X": _probs, "Label": np.array([[0], [-100], [1]], dtype=np.int64)},
    outputs={"Y": 1},
    no_grad=("Label",),
    name="ignore_index",
    reference=lambda X, Label, **a: {"Y": np.array([[-np.log(X[0, 0])], [0.0], [-np.log(X[2, 1])]])},
)
_logits = rand(3, 4, low=-3, high=3)
case(
    "softmax_with_cross_entropy",
    {"Logits": _logits, "Label": _labels},
    outputs={"Softmax": 1, "Loss": 1},
    no_grad=("Label",),
    loss_outputs=("Loss",),
    reference=lambda Logits, Label, **a: {
        "Softmax": _softmax(Logits),
        "Loss": -np.log(np.take_along_axis(_softmax(Logits), Label, 1)),
    },
)
case(
    "softmax_with_cross_entropy",
    {"Logits": _logits, "Label": _softmax(rand(3, 4, seed=7))},
    attrs={"soft_label": True},
    outputs={"Softmax": 1, "Loss": 1},
    no_grad=("Label",),
    loss_outputs=("Loss",),
    name="soft",
    reference=lambda Logits, Label, **a: {"Loss": -(Label * np.log(_softmax(Logits))).sum(1, keepdims=True)},
)

# binary losses over probabilities: kept inside (0, 1), away from the clipping, for finite differences
_p = rand(5, 1, low=0.1, high=0.9, seed=11)
_hard = np.array([[1.0], [0.0], [1.0], [0.0], [1.0]])
_soft = rand(5, 1, low=0.0, high=1.0, seed=12)


def _log_loss_ref(Predicted, Labels, epsilon):
    return {"Loss": -Labels * np.log(Predicted + epsilon) - (1 - Labels) * np.log(1 - Predicted + epsilon)}


case(
    "log_loss",
    {"Predicted": _p, "Labels": _hard},
    outputs={"Loss": 1},
    no_grad=("Labels",),
    reference=_log_loss_ref,
)
case(
    "log_loss",
    {"Predicted": _p, "Labels": _soft},
    attrs={"epsilon": 0.05},
    outputs={"Loss": 1},
    no_grad=("Labels",),
    name="soft_label_epsilon",
    reference=_log_loss_ref,
)


def _bce_ref(X, Label):
    return {"Out": -(Label * np.log(X) + (1 - Label) * np.log(1 - X))}


case("bce_loss", {"X": _p, "Label": _hard}, no_grad=("Label",), reference=_bce_ref)
case(
    "bce_loss",
    {"X": rand(2, 3, 2, low=0.1, high=0.9, seed=13), "Label": rand(2, 3, 2, low=0.0, high=1.0, seed=14)},
    no_grad=("Label",),
    name="soft_label_3d",
    reference=_bce_ref,
)
case(
    "clip",
    {"X": rand(3, 4, low=-2, high=2)},
    attrs={"min": -0.5, "max": 0.8},
    reference=lambda X, min, max: {"Out": np.clip(X, min, max)},
)
case(
    "clip_by_norm",
    {"X": rand(3, 4)},
    attrs={"max_norm": 0.5},
    reference=lambda X, max_norm: {"Out": X * max_norm / np.linalg.norm(X)},
)
case(
    "clip_by_norm",
    {"X": rand(3, 4) * 0.01},
    attrs={"max_norm": 0.5},
    name="within",
    reference=lambda X, max_norm: {"Out": X},
)
case("merge_selected_rows", {"X": rand(3, 4)}, reference=lambda X: {"Out": X})
case("get_tensor_from_selected_rows", {"X": rand(3, 4)}, reference=lambda X: {"Out": X})
