"""Export rule of Paddle 2.x's fused `rnn` op (paddle.nn.LSTM, GRU, SimpleRNN): one ONNX LSTM, GRU
or RNN node per layer (both directions in one node), each layer reading the one before.

The formulas match: ONNX LSTM's with Paddle's gates i, f, g, o re-laid as ONNX's i, o, f, c; ONNX
GRU's with linear_before_reset=1, which is Paddle 2.0's reset gate applied after the hidden
matmul, the gates r, z, c re-laid as z, r, h; ONNX RNN's with Tanh or Relu. With SequenceLength,
ONNX's sequence_lens also keeps each sequence's last state, gives zeros past its end and starts the
reverse direction at its last step. The gates' rows are gathered in ONNX's order in the graph, so
the parameters stay as they are stored. The LoD ops (lstm, gru of dynamic_lstm) do not export:
their LoD is not a graph input.
"""

from __future__ import annotations

import numpy as np

from ..ir.program import Operator
from .emitter import Emitter, UnsupportedOp, exports

# mode -> (ONNX op, Paddle's gate blocks in ONNX's order, extra attrs)
_NODES = {
    "LSTM": ("LSTM", (0, 3, 1, 2), {}),
    "GRU": ("GRU", (1, 0, 2), {"linear_before_reset": 1}),
    "RNN_TANH": ("RNN", (0,), {"activations": ["Tanh", "Tanh"]}),
    "RNN_RELU": ("RNN", (0,), {"activations": ["Relu", "Relu"]}),
}


def _gathered(e: Emitter, weight: str, rows) -> str:
    """The weight's rows in ONNX's gate order, with a leading direction axis."""
    picked = e.node("Gather", [weight, rows], axis=0)
    return e.node("Unsqueeze", [picked, e.const([0])])


def _directions(e: Emitter, parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else e.node("Concat", parts, axis=0)


@exports("rnn")
def rnn(e: Emitter, op: Operator) -> None:
    mode, hid = op.attr("mode"), op.attr("hidden_size")
    if mode not in _NODES:
        raise UnsupportedOp(f"attr mode {mode!r} has no ONNX node; expected one of {', '.join(_NODES)}")
    onnx_op, order, attrs = _NODES[mode]
    layers, dirs = op.attr("num_layers"), 2 if op.attr("is_bidirec") else 1
    cells, weights, states = layers * dirs, e.xs(op, "WeightList"), e.xs(op, "PreState")
    rows = e.const(np.concatenate([np.arange(g * hid, (g + 1) * hid) for g in order]).astype(np.int64))
    lengths = ""
    if op.input("SequenceLength"):
        lengths = e.node("Cast", [e.x(op, "SequenceLength")], to=6)  # int32, as ONNX's sequence_lens
    x, finals = e.x(op, "Input"), [[] for _ in states]
    for layer in range(layers):
        ks = range(layer * dirs, (layer + 1) * dirs)
        w = _directions(e, [_gathered(e, weights[2 * k], rows) for k in ks])
        r = _directions(e, [_gathered(e, weights[2 * k + 1], rows) for k in ks])
        biases = [
            e.node("Concat", [_gathered(e, weights[2 * cells + 2 * k + j], rows) for j in (0, 1)], axis=1) for k in ks
        ]
        bounds = [e.const([layer * dirs]), e.const([(layer + 1) * dirs]), e.const([0])]
        initial = [e.node("Slice", [s, *bounds]) for s in states]
        y, *last = e.node(
            onnx_op,
            [x, w, r, _directions(e, biases), lengths, *initial],
            1 + len(states),
            hidden_size=hid,
            direction="bidirectional" if dirs == 2 else "forward",
            **attrs,
        )
        for i, s in enumerate(last):
            finals[i].append(s)
        out = e.out(op, "Out") if layer == layers - 1 else None  # [T, dirs, B, H] -> [T, B, dirs * H]
        x = e.node("Reshape", [e.node("Transpose", [y], perm=[0, 2, 1, 3]), e.const([0, 0, -1])], out)
    for name, parts in zip(op.output("State"), finals):
        if len(parts) == 1:
            e.node("Identity", parts, name)
        else:
            e.node("Concat", parts, name, axis=0)
