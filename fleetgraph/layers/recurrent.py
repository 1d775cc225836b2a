"""Recurrent layer functions: LSTM and GRU over LoD sequences (dynamic_lstm, dynamic_lstmp,
dynamic_gru) and their single steps (lstm_unit, gru_unit), with Paddle 1.8's signatures and
parameter shapes."""

from __future__ import annotations

from ..ir.dtypes import convert_dtype
from ..ir.errors import FleetgraphError
from ..ir.program import Variable
from .helper import LayerHelper
from .nn import fc
from .tensor import concat

# gru_unit's activation attrs are Paddle's enum ints (gru_unit_op.h)
_GRU_UNIT_ACTIVATIONS = {"identity": 0, "sigmoid": 1, "tanh": 2, "relu": 3}


def _check_float(layer: str, arg: str, value) -> None:
    """Paddle's check_variable_and_dtype: a float32 or float64 variable, else TypeError."""
    if not isinstance(value, Variable) or convert_dtype(value.dtype) not in ("float32", "float64"):
        got = f"a {convert_dtype(value.dtype)} variable" if isinstance(value, Variable) else type(value).__name__
        raise TypeError(f"{layer}: {arg} expected a float32 or float64 variable, got {got}")


def _outputs(helper: LayerHelper, dtype, n: int) -> list[Variable]:
    return [helper.create_variable_for_type_inference(dtype) for _ in range(n)]


def _lstm_layer(layer: str, op_type: str, name, input, h_0, c_0, bias_attr):
    """What dynamic_lstm and dynamic_lstmp share: the checks, the helper and the optional initial
    states as inputs."""
    _check_float(layer, "input", input)
    for arg, state in (("h_0", h_0), ("c_0", c_0)):
        if state is not None:
            _check_float(layer, arg, state)
    if bias_attr is False:
        raise FleetgraphError(f"{layer}: bias_attr is False; expected a bias, which the {op_type} op needs")
    inputs = {"Input": [input]}
    inputs.update({slot: [v] for slot, v in (("H0", h_0), ("C0", c_0)) if v is not None})
    return LayerHelper(op_type, name, inputs=[input, h_0, c_0]), inputs


def _lstm_attrs(use_peepholes, is_reverse, gate_activation, cell_activation, candidate_activation) -> dict:
    return {
        "use_peepholes": bool(use_peepholes),
        "is_reverse": bool(is_reverse),
        "gate_activation": gate_activation,
        "cell_activation": cell_activation,
        "candidate_activation": candidate_activation,
    }


def _lstm_bias(helper: LayerHelper, bias_attr, d: int, use_peepholes: bool, dtype):
    """[1, 4D] gate biases, then [1, 3D] peephole weights with use_peepholes."""
    return helper.create_parameter(bias_attr, [1, (7 if use_peepholes else 4) * d], dtype, is_bias=True)


def dynamic_lstm(
    input,
    size,
    h_0=None,
    c_0=None,
    param_attr=None,
    bias_attr=None,
    use_peepholes=True,
    is_reverse=False,
    gate_activation="sigmoid",
    cell_activation="tanh",
    candidate_activation="tanh",
    dtype="float32",
    name=None,
):
    """An LSTM over each sequence of `input` ([T, size], the projection x W_x, size = 4 * D),
    from h_0 / c_0 ([sequences, D], zeros if absent); gives (hidden, cell), [T, D] each, under
    input's LoD. Weight [D, 4D] and Bias [1, 4D] (gate biases), or [1, 7D] with the peephole
    weights after them."""
    helper, inputs = _lstm_layer("dynamic_lstm", "lstm", name, input, h_0, c_0, bias_attr)
    d = int(size) // 4
    inputs["Weight"] = [helper.create_parameter(param_attr, [d, 4 * d], dtype)]
    inputs["Bias"] = [_lstm_bias(helper, bias_attr, d, use_peepholes, dtype)]
    hidden, cell, batch_gate, batch_cell_pre_act = _outputs(helper, dtype, 4)
    helper.append_op(
        "lstm",
        inputs,
        {"Hidden": [hidden], "Cell": [cell], "BatchGate": [batch_gate], "BatchCellPreAct": [batch_cell_pre_act]},
        _lstm_attrs(use_peepholes, is_reverse, gate_activation, cell_activation, candidate_activation),
    )
    return hidden, cell


