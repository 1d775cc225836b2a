"""`fluid.layers.rnn` and `birnn`: a cell stepped over time, as Paddle 1.8.5 / 2.0 build them (a Python
loop over the steps in eager mode, a `while_loop` in a static program), and Paddle 1.8.5's cells
RNNCell, LSTMCell and GRUCell (contrib's BasicLSTMUnit and BasicGRUUnit: one weight over the
concatenated [input, hidden])."""

from __future__ import annotations

from ..dygraph.dispatch import bind
from ..ir.errors import FleetgraphError
from ..ir.program import Variable
from .control_flow import while_loop
from .helper import LayerHelper
from .math import less_than, matmul, scale, sigmoid, tanh
from .sequence import sequence_mask
from .tensor import assign, concat, fill_constant, fill_constant_batch_size_like, increment, reshape, split, transpose
from .tensor_array import array_write, create_array, tensor_array_to_tensor


def _is_shape(value) -> bool:
    return isinstance(value, (list, tuple)) and all(isinstance(d, int) for d in value)


def _map_shapes(fn, shapes):
    """`fn` over each shape (a list of ints) of a nested list of shapes, keeping the nesting."""
    if _is_shape(shapes):
        return fn(list(shapes))
    return [_map_shapes(fn, s) for s in shapes]


def _flatten(states) -> list:
    if isinstance(states, (list, tuple)):
        return [v for s in states for v in _flatten(s)]
    return [states]


def _pack(flat: list, like):
    """`flat` in the nesting of `like` (lists for lists and tuples)."""
    if not isinstance(like, (list, tuple)):
        return flat.pop(0)
    return [_pack(flat, s) for s in like]


def initial_states(batch_ref, shapes, dtype, init_value=0.0, batch_dim_idx=0):
    """States filled with `init_value`, one per shape of the nested `shapes`, each taking its batch size
    (its first dimension, -1 put in front where a shape lacks it) from batch_ref's batch_dim_idx."""
    ref = _flatten(batch_ref)[0]

    def state(shape):
        shape = shape if shape and shape[0] == -1 else [-1, *shape]
        return fill_constant_batch_size_like(ref, shape, dtype, init_value, batch_dim_idx, 0)

    return _map_shapes(state, shapes)


class RNNCell:
    """Paddle 1.8's base of the cells `rnn` steps: `call(inputs, states)` gives (outputs, new_states)."""

    def call(self, inputs, states, **kwargs):
        raise NotImplementedError(f"{type(self).__name__}: an RNNCell implements call(inputs, states)")

    def __call__(self, inputs, states, **kwargs):
        return self.call(inputs, states, **kwargs)

    def get_initial_states(self, batch_ref, shape=None, dtype="float32", init_value=0, batch_dim_idx=0):
        return initial_states(batch_ref, self.state_shape if shape is None else shape, dtype, init_value, batch_dim_idx)

    @property
    def state_shape(self):
        raise NotImplementedError(f"{type(self).__name__}: give get_initial_states a shape, or define state_shape")


class _LazyWeights:
    """Parameters made on the first call, when the input's size is known (Paddle's _build_once)."""

    def _parameters(self, input_size: int) -> None:
        raise NotImplementedError

    def _built(self, inputs) -> None:
        if not self._made:
            self._parameters(int(inputs.shape[-1]))
            self._made = True


