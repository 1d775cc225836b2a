"""Paddle 2.x's fused `rnn` op (paddle.nn.LSTM, GRU and SimpleRNN): every layer and direction of a
time-major [T, B, I] input in one op, with Paddle's slots, attrs and WeightList order (all weight_ih /
weight_hh pairs, per layer and direction, then all bias_ih / bias_hh pairs).

Each layer and direction runs batched: one matmul projects the inputs of all steps, then one matmul
per step carries the recurrence. The formulas are those of Paddle 2.0's LSTMCell (gates i, f, g, o),
GRUCell (r, z, c with the reset gate applied after the hidden matmul) and SimpleRNNCell. A sequence
shorter than T (SequenceLength) keeps its state past its end and gives zero outputs there, as Paddle's
kernel does; the reverse direction starts at each sequence's last step. Sigmoids are computed as
0.5 * tanh(x / 2) + 0.5, with the halving folded into the weights, so one tanh activates all gates.

Reserve holds what the gradient reads, a [layers * directions, T, B, width] array (flattened) that
each layer and direction writes its block of step by step: LSTM [tanh of the scaled gates (4H),
state h, state c], GRU [r, z, c, state h, the hidden matmul's c part], RNN [state h]. DropoutState
holds the masks of the dropout between layers.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ._common import known
from ._xp import astype, contiguous, full, reshape, total

# -- one layer and direction per mode: forward writes its Reserve block, backward reads it --------


def _scaled(xp, gates: tuple[float, ...], h: int, dtype):
    """A [G * H] vector scaling each gate's columns (0.5 for a sigmoid computed through tanh)."""
    return xp.concat([full(xp, (h,), s, dtype) for s in gates])


def _steps(t: int, reverse: bool):
    return range(t - 1, -1, -1) if reverse else range(t)


def _previous(xp, seq, first, reverse: bool):
    """The state each step starts from: `first` at the first step processed, else the one before."""
    if reverse:
        return xp.concat([seq[1:, ...], first[None, ...]], axis=0)
    return xp.concat([first[None, ...], seq[:-1, ...]], axis=0)


def _carried(m, new, old):
    """A state past its sequence's end (m = 0) stays as it was."""
    return new if m is None else old + m * (new - old)


def _through(m, t: int, g, plus=None):
    """Backward through step t's carry: (the gradient `g` (plus the step's output gradient `plus`)
    where the step is within its sequence, `g` where it is not, which passes on unchanged), or
    (g + plus, None) without a mask."""
    on = g if plus is None else plus + g
    if m is None:
        return on, None
    mt = m[t, ...]
    return mt * on, g - mt * g


def _kept(g, kept):
    return g if kept is None else g + kept


def _projection(xp, x, w_ih, bias, scale):
    """x @ (w_ih * scale).T + bias * scale for every step at once: [T, B, G * H]."""
    t, b, i = x.shape
    proj = reshape(xp, contiguous(xp, x), (t * b, i)) @ (w_ih.T * scale) + bias * scale
    return reshape(xp, proj, (t, b, w_ih.shape[0]))


def _lstm_forward(xp, x, w, states, m, reverse, buf, k):
    w_ih, w_hh, b_ih, b_hh = w
    (h, c), hid = states, w_hh.shape[1]
    scale = _scaled(xp, (0.5, 0.5, 1.0, 0.5), hid, x.dtype)
    proj, w_rec = _projection(xp, x, w_ih, b_ih + b_hh, scale), w_hh.T * scale
    for t in _steps(x.shape[0], reverse):
        a = xp.tanh(proj[t, ...] + h @ w_rec)
        s = 0.5 * a + 0.5
        c_new = s[:, hid : 2 * hid] * c + s[:, :hid] * a[:, 2 * hid : 3 * hid]
        h_new = s[:, 3 * hid :] * xp.tanh(c_new)
        mt = None if m is None else m[t, ...]
        h, c = _carried(mt, h_new, h), _carried(mt, c_new, c)
        buf[k, t, :, : 4 * hid] = a
        buf[k, t, :, 4 * hid : 5 * hid] = h
        buf[k, t, :, 5 * hid :] = c
    return h, c