def dynamic_lstmp(
    input,
    size,
    proj_size,
    param_attr=None,
    bias_attr=None,
    use_peepholes=True,
    is_reverse=False,
    gate_activation="sigmoid",
    cell_activation="tanh",
    candidate_activation="tanh",
    proj_activation="tanh",
    dtype="float32",
    name=None,
    h_0=None,
    c_0=None,
    cell_clip=None,
    proj_clip=None,
):
    """An LSTM with a recurrent projection: each step reads r_prev = proj_activation(h_prev @
    ProjWeight [D, proj_size]), clipped to proj_clip, and its cell is clipped to cell_clip (none
    when unset); gives (projection [T, proj_size], cell [T, D]) under input's LoD. h_0 is
    [sequences, proj_size], Weight [proj_size, 4D] (size = 4 * D)."""
    for arg, clip in (("cell_clip", cell_clip), ("proj_clip", proj_clip)):
        if clip is not None and clip < 0:
            raise FleetgraphError(f"dynamic_lstmp: {arg} {clip}; expected 0 or more (0: no clip)")
    helper, inputs = _lstm_layer("dynamic_lstmp", "lstmp", name, input, h_0, c_0, bias_attr)
    d = int(size) // 4
    inputs["Weight"] = [helper.create_parameter(param_attr, [proj_size, 4 * d], dtype)]
    inputs["ProjWeight"] = [helper.create_parameter(param_attr, [d, proj_size], dtype)]
    inputs["Bias"] = [_lstm_bias(helper, bias_attr, d, use_peepholes, dtype)]
    projection, cell, batch_hidden, batch_gate, batch_cell_pre_act = _outputs(helper, dtype, 5)
    attrs = _lstm_attrs(use_peepholes, is_reverse, gate_activation, cell_activation, candidate_activation)
    attrs.update(proj_activation=proj_activation, cell_clip=float(cell_clip or 0.0), proj_clip=float(proj_clip or 0.0))
    helper.append_op(
        "lstmp",
        inputs,
        {
            "Projection": [projection],
            "Cell": [cell],
            "BatchHidden": [batch_hidden],
            "BatchGate": [batch_gate],
            "BatchCellPreAct": [batch_cell_pre_act],
        },
        attrs,
    )
    return projection, cell


def dynamic_gru(
    input,
    size,
    param_attr=None,
    bias_attr=None,
    is_reverse=False,
    gate_activation="sigmoid",
    candidate_activation="tanh",
    h_0=None,
    origin_mode=False,
):
    """A GRU over each sequence of `input` ([T, 3 * size], the projection x W_x), from h_0
    ([sequences, size], zeros if absent); gives hidden [T, size] under input's LoD. Weight
    [size, 3 * size], Bias [1, 3 * size] (none with bias_attr=False)."""
    _check_float("dynamic_gru", "input", input)
    if h_0 is not None:
        _check_float("dynamic_gru", "h_0", h_0)
    helper = LayerHelper("gru", inputs=[input, h_0])
    dtype = input.dtype
    inputs = {"Input": [input], "Weight": [helper.create_parameter(param_attr, [size, 3 * size], dtype)]}
    if bias_attr is not False:
        inputs["Bias"] = [helper.create_parameter(bias_attr, [1, 3 * size], dtype, is_bias=True)]
    if h_0 is not None:
        inputs["H0"] = [h_0]
    hidden, batch_gate, batch_reset_hidden_prev, batch_hidden = _outputs(helper, dtype, 4)
    helper.append_op(
        "gru",
        inputs,
        {
            "Hidden": [hidden],
            "BatchGate": [batch_gate],
            "BatchResetHiddenPrev": [batch_reset_hidden_prev],
            "BatchHidden": [batch_hidden],
        },
        {
            "is_reverse": bool(is_reverse),
            "gate_activation": gate_activation,
            "activation": candidate_activation,
            "origin_mode": bool(origin_mode),
        },
    )
    return hidden


