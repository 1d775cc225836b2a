"""The recurrent layers over LoD sequences and their single steps: the ops and parameters
dynamic_lstm, dynamic_lstmp, dynamic_gru, lstm_unit and gru_unit build, their values against the NumPy references
of Paddle's unit tests (tests/op_cases/recurrent.py), gradients through time reaching the weights,
and an LSTM sequence classifier that trains."""

from __future__ import annotations

import numpy as np
import pytest
import test_sequence_ops
from dygraph_helpers import fresh_mode_and_names  # noqa: F401  (fixture)
from op_cases.recurrent import naive_gru, naive_gru_unit, naive_lstm, naive_lstm_unit, naive_lstmp

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.initializer import Constant, Uniform
from fleetgraph.ir import Program, ShapeError, program_guard, unique_name
from fleetgraph.ops.lod_tensor import create_lod_tensor
from fleetgraph.param_attr import ParamAttr

D = 3
_RNG = np.random.default_rng(5)


def _data(name, width, lod_level=1, dtype="float64"):
    return fluid.layers.data(name=name, shape=[width], dtype=dtype, lod_level=lod_level, stop_gradient=False)


def _run(main, startup, feed, fetch):
    """Outputs and the scope's parameters after the startup program and one run."""
    scope, exe = paddle.static.Scope(), fluid.Executor()
    exe.run(startup, scope=scope)
    out = exe.run(main, feed=feed, fetch_list=fetch, scope=scope, return_numpy=False)
    return out, {n: np.array(v) for n, v in scope.vars.items()}


def _op(program, op_type):
    (op,) = [op for op in program.global_block().ops if op.type == op_type]
    return op


programs = test_sequence_ops.programs  # the fixture: fresh default programs and names
_BIAS = ParamAttr(initializer=Uniform(-0.5, 0.5))


# -- dynamic_lstm ---------------------------------------------------------------------------------


def test_dynamic_lstm_builds_paddles_lstm_op_and_parameters(programs):
    main, _ = programs
    x = _data("x", 4 * D, dtype="float32")
    hidden, cell = fluid.layers.dynamic_lstm(x, size=4 * D, is_reverse=True, cell_activation="relu")
    op = _op(main, "lstm")
    assert op.inputs == {"Input": ["x"], "Weight": ["lstm_0.w_0"], "Bias": ["lstm_0.b_0"]}
    assert list(op.outputs) == ["Hidden", "Cell", "BatchGate", "BatchCellPreAct"]
    assert op.attrs["use_peepholes"] and op.attrs["is_reverse"] and op.attrs["cell_activation"] == "relu"
    block = main.global_block()
    assert block.var("lstm_0.w_0").shape == (D, 4 * D) and block.var("lstm_0.b_0").shape == (1, 7 * D)
    assert hidden.shape == cell.shape == (-1, D) and hidden.lod_level == cell.lod_level == 1
    fluid.layers.dynamic_lstm(x, size=4 * D, use_peepholes=False)
    assert block.var("lstm_1.b_0").shape == (1, 4 * D)


def test_dynamic_lstm_gives_the_hidden_and_cell_of_paddles_reference(programs):
    """Peepholes, reversed sequences, an empty one, and initial states."""
    main, startup = programs
    lod = [[3, 0, 4, 2]]
    x, h0, c0 = _data("x", 4 * D), _data("h0", D, 0), _data("c0", D, 0)
    hidden, cell = fluid.layers.dynamic_lstm(
        x, 4 * D, h_0=h0, c_0=c0, bias_attr=_BIAS, is_reverse=True, dtype="float64"
    )
    feed = {"x": create_lod_tensor(_RNG.normal(size=(9, 4 * D)), lod), "h0": _RNG.normal(size=(4, D))}
    feed["c0"] = _RNG.normal(size=(4, D))
    (h, c), params = _run(main, startup, feed, [hidden, cell])
    attrs = _op(main, "lstm").attrs
    want = naive_lstm(feed["x"], params["lstm_0.w_0"], params["lstm_0.b_0"], H0=feed["h0"], C0=feed["c0"], **attrs)
    assert h.lod() == c.lod() == [[0, 3, 3, 7, 9]]
    np.testing.assert_allclose(np.array(h), want["Hidden"].data, rtol=1e-10)
    np.testing.assert_allclose(np.array(c), want["Cell"].data, rtol=1e-10)


