"""One step of a recurrent cell: the activations of Paddle's recurrent kernels, the GRU step the
gru op repeats over time, and the single-step ops lstm_unit and gru_unit."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ._common import known
from ._xp import mask, reshape


def register_with_grad(op_type: str, *, grad_inputs, grads, grad_kernel, grad_infer=None, **forward) -> None:
    """The op (register_op's `forward` arguments) and its '<op_type>_grad', whose kernel takes the
    slots `grad_inputs` (optional ones marked '?') and `need=`, the gradients somebody reads;
    `grad_infer` where a gradient's shape is not its input's."""
    maker = make_grad_op(inputs=tuple(slot.rstrip("?") for slot in grad_inputs), outputs=grads)
    register_op(op_type, grad=maker, **forward)
    register_op(
        op_type + "_grad",
        inputs=grad_inputs,
        outputs=grads,
        attrs=forward.get("attrs"),
        infer_shape=grad_infer,
        kernel=grad_kernel,
        wants_outputs=True,
        takes_lod=forward.get("takes_lod", False),
    )


# -- activations ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Activation:
    """`forward(xp, x)`, and `backward(xp, dy, y)`: the gradient from the output y, as Paddle's
    recurrent kernels take it."""

    forward: Callable
    backward: Callable


def _sigmoid_clipped(xp, x):
    """Paddle's math::detail sigmoid: the input clipped to [-40, 13] first."""
    return 1.0 / (1.0 + xp.exp(-xp.clip(x, -40.0, 13.0)))


def _tanh_clipped(xp, x):
    """Paddle's math::detail tanh: 2 / (1 + exp(-2x)) - 1 with the exponent capped at 40."""
    return 2.0 / (1.0 + xp.exp(xp.clip(-2.0 * x, None, 40.0))) - 1.0


def _sigmoid(xp, x):
    return 1.0 / (1.0 + xp.exp(-x))


_SIGMOID_GRAD = lambda xp, dy, y: dy * y * (1.0 - y)  # noqa: E731
_TANH_GRAD = lambda xp, dy, y: dy * (1.0 - y * y)  # noqa: E731
_RELU = Activation(lambda xp, x: xp.maximum(x, xp.zeros_like(x)), lambda xp, dy, y: dy * mask(xp, y > 0, dy))
_IDENTITY = Activation(lambda xp, x: x, lambda xp, dy, y: dy)

# The lstm and gru ops' activations, by their attrs' names (math/detail/activation_functions.h).
ACTIVATIONS = {
    "sigmoid": Activation(_sigmoid_clipped, _SIGMOID_GRAD),
    "tanh": Activation(_tanh_clipped, _TANH_GRAD),
    "relu": _RELU,
    "identity": _IDENTITY,
    "": _IDENTITY,
}
GATE_ACTIVATIONS = ("sigmoid", "tanh", "relu", "identity")
# gru_unit's activations: Paddle's enum ints, and its activation_op functors (no clipping).
UNIT_ACTIVATIONS = (
    _IDENTITY,
    Activation(_sigmoid, _SIGMOID_GRAD),
    Activation(lambda xp, x: xp.tanh(x), _TANH_GRAD),
    _RELU,
)

# -- the GRU step ---------------------------------------------------------------------------------


def split_gru_weight(xp, weight):
    """Weight [D, 3D] as Paddle lays it out: its first 2 * D * D values, read as [D, 2D], weigh the
    update and reset gates, the last D * D, read as [D, D], the candidate (not column blocks)."""
    d = weight.shape[0]
    flat = reshape(xp, weight, (-1,))
    return reshape(xp, flat[: 2 * d * d], (d, 2 * d)), reshape(xp, flat[2 * d * d :], (d, d))


def gru_step(xp, gates_in, h_prev, w_ur, w_c, acts, origin_mode: bool):
    """One step from the input projection (+ bias) [B, 3D]: the activated gates [update, reset,
    candidate], reset * h_prev, and the new hidden state."""
    gate, cand = acts
    d = h_prev.shape[1]
    ur = gate.forward(xp, gates_in[:, : 2 * d] + h_prev @ w_ur)
    u, r = ur[:, :d], ur[:, d:]
    reset = r * h_prev
    c = cand.forward(xp, gates_in[:, 2 * d :] + reset @ w_c)
    h = c + u * (h_prev - c) if origin_mode else u * (c - h_prev) + h_prev
    return xp.concat([ur, c], axis=1), reset, h


def gru_step_grad(xp, dh, gate_value, h_prev, w_ur, w_c, acts, origin_mode: bool):
    """The gradient of one step's pre-activation gates [B, 3D], and of h_prev."""
    gate, cand = acts
    d = h_prev.shape[1]
    u, r, c = gate_value[:, :d], gate_value[:, d : 2 * d], gate_value[:, 2 * d :]
    if origin_mode:  # h = (1 - u) * c + u * h_prev
        du, dc, dh_prev = dh * (h_prev - c), dh - dh * u, dh * u
    else:  # h = u * c + (1 - u) * h_prev
        du, dc, dh_prev = dh * (c - h_prev), dh * u, dh - dh * u
    dc = cand.backward(xp, dc, c)
    d_reset = dc @ w_c.T
    dur = xp.concat([gate.backward(xp, du, u), gate.backward(xp, d_reset * h_prev, r)], axis=1)
    return xp.concat([dur, dc], axis=1), dh_prev + d_reset * r + dur @ w_ur.T


def gru_weight_grad(xp, h_prev, reset, gate_grad):
    """Weight@GRAD in split_gru_weight's layout, from every step's h_prev, reset * h_prev and gate
    gradient (rows: one per step and sequence)."""
    d = h_prev.shape[1]
    d_ur = reshape(xp, h_prev.T @ gate_grad[:, : 2 * d], (-1,))
    d_c = reshape(xp, reset.T @ gate_grad[:, 2 * d :], (-1,))
    return reshape(xp, xp.concat([d_ur, d_c]), (d, 3 * d))


# -- lstm_unit ------------------------------------------------------------------------------------


def _lstm_unit_infer(ctx: InferContext) -> None:
    x, c_prev = ctx.input_var("X"), ctx.input_var("C_prev")
    if len(x.shape) != 2 or len(c_prev.shape) != 2:
        raise ctx.error(f"X {fmt_shape(x.shape)}, C_prev {fmt_shape(c_prev.shape)}: expected both rank 2")
    if known(x.shape[1]) and known(c_prev.shape[1]) and x.shape[1] != 4 * c_prev.shape[1]:
        raise ctx.error(
            f"X '{x.name}' {fmt_shape(x.shape)}: expected 4 * D columns for C_prev '{c_prev.name}' "
            f"{fmt_shape(c_prev.shape)}"
        )
    ctx.set_output("C", c_prev.shape, x.dtype)
    ctx.set_output("H", c_prev.shape, x.dtype)


def _lstm_unit_gates(xp, x, forget_bias):
    """X's columns [input, forget, output, candidate], activated."""
    d = x.shape[1] // 4
    i, f, o = _sigmoid(xp, x[:, :d]), _sigmoid(xp, x[:, d : 2 * d] + forget_bias), _sigmoid(xp, x[:, 2 * d : 3 * d])
    return i, f, o, xp.tanh(x[:, 3 * d :])


def _lstm_unit(xp, x, c_prev, *, forget_bias):
    """C = f * C_prev + i * g, H = o * tanh(C): the gates only; the projection is an fc before it."""
    i, f, o, g = _lstm_unit_gates(xp, x, forget_bias)
    c = f * c_prev + i * g
    return c, o * xp.tanh(c)


def _lstm_unit_grad(xp, x, c_prev, c, dh, dc, *, forget_bias, need):
    i, f, o, g = _lstm_unit_gates(xp, x, forget_bias)
    tanh_c = xp.tanh(c)
    dc = dc + dh * o * (1.0 - tanh_c * tanh_c)
    dx = xp.concat(
        [dc * g * i * (1.0 - i), dc * c_prev * f * (1.0 - f), dh * tanh_c * o * (1.0 - o), dc * i * (1.0 - g * g)],
        axis=1,
    )
    return dx, dc * f if "C_prev@GRAD" in need else None


register_with_grad(
    "lstm_unit",
    inputs=("X", "C_prev"),
    outputs=("C", "H"),
    attrs={"forget_bias": 0.0},
    infer_shape=_lstm_unit_infer,
    kernel=_lstm_unit,
    grad_inputs=("X", "C_prev", "C", "H@GRAD", "C@GRAD"),
    grads=("X@GRAD", "C_prev@GRAD"),
    grad_kernel=_lstm_unit_grad,
)

# -- gru_unit -------------------------------------------------------------------------------------


def _gru_unit_infer(ctx: InferContext) -> None:
    x, h_prev, w = ctx.input_var("Input"), ctx.input_var("HiddenPrev"), ctx.input_var("Weight")
    for name in ("activation", "gate_activation"):
        if ctx.attr(name) not in range(len(UNIT_ACTIVATIONS)):
            raise ctx.error(f"{name} {ctx.attr(name)!r}: expected 0 (identity), 1 (sigmoid), 2 (tanh) or 3 (relu)")
    if len(w.shape) != 2 or w.shape[1] != 3 * w.shape[0]:
        raise ctx.error(f"Weight '{w.name}' {fmt_shape(w.shape)}: expected [D, 3 * D]")
    d = w.shape[0]
    if len(x.shape) != 2 or (known(x.shape[1]) and x.shape[1] != 3 * d):
        raise ctx.error(f"Input '{x.name}' {fmt_shape(x.shape)}: expected [batch, {3 * d}] (3 * D, D = {d})")
    if len(h_prev.shape) != 2 or (known(h_prev.shape[1]) and h_prev.shape[1] != d):
        raise ctx.error(f"HiddenPrev '{h_prev.name}' {fmt_shape(h_prev.shape)}: expected [batch, {d}]")
    if ctx.has_input("Bias") and tuple(ctx.input_shape("Bias")) != (1, 3 * d):
        raise ctx.error(f"Bias {fmt_shape(ctx.input_shape('Bias'))}: expected [1, {3 * d}]")
    ctx.set_output("Gate", (x.shape[0], 3 * d), x.dtype)
    ctx.set_output("ResetHiddenPrev", (x.shape[0], d), x.dtype)
    ctx.set_output("Hidden", (x.shape[0], d), x.dtype)


def _gru_unit(xp, x, h_prev, weight, bias, *, activation, gate_activation, origin_mode):
    """One GRU step; Gate holds the activated [update, reset, candidate]."""
    gates_in = x if bias is None else x + reshape(xp, bias, (-1,))
    acts = (UNIT_ACTIVATIONS[gate_activation], UNIT_ACTIVATIONS[activation])
    return gru_step(xp, gates_in, h_prev, *split_gru_weight(xp, weight), acts, origin_mode)


def _gru_unit_grad(xp, x, h_prev, weight, bias, gate, reset, dh, *, activation, gate_activation, origin_mode, need):
    acts = (UNIT_ACTIVATIONS[gate_activation], UNIT_ACTIVATIONS[activation])
    gate_grad, dh_prev = gru_step_grad(xp, dh, gate, h_prev, *split_gru_weight(xp, weight), acts, origin_mode)
    d_weight = gru_weight_grad(xp, h_prev, reset, gate_grad) if "Weight@GRAD" in need else None
    d_bias = reshape(xp, xp.sum(gate_grad, axis=0), (1, -1)) if bias is not None and "Bias@GRAD" in need else None
    return gate_grad, dh_prev, d_weight, d_bias


register_with_grad(
    "gru_unit",
    inputs=("Input", "HiddenPrev", "Weight", "Bias?"),
    outputs=("Gate", "ResetHiddenPrev", "Hidden"),
    attrs={"activation": 2, "gate_activation": 1, "origin_mode": False},
    infer_shape=_gru_unit_infer,
    kernel=_gru_unit,
    grad_inputs=("Input", "HiddenPrev", "Weight", "Bias?", "Gate", "ResetHiddenPrev", "Hidden@GRAD"),
    grads=("Input@GRAD", "HiddenPrev@GRAD", "Weight@GRAD", "Bias@GRAD"),
    grad_kernel=_gru_unit_grad,
)