class LSTMCell(_LazyWeights, RNNCell):
    """Paddle 1.8's LSTMCell: gates [i, j, f, o] = [x, h] @ W [I + H, 4H] + b; c = c * sig(f +
    forget_bias) + sig(i) * tanh(j); h = tanh(c) * sig(o)."""

    def __init__(
        self, hidden_size, param_attr=None, bias_attr=None, gate_activation=None, activation=None,
        forget_bias=1.0, dtype="float32", name="LSTMCell",
    ):  # fmt: skip
        self.hidden_size, self._forget_bias, self._dtype = int(hidden_size), float(forget_bias), dtype
        self._gate, self._act = gate_activation or sigmoid, activation or tanh
        self._attrs, self._name, self._made = (param_attr, bias_attr), name, False

    def _parameters(self, input_size: int) -> None:
        helper, h = LayerHelper(self._name), self.hidden_size
        self._weight = helper.create_parameter(self._attrs[0], [input_size + h, 4 * h], self._dtype)
        self._bias = helper.create_parameter(self._attrs[1], [4 * h], self._dtype, is_bias=True)

    def call(self, inputs, states):
        self._built(inputs)
        pre_hidden, pre_cell = states
        gates = matmul(concat([inputs, pre_hidden], 1), self._weight) + self._bias
        i, j, f, o = split(gates, 4, dim=-1)
        cell = pre_cell * self._gate(scale(f, bias=self._forget_bias)) + self._gate(i) * self._act(j)
        hidden = self._act(cell) * self._gate(o)
        return hidden, [hidden, cell]

    @property
    def state_shape(self):
        return [[self.hidden_size], [self.hidden_size]]


class GRUCell(_LazyWeights, RNNCell):
    """Paddle 1.8's GRUCell: [r, u] = sig([x, h] @ W_gate [I + H, 2H] + b_gate); c = tanh([x, r * h] @
    W_cand [I + H, H] + b_cand); h = u * h + (1 - u) * c."""

    def __init__(
        self, hidden_size, param_attr=None, bias_attr=None, gate_activation=None, activation=None,
        dtype="float32", name="GRUCell",
    ):  # fmt: skip
        self.hidden_size, self._dtype = int(hidden_size), dtype
        self._gate, self._act = gate_activation or sigmoid, activation or tanh
        self._attrs, self._name, self._made = (param_attr, bias_attr), name, False

    def _parameters(self, input_size: int) -> None:
        helper, h = LayerHelper(self._name), self.hidden_size
        self._gate_weight = helper.create_parameter(self._attrs[0], [input_size + h, 2 * h], self._dtype)
        self._candidate_weight = helper.create_parameter(self._attrs[0], [input_size + h, h], self._dtype)
        self._gate_bias = helper.create_parameter(self._attrs[1], [2 * h], self._dtype, is_bias=True)
        self._candidate_bias = helper.create_parameter(self._attrs[1], [h], self._dtype, is_bias=True)

    def call(self, inputs, states):
        self._built(inputs)
        r, u = split(self._gate(matmul(concat([inputs, states], 1), self._gate_weight) + self._gate_bias), 2, dim=1)
        c = self._act(matmul(concat([inputs, r * states], 1), self._candidate_weight) + self._candidate_bias)
        hidden = c + u * (states - c)
        return hidden, hidden

    @property
    def state_shape(self):
        return [self.hidden_size]


def _kept(state, new_state, step_mask):
    """A sequence that has ended keeps its state (step_mask [B, 1] is 0 for it)."""
    return state + step_mask * (new_state - state)


def _time_major(x):
    return transpose(x, [1, 0, *range(2, len(x.shape))])


def _step_slice(x, t: int):
    return bind("slice", {"Input": [x]}, {"axes": [0], "starts": [t], "ends": [t + 1], "decrease_axis": [0]})


def _eager_steps(cell, inputs, states, mask, is_reverse, kwargs):
    """Paddle's dygraph rnn: the cell called once per step; outputs [T, B, ...] in time order."""
    steps = int(inputs.shape[0])
    outputs = [None] * steps
    for t in range(steps - 1, -1, -1) if is_reverse else range(steps):
        out, new_states = cell(_step_slice(inputs, t), states, **kwargs)
        if mask is not None:
            m = _step_slice(mask, t)
            new_states = _pack([_kept(s, n, m) for s, n in zip(_flatten(states), _flatten(new_states))], states)
        outputs[t], states = out, new_states
    shape = [1, *outputs[0].shape]
    return concat([reshape(o, shape) for o in outputs], 0), states