def test_a_loss_on_the_cell_state_reaches_the_lstm_weight(programs):
    """Paddle's lstm_grad drops Cell's gradient; here it counts, as central differences say."""
    main, startup = programs
    x = _data("x", 4 * D)
    _, cell = fluid.layers.dynamic_lstm(x, 4 * D, use_peepholes=False, dtype="float64")
    loss = fluid.layers.reduce_sum(cell)
    (d_weight,) = fluid.gradients([loss], [main.global_block().var("lstm_0.w_0")])
    feed = {"x": create_lod_tensor(_RNG.normal(size=(5, 4 * D)), [[2, 3]])}
    (got,), params = _run(main, startup, feed, [d_weight])
    w, b = params["lstm_0.w_0"], params["lstm_0.b_0"]
    attrs = _op(main, "lstm").attrs

    def total(weight):
        return naive_lstm(feed["x"], weight, b, **attrs)["Cell"].data.sum()

    numeric = np.zeros_like(w)
    for idx in np.ndindex(w.shape):
        step = np.zeros_like(w)
        step[idx] = 1e-6
        numeric[idx] = (total(w + step) - total(w - step)) / 2e-6
    np.testing.assert_allclose(np.array(got), numeric, rtol=1e-5, atol=1e-8)
    assert np.abs(numeric).max() > 1e-3


def test_dynamic_lstm_refuses_an_integer_input_and_a_bias_of_the_wrong_width(programs):
    main, _ = programs
    with pytest.raises(TypeError, match="dynamic_lstm: input expected a float32 or float64 variable, got a int64"):
        fluid.layers.dynamic_lstm(_data("ids", 1, dtype="int64"), size=4 * D)
    x = _data("x", 4 * D, dtype="float32")
    block = main.global_block()
    w = block.create_parameter("w", (D, 4 * D), "float32")
    b = block.create_parameter("b", (1, 4 * D), "float32")
    outs = {slot: [block.create_var(slot.lower()).name] for slot in ("Hidden", "Cell", "BatchGate", "BatchCellPreAct")}
    with pytest.raises(ShapeError, match=r"lstm: Bias 'b' \[1, 12\]: expected \[1, 21\] \(use_peepholes=True"):
        block.append_op("lstm", {"Input": [x.name], "Weight": [w.name], "Bias": [b.name]}, outs)


# -- dynamic_lstmp --------------------------------------------------------------------------------


def test_dynamic_lstmp_builds_paddles_lstmp_op_with_a_projection_weight(programs):
    main, _ = programs
    projection, cell = fluid.layers.dynamic_lstmp(_data("x", 4 * D), 4 * D, 2, cell_clip=0.5, use_peepholes=False)
    op = _op(main, "lstmp")
    assert op.inputs == {
        "Input": ["x"],
        "Weight": ["lstmp_0.w_0"],
        "ProjWeight": ["lstmp_0.w_1"],
        "Bias": ["lstmp_0.b_0"],
    }
    assert list(op.outputs) == ["Projection", "Cell", "BatchHidden", "BatchGate", "BatchCellPreAct"]
    assert (op.attrs["cell_clip"], op.attrs["proj_clip"], op.attrs["proj_activation"]) == (0.5, 0.0, "tanh")
    block = main.global_block()
    shapes = [block.var(f"lstmp_0.{p}").shape for p in ("w_0", "w_1", "b_0")]
    assert shapes == [(2, 4 * D), (D, 2), (1, 4 * D)]
    assert projection.shape == (-1, 2) and cell.shape == (-1, D) and projection.lod_level == 1


