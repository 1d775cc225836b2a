"""Recurrent ops over LoD sequences: lstm (dynamic_lstm) and gru (dynamic_gru), run as Paddle's
kernels run them, batched over time: the sequences sorted longest first, step t one matrix product
over the rows of every sequence still running (Paddle's LoD-to-batch reorder, sequence2batch.h)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import InferContext
from ..ir.errors import fmt_shape
from ._common import known
from ._xp import pad, reshape
from .lod_tensor import strip
from .recurrent_cells import (
    ACTIVATIONS,
    GATE_ACTIVATIONS,
    gru_step,
    gru_step_grad,
    gru_weight_grad,
    register_with_grad,
    split_gru_weight,
)
from .sequence import _sequence_var, _sequences

# -- the batch plan: LoD rows to time-major batches and back ----------------------------------------


@dataclass(frozen=True)
class _Batches:
    """Step t holds batch rows starts[t]:starts[t + 1], one per sequence still running, longest
    sequence first; `rows[k]` is the input row of batch row k (Paddle's batch LoD level 1),
    `order` the sequences longest first (level 2, a stable sort), `prev[k - starts[1]]` the batch
    row one step before batch row k of the same sequence."""

    rows: np.ndarray
    starts: np.ndarray
    order: np.ndarray
    prev: np.ndarray

    @property
    def steps(self) -> range:
        return range(len(self.starts) - 1)

    def span(self, t: int) -> tuple[int, int]:
        return int(self.starts[t]), int(self.starts[t + 1])

    @property
    def first(self) -> int:
        """How many sequences run at step 0 (the non-empty ones)."""
        return int(self.starts[1]) if len(self.starts) > 1 else 0


def _batches(offsets: np.ndarray, is_reverse: bool) -> _Batches:
    lengths = np.diff(offsets)
    order = np.argsort(-lengths, kind="stable")
    longest = int(lengths[order[0]]) if len(order) else 0
    sizes = (lengths[order][None, :] > np.arange(longest)[:, None]).sum(axis=1)
    starts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    step = np.repeat(np.arange(longest), sizes)
    rank = np.arange(int(starts[-1])) - np.repeat(starts[:-1], sizes)  # place among the step's sequences
    seq = order[rank]
    rows = offsets[seq + 1] - 1 - step if is_reverse else offsets[seq] + step
    later = step > 0
    prev = starts[step[later] - 1] + rank[later]
    return _Batches(rows.astype(np.int64), starts, order, prev.astype(np.int64))


def _to_batch(xp, rows, plan: _Batches):
    """LoD rows (a LoDTensor or its rows) in batch order."""
    return xp.take(strip(rows), xp.asarray(plan.rows), axis=0)


def _to_sequences(xp, batch, plan: _Batches):
    """Batch rows back in LoD order (the inverse permutation)."""
    return xp.take(batch, xp.asarray(np.argsort(plan.rows)), axis=0)


def _ordered_initial(xp, state, plan: _Batches, width: int, like):
    """The initial state (H0 or C0, one row per sequence) of the sequences that run, longest first;
    zeros where the op has none."""
    if state is None:
        return xp.zeros((plan.first, width), dtype=like.dtype)
    return xp.take(strip(state), xp.asarray(plan.order[: plan.first]), axis=0)


def _initial_grad(xp, carry, plan: _Batches, width: int, like):
    """The gradient of an initial state from the one carried back to step 0 (rows longest first):
    zeros for the empty sequences (every one when no step ran and nothing was carried)."""
    ordered = xp.zeros((0, width), dtype=like.dtype) if carry is None else carry
    full = pad(xp, ordered, ((0, len(plan.order) - ordered.shape[0]), (0, 0)))
    return xp.take(full, xp.asarray(np.argsort(plan.order)), axis=0)


def _previous(xp, initial, batch, plan: _Batches):
    """Each batch row's state one step before: the initial state at step 0, else the batch row of
    the same sequence one step earlier."""
    return xp.concat([initial, xp.take(batch, xp.asarray(plan.prev), axis=0)], axis=0)


def _grown(xp, grad, carry):
    """`grad` plus the gradient carried back from the next step, which has as many rows as
    sequences still running then (the first ones: the longest come first)."""
    if carry is None:
        return grad
    return grad + pad(xp, carry, ((0, grad.shape[0] - carry.shape[0]), (0, 0)))


def _joined(xp, parts, width: int, like):
    return xp.concat(parts, axis=0) if parts else xp.zeros((0, width), dtype=like.dtype)


def _check_activations(ctx: InferContext, names: tuple[str, ...]) -> None:
    for name in names:
        if ctx.attr(name) not in ACTIVATIONS:
            raise ctx.error(f"{name} {ctx.attr(name)!r} is unknown; expected one of {', '.join(GATE_ACTIVATIONS)}")


def _check_state(ctx: InferContext, slot: str, width: int) -> None:
    if not ctx.has_input(slot):
        return
    var = ctx.input_var(slot)
    if len(var.shape) != 2 or (known(width) and known(var.shape[1]) and var.shape[1] != width):
        raise ctx.error(f"{slot} '{var.name}' {fmt_shape(var.shape)}: expected [sequences, {width}]")


def _recurrent_infer(ctx: InferContext, gates: int) -> tuple[int, tuple[int, ...]]:
    """The checks lstm and gru share: Input [T, gates * D] with LoD, Weight [D, gates * D]; gives
    D and Input's shape."""
    x, w = _sequence_var(ctx, "Input"), ctx.input_var("Weight")
    if len(w.shape) != 2 or w.shape[1] != gates * w.shape[0]:
        raise ctx.error(f"Weight '{w.name}' {fmt_shape(w.shape)}: expected [D, {gates} * D]")
    d = w.shape[0]
    if len(x.shape) != 2 or (known(x.shape[1]) and x.shape[1] != gates * d):
        raise ctx.error(f"Input '{x.name}' {fmt_shape(x.shape)}: expected [T, {gates * d}] ({gates} * D, D = {d})")
    return d, x.shape


# -- lstm -----------------------------------------------------------------------------------------

_LSTM_ACTIVATIONS = ("gate_activation", "cell_activation", "candidate_activation")


def _lstm_infer(ctx: InferContext) -> None:
    d, shape = _recurrent_infer(ctx, 4)
    _check_activations(ctx, _LSTM_ACTIVATIONS)
    bias = ctx.input_var("Bias")
    width = (7 if ctx.attr("use_peepholes") else 4) * d
    if tuple(bias.shape) != (1, width):
        raise ctx.error(
            f"Bias '{bias.name}' {fmt_shape(bias.shape)}: expected [1, {width}] "
            f"(use_peepholes={ctx.attr('use_peepholes')}, D = {d})"
        )
    for slot in ("H0", "C0"):
        _check_state(ctx, slot, d)
    lod_level = ctx.input_var("Input").lod_level
    ctx.set_output("Hidden", (shape[0], d), bias.dtype, lod_level=lod_level)
    ctx.set_output("Cell", (shape[0], d), bias.dtype, lod_level=lod_level)
    ctx.set_output("BatchGate", shape, bias.dtype)
    ctx.set_output("BatchCellPreAct", (shape[0], d), bias.dtype)


def _peepholes(xp, bias, d: int, use_peepholes: bool):
    """The peephole weights (input, forget, output gate) after the 4D gate biases, else None."""
    if not use_peepholes:
        return None
    b = reshape(xp, bias, (-1,))
    return b[4 * d : 5 * d], b[5 * d : 6 * d], b[6 * d : 7 * d]


def _lstm(
    xp,
    input,
    h0,
    c0,
    weight,
    bias,
    *,
    use_peepholes,
    is_reverse,
    gate_activation,
    cell_activation,
    candidate_activation,
):
    """Paddle's lstm op: gates [candidate, input, forget, output] of Input + Bias + h_prev @ Weight;
    BatchGate holds them activated and BatchCellPreAct the activated cell, both in batch order."""
    seq = _sequences(input, "lstm: Input", levels=1)
    d = weight.shape[0]
    plan = _batches(seq.offsets, is_reverse)
    gates_in = _to_batch(xp, seq, plan) + reshape(xp, bias, (-1,))[: 4 * d]
    peep = _peepholes(xp, bias, d, use_peepholes)
    gate, cell, cand = (ACTIVATIONS[a] for a in (gate_activation, cell_activation, candidate_activation))
    h = None if h0 is None else _ordered_initial(xp, h0, plan, d, gates_in)
    c = _ordered_initial(xp, c0, plan, d, gates_in)
    gates, cells, cell_acts, hiddens = [], [], [], []
    for t in plan.steps:
        s, e = plan.span(t)
        g = gates_in[s:e, :] if h is None else gates_in[s:e, :] + h[: e - s, :] @ weight
        c_prev = c[: e - s, :]
        i_pre, f_pre = g[:, d : 2 * d], g[:, 2 * d : 3 * d]
        if peep is not None:
            i_pre, f_pre = i_pre + c_prev * peep[0], f_pre + c_prev * peep[1]
        v_in, v_i, v_f = cand.forward(xp, g[:, :d]), gate.forward(xp, i_pre), gate.forward(xp, f_pre)
        c = v_in * v_i + c_prev * v_f
        o_pre = g[:, 3 * d :] if peep is None else g[:, 3 * d :] + c * peep[2]
        v_o, c_act = gate.forward(xp, o_pre), cell.forward(xp, c)
        h = v_o * c_act
        gates.append(xp.concat([v_in, v_i, v_f, v_o], axis=1))
        cells.append(c)
        cell_acts.append(c_act)
        hiddens.append(h)
    hidden, cell_out = (_joined(xp, p, d, gates_in) for p in (hiddens, cells))
    return (
        seq.with_data(_to_sequences(xp, hidden, plan)),
        seq.with_data(_to_sequences(xp, cell_out, plan)),
        _joined(xp, gates, 4 * d, gates_in),
        _joined(xp, cell_acts, d, gates_in),
    )


def _lstm_grad(
    xp,
    input,
    h0,
    c0,
    weight,
    bias,
    hidden,
    cell,
    batch_gate,
    batch_cell_act,
    dhidden,
    dcell,
    *,
    use_peepholes,
    is_reverse,
    gate_activation,
    cell_activation,
    candidate_activation,
    need,
):
    """Backward through time, last step first, from the forward's BatchGate and BatchCellPreAct.
    Unlike Paddle's kernel, which drops it, a gradient of Cell counts too."""
    seq = _sequences(input, "lstm_grad: Input", levels=1)
    d = weight.shape[0]
    plan = _batches(seq.offsets, is_reverse)
    peep = _peepholes(xp, bias, d, use_peepholes)
    gate, cell_fn, cand = (ACTIVATIONS[a] for a in (gate_activation, cell_activation, candidate_activation))
    c_batch = _to_batch(xp, cell, plan)
    c_prev_all = _previous(xp, _ordered_initial(xp, c0, plan, d, c_batch), c_batch, plan)
    dh_all = _to_batch(xp, dhidden, plan)
    dc_all = None if dcell is None else _to_batch(xp, dcell, plan)
    grads, carry_h, carry_c = [], None, None
    for t in reversed(plan.steps):
        s, e = plan.span(t)
        g = batch_gate[s:e, :]
        v_in, v_i, v_f, v_o = g[:, :d], g[:, d : 2 * d], g[:, 2 * d : 3 * d], g[:, 3 * d :]
        c_act, c_prev = batch_cell_act[s:e, :], c_prev_all[s:e, :]
        dh = _grown(xp, dh_all[s:e, :], carry_h)
        d_o = gate.backward(xp, dh * c_act, v_o)
        dc = _grown(xp, cell_fn.backward(xp, dh * v_o, c_act), carry_c)
        dc = dc if dc_all is None else dc + dc_all[s:e, :]
        dc = dc if peep is None else dc + d_o * peep[2]
        d_in = cand.backward(xp, dc * v_i, v_in)
        d_i, d_f = gate.backward(xp, dc * v_in, v_i), gate.backward(xp, dc * c_prev, v_f)
        carry_c = dc * v_f if peep is None else dc * v_f + d_i * peep[0] + d_f * peep[1]
        step = xp.concat([d_in, d_i, d_f, d_o], axis=1)
        carry_h = step @ weight.T
        grads.append(step)
    gate_grad = _joined(xp, grads[::-1], 4 * d, batch_gate)
    d_input = seq.with_data(_to_sequences(xp, gate_grad, plan)) if "Input@GRAD" in need else None
    d_weight = d_bias = None
    if "Weight@GRAD" in need:
        h_batch = _to_batch(xp, hidden, plan)
        d_weight = _previous(xp, _ordered_initial(xp, h0, plan, d, h_batch), h_batch, plan).T @ gate_grad
    if "Bias@GRAD" in need:
        parts = [xp.sum(gate_grad, axis=0)]
        if peep is not None:  # the input and forget gates peep at the previous cell, the output gate at the new
            parts += [xp.sum(gate_grad[:, k * d : (k + 1) * d] * c_prev_all, axis=0) for k in (1, 2)]
            parts.append(xp.sum(gate_grad[:, 3 * d :] * c_batch, axis=0))
        d_bias = reshape(xp, xp.concat(parts), (1, -1))
    d_h0 = None if h0 is None else _initial_grad(xp, carry_h, plan, d, batch_gate)
    d_c0 = None if c0 is None else _initial_grad(xp, carry_c, plan, d, batch_gate)
    return d_input, d_h0, d_c0, d_weight, d_bias


_LSTM_ATTRS = {
    "use_peepholes": True,
    "is_reverse": False,
    "gate_activation": "sigmoid",
    "cell_activation": "tanh",
    "candidate_activation": "tanh",
}
register_with_grad(
    "lstm",
    inputs=("Input", "H0?", "C0?", "Weight", "Bias"),
    outputs=("Hidden", "Cell", "BatchGate", "BatchCellPreAct"),
    attrs=_LSTM_ATTRS,
    infer_shape=_lstm_infer,
    kernel=_lstm,
    takes_lod=True,
    grad_inputs=(
        *("Input", "H0?", "C0?", "Weight", "Bias", "Hidden", "Cell", "BatchGate", "BatchCellPreAct"),
        *("Hidden@GRAD", "Cell@GRAD?"),
    ),
    grads=("Input@GRAD", "H0@GRAD", "C0@GRAD", "Weight@GRAD", "Bias@GRAD"),
    grad_kernel=_lstm_grad,
)

# -- gru ------------------------------------------------------------------------------------------


def _gru_infer(ctx: InferContext) -> None:
    d, shape = _recurrent_infer(ctx, 3)
    _check_activations(ctx, ("activation", "gate_activation"))
    if ctx.has_input("Bias"):
        bias = ctx.input_var("Bias")
        if tuple(bias.shape) != (1, 3 * d):
            raise ctx.error(f"Bias '{bias.name}' {fmt_shape(bias.shape)}: expected [1, {3 * d}] (D = {d})")
    _check_state(ctx, "H0", d)
    dtype = ctx.input_var("Weight").dtype
    ctx.set_output("BatchGate", shape, dtype)
    ctx.set_output("BatchResetHiddenPrev", (shape[0], d), dtype)
    ctx.set_output("BatchHidden", (shape[0], d), dtype)
    ctx.set_output("Hidden", (shape[0], d), dtype, lod_level=ctx.input_var("Input").lod_level)


def _gru(xp, input, h0, weight, bias, *, activation, gate_activation, is_reverse, origin_mode):
    """Paddle's gru op: gates [update, reset, candidate]; BatchGate holds them activated,
    BatchResetHiddenPrev reset * h_prev and BatchHidden the hidden state, in batch order."""
    seq = _sequences(input, "gru: Input", levels=1)
    d = weight.shape[0]
    plan = _batches(seq.offsets, is_reverse)
    gates_in = _to_batch(xp, seq, plan)
    gates_in = gates_in if bias is None else gates_in + reshape(xp, bias, (-1,))
    acts = (ACTIVATIONS[gate_activation], ACTIVATIONS[activation])
    w_ur, w_c = split_gru_weight(xp, weight)
    h = _ordered_initial(xp, h0, plan, d, gates_in)
    gates, resets, hiddens = [], [], []
    for t in plan.steps:
        s, e = plan.span(t)
        g, reset, h = gru_step(xp, gates_in[s:e, :], h[: e - s, :], w_ur, w_c, acts, origin_mode)
        gates.append(g)
        resets.append(reset)
        hiddens.append(h)
    batch_hidden = _joined(xp, hiddens, d, gates_in)
    return (
        _joined(xp, gates, 3 * d, gates_in),
        _joined(xp, resets, d, gates_in),
        batch_hidden,
        seq.with_data(_to_sequences(xp, batch_hidden, plan)),
    )


def _gru_grad(
    xp,
    input,
    h0,
    weight,
    bias,
    batch_gate,
    batch_reset,
    batch_hidden,
    hidden,
    dhidden,
    *,
    activation,
    gate_activation,
    is_reverse,
    origin_mode,
    need,
):
    """Backward through time, last step first, from the forward's batch-ordered outputs."""
    seq = _sequences(input, "gru_grad: Input", levels=1)
    d = weight.shape[0]
    plan = _batches(seq.offsets, is_reverse)
    acts = (ACTIVATIONS[gate_activation], ACTIVATIONS[activation])
    w_ur, w_c = split_gru_weight(xp, weight)
    h_prev_all = _previous(xp, _ordered_initial(xp, h0, plan, d, batch_hidden), batch_hidden, plan)
    dh_all = _to_batch(xp, dhidden, plan)
    grads, carry = [], None
    for t in reversed(plan.steps):
        s, e = plan.span(t)
        dh = _grown(xp, dh_all[s:e, :], carry)
        step, carry = gru_step_grad(xp, dh, batch_gate[s:e, :], h_prev_all[s:e, :], w_ur, w_c, acts, origin_mode)
        grads.append(step)
    gate_grad = _joined(xp, grads[::-1], 3 * d, batch_gate)
    d_input = seq.with_data(_to_sequences(xp, gate_grad, plan)) if "Input@GRAD" in need else None
    d_weight = gru_weight_grad(xp, h_prev_all, batch_reset, gate_grad) if "Weight@GRAD" in need else None
    d_bias = reshape(xp, xp.sum(gate_grad, axis=0), (1, -1)) if bias is not None and "Bias@GRAD" in need else None
    d_h0 = None if h0 is None else _initial_grad(xp, carry, plan, d, batch_gate)
    return d_input, d_h0, d_weight, d_bias


register_with_grad(
    "gru",
    inputs=("Input", "H0?", "Weight", "Bias?"),
    outputs=("BatchGate", "BatchResetHiddenPrev", "BatchHidden", "Hidden"),
    attrs={"activation": "tanh", "gate_activation": "sigmoid", "is_reverse": False, "origin_mode": False},
    infer_shape=_gru_infer,
    kernel=_gru,
    takes_lod=True,
    grad_inputs=(
        *("Input", "H0?", "Weight", "Bias?", "BatchGate", "BatchResetHiddenPrev", "BatchHidden", "Hidden"),
        "Hidden@GRAD",
    ),
    grads=("Input@GRAD", "H0@GRAD", "Weight@GRAD", "Bias@GRAD"),
    grad_kernel=_gru_grad,
)
