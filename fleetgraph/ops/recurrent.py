"""Recurrent ops over LoD sequences run as Paddle's kernels run them, batched over time: the
sequences sorted longest first, step t one matrix product over the rows of every sequence still
running (Paddle's LoD-to-batch reorder, sequence2batch.h). The plan of that reorder, the checks the
ops share, and gru (dynamic_gru); lstm and lstmp are in recurrent_lstm.py."""

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
    ended = grad.shape[0] - carry.shape[0]  # sequences whose last step this is
    return grad + (pad(xp, carry, ((0, ended), (0, 0))) if ended else carry)


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