def test_dynamic_lstmp_gives_the_projection_and_cell_of_paddles_reference(programs):
    """Clipped cells and projections, initial states, an empty sequence."""
    main, startup = programs
    x, h0, c0 = _data("x", 4 * D), _data("h0", 2, 0), _data("c0", D, 0)
    projection, cell = fluid.layers.dynamic_lstmp(
        x, 4 * D, 2, bias_attr=_BIAS, h_0=h0, c_0=c0, dtype="float64", cell_clip=0.5, proj_clip=0.2
    )
    feed = {"x": create_lod_tensor(_RNG.normal(size=(6, 4 * D)), [[4, 0, 2]]), "h0": _RNG.normal(size=(3, 2))}
    feed["c0"] = _RNG.normal(size=(3, D))
    (r, c), params = _run(main, startup, feed, [projection, cell])
    weights = {k: params[f"lstmp_0.{p}"] for k, p in (("Weight", "w_0"), ("ProjWeight", "w_1"), ("Bias", "b_0"))}
    want = naive_lstmp(feed["x"], H0=feed["h0"], C0=feed["c0"], **weights, **_op(main, "lstmp").attrs)
    assert r.lod() == c.lod() == [[0, 4, 4, 6]]
    np.testing.assert_allclose(np.array(r), want["Projection"].data, rtol=1e-10)
    np.testing.assert_allclose(np.array(c), want["Cell"].data, rtol=1e-10)
    assert np.abs(np.array(r)).max() == 0.2


# -- dynamic_gru ----------------------------------------------------------------------------------


@pytest.mark.parametrize("origin_mode", [False, True])
def test_dynamic_gru_gives_the_hidden_of_paddles_reference(programs, origin_mode):
    main, startup = programs
    lod = [[2, 4, 0, 3]]
    x, h0 = _data("x", 3 * D), _data("h0", D, 0)
    hidden = fluid.layers.dynamic_gru(x, D, bias_attr=_BIAS, is_reverse=True, h_0=h0, origin_mode=origin_mode)
    op = _op(main, "gru")
    assert op.inputs == {"Input": ["x"], "Weight": ["gru_0.w_0"], "Bias": ["gru_0.b_0"], "H0": ["h0"]}
    assert main.global_block().var("gru_0.w_0").shape == (D, 3 * D) and hidden.lod_level == 1
    feed = {"x": create_lod_tensor(_RNG.normal(size=(9, 3 * D)), lod), "h0": _RNG.normal(size=(4, D))}
    (h,), params = _run(main, startup, feed, [hidden])
    want = naive_gru(feed["x"], params["gru_0.w_0"], H0=feed["h0"], Bias=params["gru_0.b_0"], **op.attrs)
    assert h.lod() == [[0, 2, 6, 6, 9]]
    np.testing.assert_allclose(np.array(h), want["Hidden"].data, rtol=1e-10)


def test_dynamic_gru_without_bias_builds_no_bias_input(programs):
    main, _ = programs
    fluid.layers.dynamic_gru(_data("x", 3 * D), D, bias_attr=False)
    assert set(_op(main, "gru").inputs) == {"Input", "Weight"}


# -- the single steps -----------------------------------------------------------------------------


def test_gru_unit_returns_hidden_reset_and_gate_of_paddles_reference(programs):
    main, startup = programs
    x, h_prev = _data("x", 3 * D, 0), _data("h", D, 0)
    hidden, reset, gate = fluid.layers.gru_unit(x, h_prev, 3 * D, bias_attr=_BIAS, activation="relu")
    op = _op(main, "gru_unit")
    assert op.attrs["activation"] == 3 and op.attrs["gate_activation"] == 1
    feed = {"x": _RNG.normal(size=(4, 3 * D)), "h": _RNG.normal(size=(4, D))}
    got, params = _run(main, startup, feed, [hidden, reset, gate])
    want = naive_gru_unit(feed["x"], feed["h"], params["gru_unit_0.w_0"], Bias=params["gru_unit_0.b_0"], **op.attrs)
    for value, slot in zip(got, ("Hidden", "ResetHiddenPrev", "Gate")):
        np.testing.assert_allclose(np.array(value), want[slot], rtol=1e-10, err_msg=slot)