def _lstm_backward(xp, buf, w, states, m, reverse, d_out, d_states):
    """The gradients of the pre-activation gates [T, B, 4H] (input and recurrent side alike), and of
    the initial states."""
    w_hh, (_, c0), hid = w[1], states, w[1].shape[1]
    a, cs = buf[..., : 4 * hid], buf[..., 5 * hid :]
    s = 0.5 * a + 0.5
    i, f, g, o = s[..., :hid], s[..., hid : 2 * hid], a[..., 2 * hid : 3 * hid], s[..., 3 * hid :]
    tc = xp.tanh(cs)
    c_prev = _previous(xp, cs, c0, reverse)
    to_c = o * (1.0 - tc * tc)
    local = xp.concat([g * i * (1.0 - i), c_prev * f * (1.0 - f), i * (1.0 - g * g), tc * o * (1.0 - o)], axis=-1)
    d_gates = xp.empty(a.shape, dtype=a.dtype)
    dh, dc = d_states
    for t in _steps(a.shape[0], not reverse):
        dhn, dh_kept = _through(m, t, dh, d_out[t, ...])
        dc_on, dc_kept = _through(m, t, dc)
        dcn = dhn * to_c[t, ...] + dc_on
        gt = xp.concat([dcn, dcn, dcn, dhn], axis=1) * local[t, ...]
        d_gates[t, ...] = gt
        dh, dc = _kept(gt @ w_hh, dh_kept), _kept(dcn * f[t, ...], dc_kept)
    return d_gates, d_gates, (dh, dc)


def _gru_forward(xp, x, w, states, m, reverse, buf, k):
    w_ih, w_hh, b_ih, b_hh = w
    (h,), hid = states, w_hh.shape[1]
    scale = _scaled(xp, (0.5, 0.5, 1.0), hid, x.dtype)
    rz_bias = b_hh * _scaled(xp, (1.0, 1.0, 0.0), hid, x.dtype)
    proj, w_rec, b_c = _projection(xp, x, w_ih, b_ih + rz_bias, scale), w_hh.T * scale, b_hh[2 * hid :]
    for t in _steps(x.shape[0], reverse):
        p, hg = proj[t, ...], h @ w_rec
        rz = 0.5 * xp.tanh(p[:, : 2 * hid] + hg[:, : 2 * hid]) + 0.5
        hc = hg[:, 2 * hid :] + b_c
        cand = xp.tanh(p[:, 2 * hid :] + rz[:, :hid] * hc)
        h = _carried(None if m is None else m[t, ...], cand + rz[:, hid:] * (h - cand), h)
        buf[k, t, :, : 2 * hid] = rz
        buf[k, t, :, 2 * hid : 3 * hid] = cand
        buf[k, t, :, 3 * hid : 4 * hid] = h
        buf[k, t, :, 4 * hid :] = hc
    return (h,)


def _gru_backward(xp, buf, w, states, m, reverse, d_out, d_states):
    """The gradients of the input-side gates [T, B, 3H] and of the hidden matmul's output (whose c
    part the reset gate scales), and of the initial state."""
    w_hh, hid = w[1], w[1].shape[1]
    r, z, cand = buf[..., :hid], buf[..., hid : 2 * hid], buf[..., 2 * hid : 3 * hid]
    hs, hc = buf[..., 3 * hid : 4 * hid], buf[..., 4 * hid :]
    to_c = (1.0 - z) * (1.0 - cand * cand)
    to_r = to_c * hc * r * (1.0 - r)
    to_z = (_previous(xp, hs, states[0], reverse) - cand) * z * (1.0 - z)
    local_in = xp.concat([to_r, to_z, to_c], axis=-1)
    local_rec = xp.concat([to_r, to_z, to_c * r], axis=-1)
    d_in, d_rec = xp.empty(local_in.shape, dtype=buf.dtype), xp.empty(local_in.shape, dtype=buf.dtype)
    (dh,) = d_states
    for t in _steps(buf.shape[0], not reverse):
        dhn, dh_kept = _through(m, t, dh, d_out[t, ...])
        tiled = xp.concat([dhn, dhn, dhn], axis=1)
        gr = tiled * local_rec[t, ...]
        d_in[t, ...], d_rec[t, ...] = tiled * local_in[t, ...], gr
        dh = _kept(gr @ w_hh + dhn * z[t, ...], dh_kept)
    return d_in, d_rec, (dh,)


