"""Cases for Paddle 2.x's fused rnn op: LSTM, GRU and SimpleRNN (tanh, relu), multi-layer and
bidirectional, with and without SequenceLength. The reference steps Paddle 2.0's LSTMCell, GRUCell
and SimpleRNNCell formulas (python/paddle/nn/layer/rnn.py) one sequence at a time over its own
length, the reverse direction over the reversed sequence, and pads with zeros past its end."""

import numpy as np

from . import case, rand


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def lstm_cell(x, h, c, w_ih, w_hh, b_ih, b_hh):
    gates = x @ w_ih.T + b_ih + h @ w_hh.T + b_hh
    i, f, g, o = np.split(gates, 4, axis=-1)
    c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
    return _sigmoid(o) * np.tanh(c), c


def gru_cell(x, h, w_ih, w_hh, b_ih, b_hh):
    x_r, x_z, x_c = np.split(x @ w_ih.T + b_ih, 3, axis=-1)
    h_r, h_z, h_c = np.split(h @ w_hh.T + b_hh, 3, axis=-1)
    r, z = _sigmoid(x_r + h_r), _sigmoid(x_z + h_z)
    c = np.tanh(x_c + r * h_c)
    return (h - c) * z + c


def simple_cell(x, h, w_ih, w_hh, b_ih, b_hh, act):
    y = x @ w_ih.T + b_ih + h @ w_hh.T + b_hh
    return np.tanh(y) if act == "tanh" else np.maximum(y, 0.0)


def run_sequence(mode, x, states, w, reverse):
    """One sequence [t, I] through one cell from `states` (h, or (h, c)): outputs [t, H] and the last states."""
    outs = []
    for step in x[::-1] if reverse else x:
        if mode == "LSTM":
            states = lstm_cell(step, *states, *w)
            outs.append(states[0])
        else:
            h = gru_cell(step, states[0], *w) if mode == "GRU" else simple_cell(step, states[0], *w, mode[4:].lower())
            states = (h,)
            outs.append(h)
    outs = np.array(outs).reshape(len(x), -1)
    return (outs[::-1] if reverse else outs), states


def naive_rnn(Input, PreState, WeightList, SequenceLength=None, *, mode, hidden_size, num_layers, is_bidirec, **_):
    steps, batch = Input.shape[:2]
    dirs = 2 if is_bidirec else 1
    cells = num_layers * dirs
    lengths = [steps] * batch if SequenceLength is None else list(SequenceLength)
    x = Input
    finals = [np.zeros_like(s) for s in PreState]
    for layer in range(num_layers):
        out = np.zeros((steps, batch, dirs * hidden_size))
        for d in range(dirs):
            k = layer * dirs + d
            w = (
                WeightList[2 * k],
                WeightList[2 * k + 1],
                WeightList[2 * cells + 2 * k],
                WeightList[2 * cells + 2 * k + 1],
            )
            for b in range(batch):
                n = lengths[b]
                seq, last = run_sequence(mode, x[:n, b], tuple(s[k, b] for s in PreState), w, d == 1)
                out[:n, b, d * hidden_size : (d + 1) * hidden_size] = seq
                for i, s in enumerate(last):
                    finals[i][k, b] = s
        x = out
    return {"Out": x, "State": finals}


def _weights(mode, input_size, hidden, layers, dirs, seed):
    gates = {"LSTM": 4, "GRU": 3}.get(mode, 1)
    ws, bs = [], []
    for k in range(layers * dirs):
        width = input_size if k < dirs else dirs * hidden
        ws += [rand(gates * hidden, width, seed=seed + k), rand(gates * hidden, hidden, seed=seed + 10 + k)]
        bs += [rand(gates * hidden, seed=seed + 20 + k), rand(gates * hidden, seed=seed + 30 + k)]
    return ws + bs


def rnn_case(mode, *, steps=3, batch=2, input_size=3, hidden=2, layers=1, bidirec=False, lengths=None, name=""):
    dirs = 2 if bidirec else 1
    states = [rand(layers * dirs, batch, hidden, seed=40 + i) for i in range(2 if mode == "LSTM" else 1)]
    inputs = {
        "Input": rand(steps, batch, input_size, seed=1),
        "PreState": states,
        "WeightList": _weights(mode, input_size, hidden, layers, dirs, seed=2),
    }
    if lengths is not None:
        inputs["SequenceLength"] = np.array(lengths, dtype=np.int64)
    attrs = {"mode": mode, "hidden_size": hidden, "num_layers": layers, "is_bidirec": bidirec}
    attrs["input_size"] = input_size
    case(
        "rnn",
        inputs,
        attrs=attrs,
        outputs={"Out": 1, "State": len(states), "Reserve": 1, "DropoutState": 1},
        reference=naive_rnn,
        no_grad=("SequenceLength",),
        loss_outputs=("Out", "State"),
        name=name or mode.lower(),
    )


rnn_case("LSTM")
rnn_case("GRU")
rnn_case("RNN_TANH")
rnn_case("RNN_RELU", name="rnn_relu")
rnn_case("LSTM", layers=2, bidirec=True, lengths=[3, 2], name="lstm-2-layers-bidirec-lengths")
rnn_case("GRU", layers=2, bidirec=True, lengths=[2, 3], name="gru-2-layers-bidirec-lengths")
rnn_case("RNN_TANH", bidirec=True, lengths=[1, 3], name="rnn_tanh-bidirec-lengths")
rnn_case("LSTM", steps=4, batch=3, lengths=[4, 1, 2], name="lstm-lengths")
