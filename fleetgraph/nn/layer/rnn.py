"""`paddle.nn` recurrent layers in Paddle 2.0's signatures: LSTM, GRU and SimpleRNN run every layer and
direction in one fused `rnn` op (one op in a program, one op call eagerly); the cells LSTMCell,
GRUCell and SimpleRNNCell compute one step, and RNN / BiRNN step a cell over time through
`fluid.layers.rnn` / `birnn` (a Python loop eagerly, a while_loop in a program)."""

from __future__ import annotations

import math

from ...ir import FleetgraphError, get_default_dtype
from ...layers.helper import LayerHelper
from ...layers.math import matmul, relu, sigmoid, tanh
from ...layers.rnn import birnn, initial_states, rnn
from ...layers.tensor import fill_constant, fill_constant_batch_size_like, split, transpose
from ..initializer import Uniform
from .layers import Layer

# -- cells -----------------------------------------------------------------------------------------


class RNNCellBase(Layer):
    """A cell RNN steps: forward(inputs, states) gives (outputs, new_states)."""

    def get_initial_states(self, batch_ref, shape=None, dtype=None, init_value=0.0, batch_dim_idx=0):
        shapes = self.state_shape if shape is None else shape
        return initial_states(batch_ref, shapes, dtype or self.state_dtype, init_value, batch_dim_idx)

    @property
    def state_shape(self):
        raise NotImplementedError(f"{type(self).__name__}: give get_initial_states a shape, or define state_shape")

    @property
    def state_dtype(self):
        """The default dtype, as Paddle's cells, which leave state_dtype to it."""
        return get_default_dtype()


class _CellWeights(RNNCellBase):
    """weight_ih [G * H, input_size], weight_hh [G * H, H], bias_ih and bias_hh [G * H] (None where an
    attr is False), uniform in +-1/sqrt(H) as Paddle's."""

    gates = 1

    def __init__(
        self, input_size, hidden_size, weight_ih_attr=None, weight_hh_attr=None, bias_ih_attr=None,
        bias_hh_attr=None, name=None,
    ):  # fmt: skip
        super().__init__()
        self.input_size, self.hidden_size = int(input_size), int(hidden_size)
        init, rows = _uniform(self.hidden_size), self.gates * self.hidden_size
        self.weight_ih = self.create_parameter((rows, self.input_size), weight_ih_attr, default_initializer=init)
        self.weight_hh = self.create_parameter((rows, self.hidden_size), weight_hh_attr, default_initializer=init)
        self.bias_ih = _bias(self, rows, bias_ih_attr, init)
        self.bias_hh = _bias(self, rows, bias_hh_attr, init)

    def _affine(self, x, weight, bias):
        out = matmul(x, weight, transpose_y=True)
        return out if bias is None else out + bias

    def _gates(self, inputs, pre_hidden):
        return self._affine(inputs, self.weight_ih, self.bias_ih) + self._affine(
            pre_hidden, self.weight_hh, self.bias_hh
        )

    def _states(self, inputs, states):
        return self.get_initial_states(inputs, self.state_shape) if states is None else states


def _uniform(hidden_size: int) -> Uniform:
    std = 1.0 / math.sqrt(hidden_size)
    return Uniform(-std, std)


def _bias(layer: Layer, rows: int, attr, init):
    return None if attr is False else layer.create_parameter((rows,), attr, is_bias=True, default_initializer=init)


class SimpleRNNCell(_CellWeights):
    """h = act(x @ weight_ih.T + bias_ih + h @ weight_hh.T + bias_hh), act tanh or relu."""

    def __init__(
        self, input_size, hidden_size, activation="tanh", weight_ih_attr=None, weight_hh_attr=None,
        bias_ih_attr=None, bias_hh_attr=None, name=None,
    ):  # fmt: skip
        if activation not in ("tanh", "relu"):
            raise ValueError(f"activation for SimpleRNNCell should be tanh or relu, but get {activation}")
        super().__init__(input_size, hidden_size, weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr)
        self.activation = activation

    def forward(self, inputs, states=None):
        pre_h = self._states(inputs, states)
        act = tanh if self.activation == "tanh" else relu
        h = act(self._gates(inputs, pre_h))
        return h, h

    @property
    def state_shape(self):
        return (self.hidden_size,)


class LSTMCell(_CellWeights):
    """Gates [i, f, g, o] = x @ weight_ih.T + bias_ih + h @ weight_hh.T + bias_hh; c = sig(f) * c +
    sig(i) * tanh(g); h = sig(o) * tanh(c)."""

    gates = 4

    def forward(self, inputs, states=None):
        pre_hidden, pre_cell = self._states(inputs, states)
        i, f, g, o = split(self._gates(inputs, pre_hidden), 4, dim=-1)
        c = sigmoid(f) * pre_cell + sigmoid(i) * tanh(g)
        h = sigmoid(o) * tanh(c)
        return h, (h, c)

    @property
    def state_shape(self):
        return ((self.hidden_size,), (self.hidden_size,))