def _simple_forward(act: Callable):
    def forward(xp, x, w, states, m, reverse, buf, k):
        w_ih, w_hh, b_ih, b_hh = w
        (h,) = states
        proj, w_rec = _projection(xp, x, w_ih, b_ih + b_hh, 1.0), w_hh.T
        for t in _steps(x.shape[0], reverse):
            h = _carried(None if m is None else m[t, ...], act(xp, proj[t, ...] + h @ w_rec), h)
            buf[k, t, ...] = h
        return (h,)

    return forward


def _simple_backward(slope: Callable):
    """`slope(xp, y)`: the activation's derivative from its output."""

    def backward(xp, buf, w, states, m, reverse, d_out, d_states):
        w_hh, local = w[1], slope(xp, buf)
        d_pre = xp.empty(buf.shape, dtype=buf.dtype)
        (dh,) = d_states
        for t in _steps(buf.shape[0], not reverse):
            dhn, dh_kept = _through(m, t, dh, d_out[t, ...])
            gp = dhn * local[t, ...]
            d_pre[t, ...] = gp
            dh = _kept(gp @ w_hh, dh_kept)
        return d_pre, d_pre, (dh,)

    return backward


@dataclass(frozen=True)
class _Mode:
    """A mode's gate count G, Reserve block width (in H), where its state h sits in the block, and
    its forward and backward over one layer and direction."""

    gates: int
    width: int
    hidden_at: int
    states: int
    forward: Callable
    backward: Callable


def _tanh(xp, v):
    return xp.tanh(v)


def _relu(xp, v):
    return xp.maximum(v, xp.zeros_like(v))


_MODES = {
    "LSTM": _Mode(4, 6, 4, 2, _lstm_forward, _lstm_backward),
    "GRU": _Mode(3, 5, 3, 1, _gru_forward, _gru_backward),
    "RNN_TANH": _Mode(
        1, 1, 0, 1, _simple_forward(lambda xp, v: xp.tanh(v)), _simple_backward(lambda xp, y: 1.0 - y * y)
    ),
    "RNN_RELU": _Mode(1, 1, 0, 1, _simple_forward(_relu), _simple_backward(lambda xp, y: astype(xp, y > 0, y.dtype))),
}

# -- the layers and directions ---------------------------------------------------------------------


def _cell_weights(weight_list, cells: int, k: int):
    """Layer-direction k's (weight_ih, weight_hh, bias_ih, bias_hh) from Paddle's WeightList order."""
    return (
        weight_list[2 * k],
        weight_list[2 * k + 1],
        weight_list[2 * cells + 2 * k],
        weight_list[2 * cells + 2 * k + 1],
    )


def _step_mask(xp, lengths, steps: int, dtype):
    """[T, B, 1]: 1 where step t is within sequence b, None when every sequence fills all T steps."""
    if lengths is None or int(xp.min(lengths)) >= steps:
        return None
    within = xp.arange(steps)[:, None] < astype(xp, lengths, "int64")[None, :]
    return astype(xp, within, dtype)[..., None]


def _hidden(xp, buf, mode: _Mode, hid: int, m):
    h = buf[..., mode.hidden_at * hid : (mode.hidden_at + 1) * hid]
    return contiguous(xp, h) if m is None else h * m


def _dropped(xp, x, keep, p: float):
    """Dropout between layers (upscale_in_train): kept values scaled by 1 / (1 - p)."""
    return x * astype(xp, keep, x.dtype) * (1.0 / (1.0 - p) if p < 1.0 else 0.0)