def _static_steps(cell, inputs, states, mask, is_reverse, kwargs):
    """The same steps as a while_loop: step t's input is row t of inputs as a [T, rest] table (a
    lookup_table_v2 by the step counter), its output goes into a tensor array at t."""
    steps = int(inputs.shape[0])
    if steps < 0:
        raise FleetgraphError(
            f"rnn: input {inputs.name!r} has an unknown number of time steps {list(inputs.shape)}; a static "
            "program needs it known when the program is built"
        )
    table = reshape(inputs, [steps, -1])
    mask_table = None if mask is None else reshape(mask, [steps, -1])
    step_shape = [-1, *inputs.shape[2:]]
    out_array = create_array(inputs.dtype)
    last = fill_constant([1], "int64", steps - 1)
    counter, end = fill_constant([1], "int64", 0), fill_constant([1], "int64", steps)
    flat = [assign(s) for s in _flatten(states)]  # the loop writes its variables; the caller's stay

    def row(t, source, shape):
        return reshape(bind("lookup_table_v2", {"W": [source], "Ids": [t]}), shape)

    def body(i, *carried):
        t = last - i if is_reverse else i
        now = _pack(list(carried), states)
        out, new_states = cell(row(t, table, step_shape), now, **kwargs)
        new_flat = _flatten(new_states)
        if mask_table is not None:
            m = row(t, mask_table, [-1, 1])
            new_flat = [_kept(s, n, m) for s, n in zip(carried, new_flat)]
        array_write(out, t, out_array)
        return [increment(i, in_place=False), *new_flat]

    final = while_loop(lambda i, *_: less_than(i, end), body, [counter, *flat])
    outputs, _ = tensor_array_to_tensor(out_array, axis=0, use_stack=True)
    return outputs, _pack(list(final[1:]), states)


def rnn(cell, inputs, initial_states=None, sequence_length=None, time_major=False, is_reverse=False, **kwargs):
    """`cell` stepped over the time steps of `inputs` ([B, T, ...], or [T, B, ...] when time_major),
    backwards when is_reverse; returns (outputs in the input's layout, final states). Past its
    sequence_length a sequence keeps its state."""
    if not isinstance(inputs, Variable):
        raise TypeError(f"rnn: inputs expected a Variable or Tensor, got {type(inputs).__name__}")
    if initial_states is None:
        initial_states = cell.get_initial_states(batch_ref=inputs, batch_dim_idx=1 if time_major else 0)
    x = inputs if time_major else _time_major(inputs)
    mask = None
    if sequence_length is not None:
        mask = sequence_mask(sequence_length, maxlen=int(x.shape[0]), dtype=x.dtype)
        mask = reshape(transpose(mask, [1, 0]), [int(x.shape[0]), -1, 1])
    steps = _eager_steps if LayerHelper("rnn", inputs=x).eager else _static_steps
    outputs, final_states = steps(cell, x, initial_states, mask, is_reverse, kwargs)
    return (outputs if time_major else _time_major(outputs)), final_states


def birnn(cell_fw, cell_bw, inputs, initial_states=None, sequence_length=None, time_major=False, **kwargs):
    """rnn forwards with cell_fw and backwards with cell_bw, outputs concatenated on the last axis;
    final states (forward's, backward's)."""
    if initial_states is None:
        batch_dim = 1 if time_major else 0
        initial_states = [
            cell.get_initial_states(batch_ref=inputs, batch_dim_idx=batch_dim) for cell in (cell_fw, cell_bw)
        ]
    states_fw, states_bw = initial_states
    out_fw, states_fw = rnn(cell_fw, inputs, states_fw, sequence_length, time_major, **kwargs)
    out_bw, states_bw = rnn(cell_bw, inputs, states_bw, sequence_length, time_major, is_reverse=True, **kwargs)
    return concat([out_fw, out_bw], -1), (states_fw, states_bw)
