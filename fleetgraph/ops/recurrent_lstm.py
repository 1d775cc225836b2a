"""LSTM over LoD sequences: lstm (dynamic_lstm) and lstmp (dynamic_lstmp, which carries a projection
of the hidden state from step to step instead of the state itself), batched over time by the plan of
recurrent.py. One forward and one backward loop run both, as Paddle's LstmUnitFunctor does."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..ir import InferContext
from ..ir.errors import fmt_shape
from ..ir.registry import infer_grad_shapes
from ._xp import mask, reshape
from .recurrent import (
    _batches,
    _check_activations,
    _check_state,
    _grown,
    _initial_grad,
    _joined,
    _ordered_initial,
    _previous,
    _recurrent_infer,
    _to_batch,
    _to_sequences,
)
from .recurrent_cells import ACTIVATIONS, Activation, register_with_grad
from .sequence import _sequence_var, _sequences

# -- one loop forward, one backward, for lstm and lstmp -------------------------------------------


@dataclass(frozen=True)
class _Cell:
    """The weights and attrs a step reads. Bias holds the 4D gate biases, then (use_peepholes) the
    input, forget and output gates' peephole weights; `proj` is lstmp's ProjWeight [D, P]."""

    weight: Any
    peep: tuple | None
    gate: Activation
    cell: Activation
    cand: Activation
    cell_clip: float
    proj: Any = None
    proj_act: Activation | None = None
    proj_clip: float = 0.0

    @classmethod
    def of(
        cls,
        xp,
        weight,
        bias,
        proj=None,
        *,
        use_peepholes,
        gate_activation,
        cell_activation,
        candidate_activation,
        cell_clip=0.0,
        proj_activation="identity",
        proj_clip=0.0,
    ):
        d = weight.shape[1] // 4
        b = reshape(xp, bias, (-1,))
        peep = (b[4 * d : 5 * d], b[5 * d : 6 * d], b[6 * d : 7 * d]) if use_peepholes else None
        acts = (ACTIVATIONS[a] for a in (gate_activation, cell_activation, candidate_activation))
        return cls(weight, peep, *acts, float(cell_clip), proj, ACTIVATIONS[proj_activation], float(proj_clip))


def _clipped(xp, x, clip: float):
    return xp.clip(x, -clip, clip) if clip > 0 else x


def _unclipped(xp, grad, y, clip: float):
    """The gradient through a clip to [-clip, clip], from the clipped value: none where it clipped."""
    return grad * mask(xp, (y > -clip) & (y < clip), grad) if clip > 0 else grad


def _lstm_forward(xp, seq, h0, c0, bias, cell: _Cell, is_reverse: bool):
    """Every step in batch order: the plan, the activated gates, the cells, the activated cells, the
    hidden states and what the next step reads (the hidden state, or lstmp's projection of it)."""
    d = cell.weight.shape[1] // 4
    plan = _batches(seq.offsets, is_reverse)
    gates_in = _to_batch(xp, seq, plan) + reshape(xp, bias, (-1,))[: 4 * d]
    r = None if h0 is None else _ordered_initial(xp, h0, plan, cell.weight.shape[0], gates_in)
    c = _ordered_initial(xp, c0, plan, d, gates_in)
    steps = {"gate": [], "cell": [], "cell_act": [], "hidden": [], "out": []}
    for t in plan.steps:
        s, e = plan.span(t)
        g = gates_in[s:e, :] if r is None else gates_in[s:e, :] + r[: e - s, :] @ cell.weight
        c_prev = c[: e - s, :]
        i_pre, f_pre = g[:, d : 2 * d], g[:, 2 * d : 3 * d]
        if cell.peep is not None:
            i_pre, f_pre = i_pre + c_prev * cell.peep[0], f_pre + c_prev * cell.peep[1]
        v_in, v_i, v_f = cell.cand.forward(xp, g[:, :d]), cell.gate.forward(xp, i_pre), cell.gate.forward(xp, f_pre)
        c = _clipped(xp, v_in * v_i + c_prev * v_f, cell.cell_clip)
        o_pre = g[:, 3 * d :] if cell.peep is None else g[:, 3 * d :] + c * cell.peep[2]
        v_o, c_act = cell.gate.forward(xp, o_pre), cell.cell.forward(xp, c)
        h = v_o * c_act
        r = h if cell.proj is None else _clipped(xp, cell.proj_act.forward(xp, h @ cell.proj), cell.proj_clip)
        for key, value in zip(steps, (xp.concat([v_in, v_i, v_f, v_o], axis=1), c, c_act, h, r)):
            steps[key].append(value)
    widths = {"gate": 4 * d, "out": d if cell.proj is None else cell.proj.shape[1]}
    return plan, {key: _joined(xp, parts, widths.get(key, d), gates_in) for key, parts in steps.items()}


def _lstm_backward(xp, plan, cell: _Cell, h0, c0, batch_gate, batch_cell_act, c_batch, out_batch, dout, dcell):
    """Backward through time, last step first: the gate gradients in batch order, what step 0 hands
    its initial states, and (lstmp) the gradients of the projections before their activation."""
    d = cell.weight.shape[1] // 4
    c_prev_all = _previous(xp, _ordered_initial(xp, c0, plan, d, c_batch), c_batch, plan)
    dout_all = _to_batch(xp, dout, plan)
    dc_all = None if dcell is None else _to_batch(xp, dcell, plan)
    peep = cell.peep
    grads, proj_grads, carry_r, carry_c = [], [], None, None
    for t in reversed(plan.steps):
        s, e = plan.span(t)
        dh = _grown(xp, dout_all[s:e, :], carry_r)
        if cell.proj is not None:
            r = out_batch[s:e, :]
            dh = cell.proj_act.backward(xp, _unclipped(xp, dh, r, cell.proj_clip), r)
            proj_grads.append(dh)
            dh = dh @ cell.proj.T
        g, c_act, c_prev = batch_gate[s:e, :], batch_cell_act[s:e, :], c_prev_all[s:e, :]
        v_in, v_i, v_f, v_o = g[:, :d], g[:, d : 2 * d], g[:, 2 * d : 3 * d], g[:, 3 * d :]
        d_o = cell.gate.backward(xp, dh * c_act, v_o)
        dc = _grown(xp, cell.cell.backward(xp, dh * v_o, c_act), carry_c)
        dc = dc if dc_all is None else dc + dc_all[s:e, :]
        dc = _unclipped(xp, dc if peep is None else dc + d_o * peep[2], c_batch[s:e, :], cell.cell_clip)
        d_in = cell.cand.backward(xp, dc * v_i, v_in)
        d_i, d_f = cell.gate.backward(xp, dc * v_in, v_i), cell.gate.backward(xp, dc * c_prev, v_f)
        carry_c = dc * v_f if peep is None else dc * v_f + d_i * peep[0] + d_f * peep[1]
        step = xp.concat([d_in, d_i, d_f, d_o], axis=1)
        carry_r = step @ cell.weight.T
        grads.append(step)
    gate_grad = _joined(xp, grads[::-1], 4 * d, batch_gate)
    proj_grad = _joined(xp, proj_grads[::-1], out_batch.shape[1], batch_gate) if cell.proj is not None else None
    d_h0 = None if h0 is None else _initial_grad(xp, carry_r, plan, cell.weight.shape[0], batch_gate)
    d_c0 = None if c0 is None else _initial_grad(xp, carry_c, plan, d, batch_gate)
    return gate_grad, proj_grad, c_prev_all, d_h0, d_c0


def _weight_grads(xp, plan, cell: _Cell, h0, out_batch, c_batch, c_prev_all, gate_grad, need):
    """Weight@GRAD from what each step read, and Bias@GRAD: the gate biases', then the peepholes'
    (the input and forget gates look at the previous cell, the output gate at the new one)."""
    d_weight = d_bias = None
    if "Weight@GRAD" in need:
        initial = _ordered_initial(xp, h0, plan, cell.weight.shape[0], out_batch)
        d_weight = _previous(xp, initial, out_batch, plan).T @ gate_grad
    if "Bias@GRAD" in need:
        d = cell.weight.shape[1] // 4
        parts = [xp.sum(gate_grad, axis=0)]
        if cell.peep is not None:
            parts += [xp.sum(gate_grad[:, k * d : (k + 1) * d] * c_prev_all, axis=0) for k in (1, 2)]
            parts.append(xp.sum(gate_grad[:, 3 * d :] * c_batch, axis=0))
        d_bias = reshape(xp, xp.concat(parts), (1, -1))
    return d_weight, d_bias


# -- lstm -----------------------------------------------------------------------------------------

_ACTIVATION_ATTRS = ("gate_activation", "cell_activation", "candidate_activation")


def _check_bias(ctx: InferContext, d: int) -> None:
    bias = ctx.input_var("Bias")
    width = (7 if ctx.attr("use_peepholes") else 4) * d
    if tuple(bias.shape) != (1, width):
        raise ctx.error(
            f"Bias '{bias.name}' {fmt_shape(bias.shape)}: expected [1, {width}] "
            f"(use_peepholes={ctx.attr('use_peepholes')}, D = {d})"
        )


def _lstm_infer(ctx: InferContext) -> None:
    d, shape = _recurrent_infer(ctx, 4)
    _check_activations(ctx, _ACTIVATION_ATTRS)
    _check_bias(ctx, d)
    for slot in ("H0", "C0"):
        _check_state(ctx, slot, d)
    lod_level, dtype = ctx.input_var("Input").lod_level, ctx.input_var("Weight").dtype
    ctx.set_output("Hidden", (shape[0], d), dtype, lod_level=lod_level)
    ctx.set_output("Cell", (shape[0], d), dtype, lod_level=lod_level)
    ctx.set_output("BatchGate", shape, dtype)
    ctx.set_output("BatchCellPreAct", (shape[0], d), dtype)


def _lstm(xp, input, h0, c0, weight, bias, *, is_reverse, **attrs):
    """Paddle's lstm op: gates [candidate, input, forget, output] of Input + Bias + h_prev @ Weight;
    BatchGate holds them activated and BatchCellPreAct the activated cell, both in batch order."""
    seq = _sequences(input, "lstm: Input", levels=1)
    plan, out = _lstm_forward(xp, seq, h0, c0, bias, _Cell.of(xp, weight, bias, **attrs), is_reverse)
    return (
        seq.with_data(_to_sequences(xp, out["hidden"], plan)),
        seq.with_data(_to_sequences(xp, out["cell"], plan)),
        out["gate"],
        out["cell_act"],
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
    is_reverse,
    need,
    **attrs,
):
    """From the forward's BatchGate and BatchCellPreAct. Unlike Paddle's kernel, which drops it, a
    gradient of Cell counts too."""
    seq = _sequences(input, "lstm_grad: Input", levels=1)
    plan, spec = _batches(seq.offsets, is_reverse), _Cell.of(xp, weight, bias, **attrs)
    c_batch, h_batch = _to_batch(xp, cell, plan), _to_batch(xp, hidden, plan)
    gate_grad, _, c_prev_all, d_h0, d_c0 = _lstm_backward(
        xp, plan, spec, h0, c0, batch_gate, batch_cell_act, c_batch, h_batch, dhidden, dcell
    )
    d_weight, d_bias = _weight_grads(xp, plan, spec, h0, h_batch, c_batch, c_prev_all, gate_grad, need)
    return seq.with_data(_to_sequences(xp, gate_grad, plan)), d_h0, d_c0, d_weight, d_bias


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

# -- lstmp ----------------------------------------------------------------------------------------


def _lstmp_infer(ctx: InferContext) -> None:
    x, w, proj = _sequence_var(ctx, "Input"), ctx.input_var("Weight"), ctx.input_var("ProjWeight")
    if len(proj.shape) != 2 or len(w.shape) != 2 or w.shape[0] != proj.shape[1] or w.shape[1] != 4 * proj.shape[0]:
        raise ctx.error(
            f"Weight '{w.name}' {fmt_shape(w.shape)}, ProjWeight '{proj.name}' {fmt_shape(proj.shape)}: "
            "expected [P, 4 * D] and [D, P]"
        )
    d, p = proj.shape
    if len(x.shape) != 2 or x.shape[1] != 4 * d:
        raise ctx.error(f"Input '{x.name}' {fmt_shape(x.shape)}: expected [T, {4 * d}] (4 * D, D = {d})")
    _check_activations(ctx, (*_ACTIVATION_ATTRS, "proj_activation"))
    _check_bias(ctx, d)
    _check_state(ctx, "H0", p)
    _check_state(ctx, "C0", d)
    ctx.set_output("Projection", (x.shape[0], p), w.dtype, lod_level=x.lod_level)
    ctx.set_output("Cell", (x.shape[0], d), w.dtype, lod_level=x.lod_level)
    ctx.set_output("BatchGate", x.shape, w.dtype)
    for slot in ("BatchCellPreAct", "BatchHidden"):
        ctx.set_output(slot, (x.shape[0], d), w.dtype)


def _lstmp_grad_infer(ctx: InferContext) -> None:
    """Paddle's lstmp_grad reads no Input: Input@GRAD takes BatchGate's shape and Cell's LoD."""
    infer_grad_shapes(ctx)
    gate, cell = ctx.input_var("BatchGate"), ctx.input_var("Cell")
    ctx.set_output("Input@GRAD", gate.shape, gate.dtype, lod_level=cell.lod_level)


def _lstmp(xp, input, h0, c0, weight, proj_weight, bias, *, is_reverse, **attrs):
    """Paddle's lstmp op: an lstm whose step reads r_prev = proj_activation(h_prev @ ProjWeight),
    clipped to proj_clip, with cells clipped to cell_clip (0: no clip); BatchHidden holds h.
    (Paddle 1.8's kernel applies cell_activation where proj_activation is not identity; the two
    agree in its tests and its layer's defaults.)"""
    seq = _sequences(input, "lstmp: Input", levels=1)
    spec = _Cell.of(xp, weight, bias, proj_weight, **attrs)
    plan, out = _lstm_forward(xp, seq, h0, c0, bias, spec, is_reverse)
    return (
        seq.with_data(_to_sequences(xp, out["out"], plan)),
        seq.with_data(_to_sequences(xp, out["cell"], plan)),
        out["gate"],
        out["cell_act"],
        out["hidden"],
    )


def _lstmp_grad(
    xp,
    weight,
    proj_weight,
    bias,
    projection,
    cell,
    batch_gate,
    batch_cell_act,
    batch_hidden,
    h0,
    c0,
    dprojection,
    dcell,
    *,
    is_reverse,
    need,
    **attrs,
):
    seq = _sequences(cell, "lstmp_grad: Cell", levels=1)
    plan, spec = _batches(seq.offsets, is_reverse), _Cell.of(xp, weight, bias, proj_weight, **attrs)
    c_batch, r_batch = _to_batch(xp, cell, plan), _to_batch(xp, projection, plan)
    gate_grad, proj_grad, c_prev_all, d_h0, d_c0 = _lstm_backward(
        xp, plan, spec, h0, c0, batch_gate, batch_cell_act, c_batch, r_batch, dprojection, dcell
    )
    d_weight, d_bias = _weight_grads(xp, plan, spec, h0, r_batch, c_batch, c_prev_all, gate_grad, need)
    d_proj = batch_hidden.T @ proj_grad if "ProjWeight@GRAD" in need else None
    return seq.with_data(_to_sequences(xp, gate_grad, plan)), d_weight, d_proj, d_bias, d_h0, d_c0


register_with_grad(
    "lstmp",
    inputs=("Input", "H0?", "C0?", "Weight", "ProjWeight", "Bias"),
    outputs=("Projection", "Cell", "BatchGate", "BatchCellPreAct", "BatchHidden"),
    attrs={**_LSTM_ATTRS, "cell_clip": 0.0, "proj_clip": 0.0, "proj_activation": "tanh"},
    infer_shape=_lstmp_infer,
    kernel=_lstmp,
    takes_lod=True,
    grad_inputs=(
        *("Weight", "ProjWeight", "Bias", "Projection", "Cell", "BatchGate", "BatchCellPreAct", "BatchHidden"),
        *("H0?", "C0?", "Projection@GRAD", "Cell@GRAD?"),
    ),
    grads=("Input@GRAD", "Weight@GRAD", "ProjWeight@GRAD", "Bias@GRAD", "H0@GRAD", "C0@GRAD"),
    grad_kernel=_lstmp_grad,
    grad_infer=_lstmp_grad_infer,
)