def _rnn(
    xp, input, pre_state, weight_list, sequence_length, *, mode, hidden_size, num_layers, is_bidirec, dropout_prob,
    is_test, rng, **_,
):  # fmt: skip
    spec, dirs = _MODES[mode], 2 if is_bidirec else 1
    cells = num_layers * dirs
    m = _step_mask(xp, sequence_length, input.shape[0], input.dtype)
    steps, batch = input.shape[0], input.shape[1]
    reserve = xp.empty((cells, steps, batch, spec.width * hidden_size), dtype=input.dtype)
    x, finals, drops = input, [[] for _ in pre_state], []
    for layer in range(num_layers):
        if layer > 0 and dropout_prob > 0.0 and not is_test:
            keep = xp.asarray(rng.uniform(size=x.shape) >= dropout_prob)
            drops.append(reshape(xp, astype(xp, keep, "uint8"), (-1,)))
            x = _dropped(xp, x, keep, dropout_prob)
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            w = _cell_weights(weight_list, cells, k)
            last = spec.forward(xp, x, w, [s[k, ...] for s in pre_state], m, d == 1, reserve, k)
            for i, s in enumerate(last):
                finals[i].append(s)
            outs.append(_hidden(xp, reserve[k, ...], spec, hidden_size, m))
        x = outs[0] if dirs == 1 else xp.concat(outs, axis=-1)
    dropout_state = xp.concat(drops) if drops else xp.zeros((0,), dtype=xp.uint8)
    return x, [xp.stack(f) for f in finals], reshape(xp, reserve, (-1,)), dropout_state


def _rnn_grad(
    xp, input, pre_state, weight_list, sequence_length, dropout_state, reserve, out, d_out, d_state, *, mode,
    hidden_size, num_layers, is_bidirec, dropout_prob, is_test, need, **_,
):  # fmt: skip
    spec, dirs, hid = _MODES[mode], 2 if is_bidirec else 1, hidden_size
    cells = num_layers * dirs
    steps, batch = input.shape[0], input.shape[1]
    m = _step_mask(xp, sequence_length, steps, input.dtype)
    blocks = reshape(xp, reserve, (cells, steps, batch, spec.width * hid))
    # step 1: each layer's input, again, from the Reserve blocks and dropout masks
    xs, keeps, start = [input], [None], 0
    for layer in range(1, num_layers):
        outs = [_hidden(xp, blocks[(layer - 1) * dirs + d, ...], spec, hid, m) for d in range(dirs)]
        x = outs[0] if dirs == 1 else xp.concat(outs, axis=-1)
        keep = None
        if dropout_prob > 0.0 and not is_test:
            keep = reshape(xp, dropout_state[start : start + x.size], x.shape)
            start += x.size
            x = _dropped(xp, x, keep, dropout_prob)
        xs.append(x)
        keeps.append(keep)
    # step 2: layers last to first, each direction's gradient through time, then its weights'
    d_states = [xp.zeros_like(s) if g is None else g for s, g in zip(pre_state, d_state or [None] * len(pre_state))]
    d_weights, d_initial = [None] * (4 * cells), [[None] * cells for _ in pre_state]
    g = d_out
    for layer in range(num_layers - 1, -1, -1):
        x, dx = xs[layer], None
        rows = reshape(xp, contiguous(xp, x), (steps * batch, x.shape[2]))
        for d in range(dirs):
            k = layer * dirs + d
            w = _cell_weights(weight_list, cells, k)
            states = [s[k, ...] for s in pre_state]
            d_in, d_rec, d_first = spec.backward(
                xp, blocks[k, ...], w, states, m, d == 1, g[..., d * hid : (d + 1) * hid], [s[k, ...] for s in d_states]
            )
            for i, v in enumerate(d_first):
                d_initial[i][k] = v
            h_prev = _previous(xp, _hidden(xp, blocks[k, ...], spec, hid, None), states[0], d == 1)
            d_in2 = reshape(xp, d_in, (steps * batch, -1))
            d_rec2 = d_in2 if d_rec is d_in else reshape(xp, d_rec, (steps * batch, -1))
            d_weights[2 * k] = d_in2.T @ rows
            d_weights[2 * k + 1] = d_rec2.T @ reshape(xp, h_prev, (steps * batch, hid))
            d_weights[2 * cells + 2 * k] = total(xp, d_in2, axis=0)
            d_weights[2 * cells + 2 * k + 1] = total(xp, d_rec2, axis=0)
            if layer > 0 or "Input@GRAD" in need:
                part = d_in2 @ w[0]
                dx = part if dx is None else dx + part
        if dx is not None:
            g = reshape(xp, dx, x.shape)
            if keeps[layer] is not None:
                g = _dropped(xp, g, keeps[layer], dropout_prob)
    d_input = g if "Input@GRAD" in need else None
    return d_input, [xp.stack(v) for v in d_initial], d_weights