def _unit_activation(name: str, arg: str) -> int:
    if name not in _GRU_UNIT_ACTIVATIONS:
        raise FleetgraphError(
            f"gru_unit: {arg} {name!r} is unknown; expected one of {', '.join(_GRU_UNIT_ACTIVATIONS)}"
        )
    return _GRU_UNIT_ACTIVATIONS[name]


def gru_unit(
    input,
    hidden,
    size,
    param_attr=None,
    bias_attr=None,
    activation="tanh",
    gate_activation="sigmoid",
    origin_mode=False,
):
    """One GRU step: `input` [batch, size] (the projection x W_x, size = 3 * D) and the previous
    `hidden` [batch, D] give (updated hidden, reset * previous hidden, the activated gates). Paddle
    1.8's layer always passes tanh and sigmoid to the op; this one passes the activations asked for."""
    _check_float("gru_unit", "input", input)
    _check_float("gru_unit", "hidden", hidden)
    if not isinstance(size, int):
        raise TypeError(f"gru_unit: size expected an int, got {type(size).__name__}")
    attrs = {
        "activation": _unit_activation(activation, "activation"),
        "gate_activation": _unit_activation(gate_activation, "gate_activation"),
        "origin_mode": bool(origin_mode),
    }
    helper = LayerHelper("gru_unit", inputs=[input, hidden])
    dtype, d = input.dtype, size // 3
    inputs = {
        "Input": [input],
        "HiddenPrev": [hidden],
        "Weight": [helper.create_parameter(param_attr, [d, 3 * d], dtype)],
    }
    if bias_attr is not False:
        inputs["Bias"] = [helper.create_parameter(bias_attr, [1, 3 * d], dtype, is_bias=True)]
    gate, reset_hidden_pre, updated_hidden = _outputs(helper, dtype, 3)
    helper.append_op(
        "gru_unit",
        inputs,
        {"Gate": [gate], "ResetHiddenPrev": [reset_hidden_pre], "Hidden": [updated_hidden]},
        attrs,
    )
    return updated_hidden, reset_hidden_pre, gate


def lstm_unit(x_t, hidden_t_prev, cell_t_prev, forget_bias=0.0, param_attr=None, bias_attr=None, name=None):
    """One LSTM step: an fc over [x_t, hidden_t_prev] to 4 * D gate inputs (input, forget, output,
    candidate), then the lstm_unit op with the previous cell; gives (hidden, cell), [batch, D]."""
    for arg, value in (("x_t", x_t), ("hidden_t_prev", hidden_t_prev), ("cell_t_prev", cell_t_prev)):
        _check_float("lstm_unit", arg, value)
        if len(value.shape) != 2:
            raise FleetgraphError(f"lstm_unit: {arg} '{value.name}' {list(value.shape)}; expected rank 2")
    if not x_t.shape[0] == hidden_t_prev.shape[0] == cell_t_prev.shape[0]:
        raise FleetgraphError(
            f"lstm_unit: batch sizes x_t {x_t.shape[0]}, hidden_t_prev {hidden_t_prev.shape[0]}, cell_t_prev "
            f"{cell_t_prev.shape[0]}; expected them equal"
        )
    if hidden_t_prev.shape[1] != cell_t_prev.shape[1]:
        raise FleetgraphError(
            f"lstm_unit: hidden_t_prev width {hidden_t_prev.shape[1]}, cell_t_prev width {cell_t_prev.shape[1]}; "
            "expected them equal"
        )
    helper = LayerHelper("lstm_unit", name, inputs=[x_t, hidden_t_prev, cell_t_prev])
    size = cell_t_prev.shape[1]
    gates = fc(
        concat([x_t, hidden_t_prev], axis=1),
        4 * size,
        param_attr=param_attr,
        bias_attr=bias_attr,
    )
    c, h = _outputs(helper, x_t.dtype, 2)
    helper.append_op(
        "lstm_unit", {"X": [gates], "C_prev": [cell_t_prev]}, {"C": [c], "H": [h]}, {"forget_bias": float(forget_bias)}
    )
    return h, c