class GRUCell(_CellWeights):
    """Paddle 2.0's GRU (the reset gate applied after the hidden matmul): r, z = sig(x_r + h_r),
    sig(x_z + h_z); c = tanh(x_c + r * h_c); h = (h_prev - c) * z + c."""

    gates = 3

    def forward(self, inputs, states=None):
        pre_hidden = self._states(inputs, states)
        x_r, x_z, x_c = split(self._affine(inputs, self.weight_ih, self.bias_ih), 3, dim=1)
        h_r, h_z, h_c = split(self._affine(pre_hidden, self.weight_hh, self.bias_hh), 3, dim=1)
        r, z = sigmoid(x_r + h_r), sigmoid(x_z + h_z)
        c = tanh(x_c + r * h_c)
        h = (pre_hidden - c) * z + c
        return h, h

    @property
    def state_shape(self):
        return (self.hidden_size,)


# -- a cell over time ------------------------------------------------------------------------------


class RNN(Layer):
    """`cell` stepped over the time steps of its input (backwards when is_reverse)."""

    def __init__(self, cell, is_reverse=False, time_major=False):
        super().__init__()
        self.cell, self.is_reverse, self.time_major = cell, bool(is_reverse), bool(time_major)

    def forward(self, inputs, initial_states=None, sequence_length=None, **kwargs):
        return rnn(
            self.cell, inputs, initial_states, sequence_length, self.time_major, self.is_reverse, **kwargs
        )  # fmt: skip


class BiRNN(Layer):
    """cell_fw forwards and cell_bw backwards over the input, outputs concatenated on the last axis."""

    def __init__(self, cell_fw, cell_bw, time_major=False):
        super().__init__()
        if cell_fw.input_size != cell_bw.input_size:
            raise ValueError(
                f"input size of forward cell({cell_fw.input_size}) does not equals that of backward "
                f"cell({cell_bw.input_size})"
            )
        self.cell_fw, self.cell_bw, self.time_major = cell_fw, cell_bw, bool(time_major)

    def forward(self, inputs, initial_states=None, sequence_length=None, **kwargs):
        if isinstance(initial_states, (list, tuple)) and len(initial_states) != 2:
            raise ValueError("length of initial_states should be 2 when it is a list/tuple")
        return birnn(self.cell_fw, self.cell_bw, inputs, initial_states, sequence_length, self.time_major, **kwargs)


# -- the fused layers ------------------------------------------------------------------------------

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