# -- the op ----------------------------------------------------------------------------------------


def _rnn_infer(ctx: InferContext) -> None:
    mode = ctx.attr("mode")
    if mode not in _MODES:
        raise ctx.error(f"mode {mode!r}: expected one of {', '.join(_MODES)}")
    x = ctx.check_rank("Input", (3,))
    hid, layers, dirs = ctx.attr("hidden_size"), ctx.attr("num_layers"), 2 if ctx.attr("is_bidirec") else 1
    states = ctx.input_vars("PreState")
    if len(states) != _MODES[mode].states:
        raise ctx.error(f"PreState: {len(states)} tensors; expected {_MODES[mode].states} for mode {mode}")
    for s in states:
        if tuple(s.shape[::2]) != (layers * dirs, hid) or (known(x[1]) and known(s.shape[1]) and s.shape[1] != x[1]):
            raise ctx.error(
                f"PreState '{s.name}' {fmt_shape(s.shape)}: expected [{layers * dirs}, {x[1]}, {hid}] "
                "(num_layers * directions, batch, hidden_size)"
            )
    weights = ctx.input_vars("WeightList")
    if len(weights) != 4 * layers * dirs:
        raise ctx.error(
            f"WeightList: {len(weights)} tensors; expected {4 * layers * dirs} (weight_ih, weight_hh per layer "
            "and direction, then their biases)"
        )
    gh = _MODES[mode].gates * hid
    for k in range(layers * dirs):
        w_ih, w_hh, b_ih, b_hh = _cell_weights(weights, layers * dirs, k)
        width = x[2] if k < dirs else dirs * hid
        for v, want in ((w_ih, (gh, width)), (w_hh, (gh, hid)), (b_ih, (gh,)), (b_hh, (gh,))):
            if tuple(v.shape) != want and not (v is w_ih and k < dirs and not known(width)):
                raise ctx.error(f"WeightList '{v.name}' {fmt_shape(v.shape)}: expected {fmt_shape(want)}")
    if ctx.has_input("SequenceLength"):
        lengths = ctx.input_var("SequenceLength")
        if len(lengths.shape) != 1 or (known(lengths.shape[0]) and known(x[1]) and lengths.shape[0] != x[1]):
            raise ctx.error(f"SequenceLength '{lengths.name}' {fmt_shape(lengths.shape)}: expected [{x[1]}]")
    dtype = ctx.input_dtype("Input")
    ctx.set_output("Out", (x[0], x[1], dirs * hid), dtype)
    for i, s in enumerate(states):
        ctx.set_output("State", s.shape, dtype, i=i)
    ctx.set_output("Reserve", (-1,), dtype)
    ctx.set_output("DropoutState", (-1,), "uint8")


_RNN_ATTRS = {
    "mode": "LSTM",
    "hidden_size": 100,
    "num_layers": 1,
    "is_bidirec": False,
    "input_size": 10,
    "dropout_prob": 0.0,
    "is_test": False,
    "seed": 0,
}
_GRAD_INPUTS = ("Input", "PreState", "WeightList", "SequenceLength", "DropoutState", "Reserve", "Out")
register_op(
    "rnn",
    inputs=("Input", "PreState*", "WeightList*", "SequenceLength?"),
    outputs=("Out", "State*", "Reserve", "DropoutState?"),
    attrs=_RNN_ATTRS,
    infer_shape=_rnn_infer,
    grad=make_grad_op(
        inputs=(*_GRAD_INPUTS, "Out@GRAD", "State@GRAD"),
        outputs=("Input@GRAD", "PreState@GRAD", "WeightList@GRAD"),
    ),
    kernel=_rnn,
    random=True,
)
register_op(
    "rnn_grad",
    inputs=("Input", "PreState*", "WeightList*", "SequenceLength?", "DropoutState?", "Reserve", "Out")
    + ("Out@GRAD", "State@GRAD*?"),
    outputs=("Input@GRAD", "PreState@GRAD*", "WeightList@GRAD*"),
    attrs=_RNN_ATTRS,
    kernel=_rnn_grad,
    wants_outputs=True,
)