def test_lstm_unit_is_an_fc_over_input_and_hidden_then_the_cell(programs):
    main, startup = programs
    x, h_prev, c_prev = _data("x", 2, 0), _data("h", D, 0), _data("c", D, 0)
    hidden, cell = fluid.layers.lstm_unit(x, h_prev, c_prev, forget_bias=1.0, bias_attr=_BIAS)
    assert [op.type for op in main.global_block().ops] == ["concat", "mul", "elementwise_add", "lstm_unit"]
    feed = {"x": _RNG.normal(size=(5, 2)), "h": _RNG.normal(size=(5, D)), "c": _RNG.normal(size=(5, D))}
    (h, c), params = _run(main, startup, feed, [hidden, cell])
    gates = np.hstack([feed["x"], feed["h"]]) @ params["fc_0.w_0"] + params["fc_0.b_0"]
    want = naive_lstm_unit(gates, feed["c"], forget_bias=1.0)
    np.testing.assert_allclose(np.array(h), want["H"], rtol=1e-10)
    np.testing.assert_allclose(np.array(c), want["C"], rtol=1e-10)


def test_lstm_unit_and_gru_unit_run_eagerly():
    paddle.disable_static()
    x = paddle.to_tensor(_RNG.normal(size=(2, 3 * D)).astype("float32"))
    h_prev = paddle.to_tensor(_RNG.normal(size=(2, D)).astype("float32"))
    hidden, reset, gate = fluid.layers.gru_unit(x, h_prev, 3 * D)
    u, r, c = np.split(gate.numpy(), 3, axis=1)
    np.testing.assert_allclose(reset.numpy(), r * h_prev.numpy(), rtol=1e-6)
    np.testing.assert_allclose(hidden.numpy(), u * c + (1 - u) * h_prev.numpy(), rtol=1e-5, atol=1e-6)
    c_prev = paddle.to_tensor(np.ones((2, D), "float32"))
    h, cell = fluid.layers.lstm_unit(
        x,
        h_prev,
        c_prev,
        param_attr=ParamAttr(initializer=Constant(0.0)),
        bias_attr=ParamAttr(initializer=Constant(1.0)),
    )
    sig, tanh = 1 / (1 + np.exp(-1.0)), np.tanh(1.0)  # every gate input is the bias, 1
    np.testing.assert_allclose(cell.numpy(), np.full((2, D), sig + sig * tanh), rtol=1e-6)
    np.testing.assert_allclose(h.numpy(), sig * np.tanh(cell.numpy()), rtol=1e-6)


# -- an LSTM sequence classifier trains -----------------------------------------------------------


def test_an_lstm_classifier_over_word_sequences_learns_which_word_marks_the_class():
    """embedding -> fc -> dynamic_lstm -> max pooling -> softmax, Adam: Paddle's sentiment model, small.
    A sequence is class 1 when it holds word 1."""
    main, startup = Program(), Program()
    main.random_seed = startup.random_seed = 3
    with program_guard(main, startup), unique_name.guard():
        words = fluid.layers.data(name="words", shape=[1], dtype="int64", lod_level=1)
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
        emb = fluid.layers.embedding(words, size=[8, 6])
        hidden, _ = fluid.layers.dynamic_lstm(fluid.layers.fc(emb, 4 * 5), size=4 * 5)
        pred = fluid.layers.fc(fluid.layers.sequence_pool(hidden, "max"), 2, act="softmax")
        loss = fluid.layers.mean(fluid.layers.cross_entropy(pred, label))
        fluid.optimizer.Adam(learning_rate=0.05).minimize(loss)
    rng = np.random.default_rng(0)
    lengths = rng.integers(2, 6, size=16)
    ids = [rng.integers(2, 8, size=n) for n in lengths]
    labels = rng.integers(0, 2, size=16)
    for seq, y in zip(ids, labels):
        if y:
            seq[rng.integers(0, len(seq))] = 1
    feed = {
        "words": create_lod_tensor(np.concatenate(ids).reshape(-1, 1), [lengths.tolist()]),
        "label": labels.reshape(-1, 1),
    }
    scope, exe = paddle.static.Scope(), fluid.Executor()
    exe.run(startup, scope=scope)
    losses = [float(exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0]) for _ in range(40)]
    assert losses[-1] < 0.1 < losses[0]