class RNNBase(Layer):
    """Every layer and direction in one `rnn` op. Parameters as Paddle's: weight_ih_l{k}, weight_hh_l{k},
    bias_ih_l{k}, bias_hh_l{k}, with `_reverse` for the backward direction, in that order per layer
    and direction; the op reads them in Paddle's WeightList order (all weights, then all biases)."""

    def __init__(
        self, mode, input_size, hidden_size, num_layers=1, direction="forward", time_major=False, dropout=0.0,
        weight_ih_attr=None, weight_hh_attr=None, bias_ih_attr=None, bias_hh_attr=None,
    ):  # fmt: skip
        super().__init__()
        if direction not in ("forward", "bidirect", "bidirectional"):
            raise ValueError(
                f"direction should be forward or bidirect (or bidirectional), received direction = {direction}"
            )
        self.mode, self.input_size, self.hidden_size = mode, int(input_size), int(hidden_size)
        self.num_layers, self.dropout, self.time_major = int(num_layers), float(dropout), bool(time_major)
        self.num_directions = 1 if direction == "forward" else 2
        self.state_components = 2 if mode == "LSTM" else 1
        rows, init = _GATES[mode] * self.hidden_size, _uniform(self.hidden_size)
        weights, biases = [], []  # parameter names, None for a bias turned off
        for layer in range(self.num_layers):
            width = self.input_size if layer == 0 else self.num_directions * self.hidden_size
            for d in range(self.num_directions):
                suffix = f"_l{layer}" + ("_reverse" if d else "")
                for kind, cols, attr in (("ih", width, weight_ih_attr), ("hh", self.hidden_size, weight_hh_attr)):
                    weights.append(f"weight_{kind}{suffix}")
                    self.add_parameter(weights[-1], self.create_parameter((rows, cols), attr, default_initializer=init))
                for kind, attr in (("ih", bias_ih_attr), ("hh", bias_hh_attr)):
                    b = _bias(self, rows, attr, init)
                    if b is not None:
                        self.add_parameter(f"bias_{kind}{suffix}", b)
                    biases.append(None if b is None else f"bias_{kind}{suffix}")
        self._weight_names, self._bias_names = weights, biases

    def _weight_list(self, dtype):
        """WeightList in Paddle's order, the parameters looked up by name each call (jit.to_static
        swaps them for static ones); a bias turned off (attr False) is a zero constant."""
        zero = None
        if None in self._bias_names:
            zero = fill_constant([_GATES[self.mode] * self.hidden_size], dtype, 0.0)
        weights = [self._parameters[n] for n in self._weight_names]
        return weights + [zero if n is None else self._parameters[n] for n in self._bias_names]

    def forward(self, inputs, initial_states=None, sequence_length=None):
        batch_index = 1 if self.time_major else 0
        cells = self.num_layers * self.num_directions
        if initial_states is None:
            shape = [cells, -1, self.hidden_size]
            states = [
                fill_constant_batch_size_like(inputs, shape, inputs.dtype, 0.0, batch_index, 1)
                for _ in range(self.state_components)
            ]
        else:
            states = list(initial_states) if isinstance(initial_states, (list, tuple)) else [initial_states]
        if len(states) != self.state_components:
            raise FleetgraphError(
                f"{type(self).__name__}: initial_states has {len(states)} tensors; expected "
                f"{self.state_components} ({'(h, c)' if self.state_components == 2 else 'h'})"
            )
        x = inputs if self.time_major else transpose(inputs, [1, 0, 2])
        helper = LayerHelper("rnn", inputs=x)
        out = helper.create_variable_for_type_inference(x.dtype)
        final = [helper.create_variable_for_type_inference(x.dtype) for _ in states]
        reserve = helper.create_variable_for_type_inference(x.dtype, stop_gradient=True)
        dropout_state = helper.create_variable_for_type_inference("uint8", stop_gradient=True)
        ins = {"Input": [x], "PreState": states, "WeightList": self._weight_list(x.dtype)}
        if sequence_length is not None:
            ins["SequenceLength"] = [sequence_length]
        attrs = {
            "mode": self.mode,
            "hidden_size": self.hidden_size,
            "num_layers": self.num_layers,
            "is_bidirec": self.num_directions == 2,
            "input_size": self.input_size,
            "dropout_prob": self.dropout,
            "is_test": not self.training,
        }
        outs = {"Out": [out], "State": final, "Reserve": [reserve], "DropoutState": [dropout_state]}
        helper.append_op("rnn", ins, outs, attrs)
        out = out if self.time_major else transpose(out, [1, 0, 2])
        return out, tuple(final) if len(final) > 1 else final[0]

    def extra_repr(self) -> str:
        direction = "bidirectional" if self.num_directions == 2 else "forward"
        return f"{self.input_size}, {self.hidden_size}, num_layers={self.num_layers}, direction={direction}"


class SimpleRNN(RNNBase):
    """Multi-layer Elman network: h = act(x @ W_ih.T + b_ih + h @ W_hh.T + b_hh), act tanh or relu."""

    def __init__(
        self, input_size, hidden_size, num_layers=1, direction="forward", time_major=False, dropout=0.0,
        activation="tanh", weight_ih_attr=None, weight_hh_attr=None, bias_ih_attr=None, bias_hh_attr=None, name=None,
    ):  # fmt: skip
        modes = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}
        if activation not in modes:
            raise ValueError(f"Unknown activation '{activation}'")
        self.activation = activation
        super().__init__(
            modes[activation], input_size, hidden_size, num_layers, direction, time_major, dropout,
            weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr,
        )  # fmt: skip


class _OneMode(RNNBase):
    """LSTM and GRU: RNNBase with the mode its class names."""

    mode_name = ""

    def __init__(
        self, input_size, hidden_size, num_layers=1, direction="forward", time_major=False, dropout=0.0,
        weight_ih_attr=None, weight_hh_attr=None, bias_ih_attr=None, bias_hh_attr=None, name=None,
    ):  # fmt: skip
        super().__init__(
            self.mode_name, input_size, hidden_size, num_layers, direction, time_major, dropout,
            weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr,
        )  # fmt: skip


class LSTM(_OneMode):
    """Multi-layer LSTM with Paddle's gates [i, f, g, o]; forward gives (outputs, (h, c))."""

    mode_name = "LSTM"


class GRU(_OneMode):
    """Multi-layer GRU with Paddle 2.0's gates [r, z, c] (reset after the hidden matmul)."""

    mode_name = "GRU"
