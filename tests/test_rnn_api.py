"""Paddle 2.0's recurrent API (paddle.nn.LSTM, GRU, SimpleRNN on the fused rnn op; the cells and the
RNN / BiRNN wrappers) and fluid.layers.rnn / birnn with Paddle 1.8's cells: values against NumPy
implementations of Paddle's cell formulas with the same parameters, gradients of the fused op against
the cells stepped one op at a time, static programs equal to eager runs, SequenceLength masking, and
a tiny language model that trains in both modes."""

from __future__ import annotations

import numpy as np
import pytest
from dygraph_helpers import fresh_mode_and_names  # noqa: F401  (autouse)
from op_cases.rnn import gru_cell, lstm_cell, naive_rnn, simple_cell

import fleetgraph as paddle
import fleetgraph.nn as nn
import fleetgraph.nn.functional as F
from fleetgraph.dygraph import mode
from fleetgraph.ir import unique_name

LAYERS = {
    "LSTM": lambda *a, **k: nn.LSTM(*a, **k),
    "GRU": lambda *a, **k: nn.GRU(*a, **k),
    "RNN_TANH": lambda *a, **k: nn.SimpleRNN(*a, **k),
    "RNN_RELU": lambda *a, **k: nn.SimpleRNN(*a, activation="relu", **k),
}
CELLS = {
    "LSTM": nn.LSTMCell,
    "GRU": nn.GRUCell,
    "RNN_TANH": nn.SimpleRNNCell,
    "RNN_RELU": lambda i, h: nn.SimpleRNNCell(i, h, activation="relu"),
}


def _data(*shape, seed=0):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, size=shape).astype("float32")


def _in_op_order(params: list[np.ndarray]) -> list[np.ndarray]:
    """A fused layer's parameters (w_ih, w_hh, b_ih, b_hh per layer and direction) in the rnn op's
    WeightList order: all weights, then all biases."""
    cells = [params[k : k + 4] for k in range(0, len(params), 4)]
    return [w for c in cells for w in c[:2]] + [b for c in cells for b in c[2:]]


def _weight_list(layer) -> list[np.ndarray]:
    return _in_op_order([p.numpy() for _, p in layer.named_parameters()])


def _reference(layer, x, states, lengths=None, time_major=False):
    """naive_rnn (Paddle's cell formulas, one sequence at a time) on the layer's own parameters."""
    xt = x if time_major else x.transpose(1, 0, 2)
    want = naive_rnn(
        xt.astype("float64"),
        [s.astype("float64") for s in states],
        [w.astype("float64") for w in _weight_list(layer)],
        lengths,
        mode=layer.mode,
        hidden_size=layer.hidden_size,
        num_layers=layer.num_layers,
        is_bidirec=layer.num_directions == 2,
    )
    out = want["Out"] if time_major else want["Out"].transpose(1, 0, 2)
    return out, want["State"]


@pytest.mark.parametrize("mode_name", list(LAYERS))
def test_fused_layers_match_paddles_cell_formulas(mode_name):
    paddle.disable_static()
    layer = LAYERS[mode_name](3, 4, num_layers=2, direction="bidirectional")
    x = _data(2, 5, 3)
    states = [_data(4, 2, 4, seed=1 + i) for i in range(layer.state_components)]
    init = tuple(paddle.to_tensor(s) for s in states)
    out, final = layer(paddle.to_tensor(x), init if len(init) > 1 else init[0])
    want_out, want_states = _reference(layer, x, states)
    np.testing.assert_allclose(out.numpy(), want_out, rtol=1e-5, atol=1e-6)
    finals = final if isinstance(final, tuple) else (final,)
    for got, want in zip(finals, want_states):
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)


def test_parameters_are_named_and_shaped_as_paddles():
    paddle.disable_static()
    lstm = nn.LSTM(16, 32, num_layers=2, direction="bidirect")
    shapes = {n: p.shape for n, p in lstm.named_parameters()}
    assert list(shapes)[:8] == [
        *("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"),
        *("weight_ih_l0_reverse", "weight_hh_l0_reverse", "bias_ih_l0_reverse", "bias_hh_l0_reverse"),
    ]
    assert shapes["weight_ih_l0"] == [128, 16] and shapes["weight_ih_l1"] == [128, 64]
    assert shapes["weight_hh_l1_reverse"] == [128, 32] and shapes["bias_hh_l1_reverse"] == [128]
    assert [p.shape for p in nn.GRU(5, 6).parameters()] == [[18, 5], [18, 6], [18], [18]]


def test_docstring_examples_give_paddles_shapes():
    paddle.disable_static()
    x = paddle.to_tensor(_data(4, 23, 16))
    y, (h, c) = nn.LSTM(16, 32, 2)(x, (paddle.to_tensor(_data(2, 4, 32)), paddle.to_tensor(_data(2, 4, 32))))
    assert (y.shape, h.shape, c.shape) == ([4, 23, 32], [2, 4, 32], [2, 4, 32])
    y, h = nn.GRU(16, 32, 2)(x)
    assert (y.shape, h.shape) == ([4, 23, 32], [2, 4, 32])
    y, h = nn.SimpleRNN(16, 32, 2)(x)
    assert (y.shape, h.shape) == ([4, 23, 32], [2, 4, 32])
    outputs, final_states = nn.RNN(nn.SimpleRNNCell(16, 32))(x, paddle.to_tensor(_data(4, 32)))
    assert (outputs.shape, final_states.shape) == ([4, 23, 32], [4, 32])
    outputs, final_states = nn.BiRNN(nn.LSTMCell(16, 32), nn.LSTMCell(16, 32))(x)
    assert outputs.shape == [4, 23, 64] and final_states[0][0].shape == [4, 32] and len(final_states) == 2


def _copy_cells(layer, cells):
    """Give cells[k] the fused layer's parameters of layer-direction k."""
    params = [p for _, p in layer.named_parameters()]
    for k, cell in enumerate(cells):
        for name, p in zip(("weight_ih", "weight_hh", "bias_ih", "bias_hh"), params[4 * k : 4 * k + 4]):
            getattr(cell, name).set_value(p.numpy())


def _cell_stack(layer, x, lengths):
    """The fused layer's computation as cells stepped by RNN / BiRNN, layer by layer (no dropout)."""
    dirs, cells = layer.num_directions, []
    out, finals = x, []
    for i in range(layer.num_layers):
        width = layer.input_size if i == 0 else dirs * layer.hidden_size
        pair = [CELLS[layer.mode](width, layer.hidden_size) for _ in range(dirs)]
        cells += pair
        wrapper = nn.BiRNN(*pair) if dirs == 2 else nn.RNN(pair[0])
        _copy_cells(_layer_slice(layer, i), pair)
        out, final = wrapper(out, sequence_length=lengths)
        finals.append(final)
    return out, finals, cells


class _layer_slice:
    """The named parameters of one layer (all its directions) of a fused layer."""

    def __init__(self, layer, i):
        per = 4 * layer.num_directions
        self._params = list(layer.named_parameters())[per * i : per * (i + 1)]

    def named_parameters(self):
        return self._params


@pytest.mark.parametrize("mode_name", list(LAYERS))
def test_fused_gradients_equal_the_cells_stepped_one_op_at_a_time(mode_name):
    paddle.disable_static()
    layer = LAYERS[mode_name](3, 4, num_layers=2, direction="bidirectional")
    xv, weights = _data(2, 5, 3), _data(2, 5, 8, seed=3)
    x = paddle.to_tensor(xv)
    x.stop_gradient = False
    out, _ = layer(x)
    (out * paddle.to_tensor(weights)).sum().backward()
    x2 = paddle.to_tensor(xv)
    x2.stop_gradient = False
    out2, _, cells = _cell_stack(layer, x2, None)
    (out2 * paddle.to_tensor(weights)).sum().backward()
    np.testing.assert_allclose(out.numpy(), out2.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-4, atol=1e-6)
    params = [p for _, p in layer.named_parameters()]
    cell_params = [getattr(c, n) for c in cells for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")]
    for p, q in zip(params, cell_params):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-4, atol=1e-5, err_msg=p.name)


def test_sequence_length_stops_each_sequence_and_zeroes_its_outputs():
    paddle.disable_static()
    lstm = nn.LSTM(3, 4, direction="bidirectional")
    xv, lengths = _data(3, 5, 3), np.array([5, 2, 4], "int64")
    x = paddle.to_tensor(xv)
    x.stop_gradient = False
    out, (h, c) = lstm(x, sequence_length=paddle.to_tensor(lengths))
    zeros = [np.zeros((2, 3, 4), "float32")] * 2
    want_out, (want_h, want_c) = _reference(lstm, xv, zeros, lengths)
    np.testing.assert_allclose(out.numpy(), want_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h.numpy(), want_h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c.numpy(), want_c, rtol=1e-5, atol=1e-6)
    assert not out.numpy()[1, 2:].any() and not out.numpy()[2, 4:].any()
    # a padded step changes nothing, so it gets no gradient
    (out.sum() + h.sum()).backward()
    assert not x.grad.numpy()[1, 2:].any() and x.grad.numpy()[1, :2].all()
    # the sequences alone, unpadded, give the same outputs
    alone, (h_alone, _) = lstm(paddle.to_tensor(xv[1:2, :2]))
    np.testing.assert_allclose(alone.numpy(), out.numpy()[1:2, :2], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h_alone.numpy()[:, 0], h.numpy()[:, 1], rtol=1e-5, atol=1e-6)


def test_the_cell_wrappers_mask_as_the_fused_layer_at_valid_steps():
    paddle.disable_static()
    gru = nn.GRU(3, 4, direction="bidirectional")
    xv, lengths = _data(3, 5, 3), paddle.to_tensor(np.array([5, 2, 4], "int64"))
    out, h = gru(paddle.to_tensor(xv), sequence_length=lengths)
    out2, finals, _ = _cell_stack(gru, paddle.to_tensor(xv), lengths)
    valid = np.arange(5)[None, :] < np.array([5, 2, 4])[:, None]
    np.testing.assert_allclose(out.numpy()[valid], out2.numpy()[valid], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h.numpy()[0], finals[0][0].numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h.numpy()[1], finals[0][1].numpy(), rtol=1e-5, atol=1e-6)


def test_time_major_input_is_taken_as_is():
    paddle.disable_static()
    gru = nn.GRU(3, 4, time_major=True)
    xv = _data(5, 2, 3)
    out, h = gru(paddle.to_tensor(xv))
    want_out, (want_h,) = _reference(gru, xv, [np.zeros((1, 2, 4), "float32")], time_major=True)
    np.testing.assert_allclose(out.numpy(), want_out, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h.numpy(), want_h, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "cell, formula",
    [
        (lambda: nn.LSTMCell(3, 4), lambda x, s, w: lstm_cell(x, *s, *w)),
        (lambda: nn.GRUCell(3, 4), lambda x, s, w: gru_cell(x, s, *w)),
        (lambda: nn.SimpleRNNCell(3, 4, activation="relu"), lambda x, s, w: simple_cell(x, s, *w, "relu")),
    ],
    ids=["lstm", "gru", "simple_rnn_relu"],
)
def test_cells_compute_paddles_step(cell, formula):
    paddle.disable_static()
    c = cell()
    x = _data(2, 3)
    states = (_data(2, 4, seed=1), _data(2, 4, seed=2)) if isinstance(c, nn.LSTMCell) else _data(2, 4, seed=1)
    w = [p.numpy().astype("float64") for p in c.parameters()]
    given = tuple(paddle.to_tensor(s) for s in states) if isinstance(states, tuple) else paddle.to_tensor(states)
    out, new = c(paddle.to_tensor(x), given)
    want = formula(x.astype("float64"), states, w)
    want_h = want[0] if isinstance(want, tuple) else want
    np.testing.assert_allclose(out.numpy(), want_h, rtol=1e-5, atol=1e-6)
    if isinstance(c, nn.LSTMCell):
        np.testing.assert_allclose(new[1].numpy(), want[1], rtol=1e-5, atol=1e-6)


def _static_run(build, feed, params: dict[str, np.ndarray]):
    """Build a static program with `build()` -> (fetches, parameters by eager name), give its
    parameters `params`' values, and run it once; fetches include the parameters' gradients."""
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup), unique_name.guard():
        fetches, named = build()
        loss = fetches[0]
        grads = paddle.static.gradients([loss], [named[n] for n in params])
    exe, scope = paddle.static.Executor(paddle.CPUPlace()), paddle.static.Scope()
    exe.run(startup, scope=scope)
    for n, value in params.items():
        scope.vars[named[n].name] = value
    got = exe.run(main, feed=feed, fetch_list=list(fetches) + grads, scope=scope)
    mode._mode = None
    return got[: len(fetches)], dict(zip(params, got[len(fetches) :]))


def _eager_run(build, feed):
    paddle.disable_static()
    with unique_name.guard():
        fetches, named = build(eager_feed={k: paddle.to_tensor(v) for k, v in feed.items()})
    fetches[0].backward()
    params = {n: p.numpy() for n, p in named.items()}
    grads = {n: p.grad.numpy() for n, p in named.items()}
    mode._mode = None
    return [f.numpy() for f in fetches], params, grads


def _static_equals_eager(make_model, feed, static_inputs):
    def build(eager_feed=None):
        model = make_model()
        ins = eager_feed or {k: paddle.static.data(k, shape, dtype) for k, (shape, dtype) in static_inputs.items()}
        out, final = model(ins["x"], sequence_length=ins.get("lengths"))
        flat = [final] if not isinstance(final, (list, tuple)) else list(_flat(final))
        loss = paddle.mean(out * out) + sum(paddle.mean(f) for f in flat)
        return [loss, out, *flat], dict(model.named_parameters())

    eager, params, eager_grads = _eager_run(build, feed)
    static, static_grads = _static_run(build, feed, params)
    for e, s in zip(eager, static):
        np.testing.assert_allclose(s, e, rtol=1e-5, atol=1e-6)
    for n in params:
        np.testing.assert_allclose(static_grads[n], eager_grads[n], rtol=1e-4, atol=1e-6, err_msg=n)


def _flat(states):
    for s in states:
        if isinstance(s, (list, tuple)):
            yield from _flat(s)
        else:
            yield s


INPUTS = {"x": ([None, 5, 3], "float32"), "lengths": ([None], "int64")}
FEED = {"x": _data(3, 5, 3), "lengths": np.array([5, 2, 4], "int64")}


@pytest.mark.parametrize("mode_name", ["LSTM", "GRU", "RNN_TANH"])
def test_fused_layer_static_program_equals_eager(mode_name):
    _static_equals_eager(lambda: LAYERS[mode_name](3, 4, num_layers=2, direction="bidirect"), FEED, INPUTS)


def test_fused_layer_is_one_rnn_op_in_a_program():
    paddle.enable_static()
    main = paddle.static.Program()
    with paddle.static.program_guard(main, paddle.static.Program()):
        nn.LSTM(3, 4, num_layers=3, direction="bidirect")(paddle.static.data("x", [None, 5, 3], "float32"))
    types = [op.type for op in main.global_block().ops]
    assert types.count("rnn") == 1 and "while" not in types
    op = next(op for op in main.global_block().ops if op.type == "rnn")
    assert len(op.input("WeightList")) == 24 and op.attrs["mode"] == "LSTM" and op.attrs["is_bidirec"]


@pytest.mark.parametrize(
    "make",
    [
        lambda: nn.RNN(nn.LSTMCell(3, 4)),
        lambda: nn.RNN(nn.GRUCell(3, 4), is_reverse=True),
        lambda: nn.BiRNN(nn.SimpleRNNCell(3, 4), nn.SimpleRNNCell(3, 4)),
    ],
    ids=["lstm", "gru_reverse", "birnn_simple"],
)
def test_cell_wrappers_static_while_loop_equals_eager(make):
    _static_equals_eager(make, FEED, INPUTS)


def test_cell_wrapper_builds_a_while_loop_in_a_program():
    paddle.enable_static()
    main = paddle.static.Program()
    with paddle.static.program_guard(main, paddle.static.Program()):
        nn.RNN(nn.GRUCell(3, 4))(paddle.static.data("x", [None, 5, 3], "float32"))
    assert [op.type for op in main.global_block().ops].count("while") == 1


def _basic_lstm(x, h, c, w, b, forget_bias=1.0):
    """Paddle 1.8's BasicLSTMUnit: gates [i, j, f, o] from [x, h] @ W."""
    sig = lambda v: 1.0 / (1.0 + np.exp(-v))  # noqa: E731
    i, j, f, o = np.split(np.concatenate([x, h], 1) @ w + b, 4, axis=1)
    c = c * sig(f + forget_bias) + sig(i) * np.tanh(j)
    return np.tanh(c) * sig(o), c


def _basic_gru(x, h, wg, wc, bg, bc):
    sig = lambda v: 1.0 / (1.0 + np.exp(-v))  # noqa: E731
    r, u = np.split(sig(np.concatenate([x, h], 1) @ wg + bg), 2, axis=1)
    c = np.tanh(np.concatenate([x, r * h], 1) @ wc + bc)
    return u * h + (1 - u) * c


@pytest.mark.parametrize("static", [False, True], ids=["eager", "static"])
def test_fluid_rnn_and_birnn_step_paddle_1_8_cells(static):
    fluid = paddle.fluid
    xv = _data(2, 4, 3)
    cell_fw, cell_bw = fluid.layers.LSTMCell(5), fluid.layers.GRUCell(5)

    def build(x):
        out, (state_fw, state_bw) = fluid.layers.birnn(cell_fw, cell_bw, x)
        return [out, *state_fw, state_bw]

    if static:
        paddle.enable_static()
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            fetches = build(paddle.static.data("x", [None, 4, 3], "float32"))
        exe, scope = paddle.static.Executor(paddle.CPUPlace()), paddle.static.Scope()
        exe.run(startup, scope=scope)
        got = exe.run(main, feed={"x": xv}, fetch_list=fetches, scope=scope)
        value = lambda p: np.asarray(scope.vars[p.name])  # noqa: E731
    else:
        paddle.disable_static()
        got = [t.numpy() for t in build(paddle.to_tensor(xv))]
        value = lambda p: p.numpy()  # noqa: E731
    w, b = value(cell_fw._weight), value(cell_fw._bias)
    gru_w = [value(p) for p in (cell_bw._gate_weight, cell_bw._candidate_weight, cell_bw._gate_bias)]
    gru_w.append(value(cell_bw._candidate_bias))
    h, c, hb = np.zeros((2, 5)), np.zeros((2, 5)), np.zeros((2, 5))
    outs_fw, outs_bw = [], [None] * 4
    for t in range(4):
        h, c = _basic_lstm(xv[:, t], h, c, w, b)
        outs_fw.append(h)
    for t in range(3, -1, -1):
        hb = _basic_gru(xv[:, t], hb, *gru_w)
        outs_bw[t] = hb
    want = np.concatenate([np.stack(outs_fw, 1), np.stack(outs_bw, 1)], axis=-1)
    np.testing.assert_allclose(got[0], want, rtol=1e-5, atol=1e-6)
    for g, e in zip(got[1:], (h, c, hb)):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


def test_dropout_applies_between_layers_in_training_only():
    paddle.disable_static()
    lstm = nn.LSTM(3, 4, num_layers=2, dropout=0.5)
    x = paddle.to_tensor(_data(2, 5, 3))
    train_a, _ = lstm(x)
    train_b, _ = lstm(x)
    lstm.eval()
    eval_a, _ = lstm(x)
    eval_b, _ = lstm(x)
    np.testing.assert_array_equal(eval_a.numpy(), eval_b.numpy())
    assert not np.allclose(train_a.numpy(), eval_a.numpy()) and not np.allclose(train_a.numpy(), train_b.numpy())
    zeros = [np.zeros((2, 2, 4), "float32")] * 2
    np.testing.assert_allclose(eval_a.numpy(), _reference(lstm, x.numpy(), zeros)[0], rtol=1e-5, atol=1e-6)


def test_an_initial_state_of_the_wrong_count_is_refused():
    paddle.disable_static()
    with pytest.raises(paddle.FleetgraphError, match=r"expected 2 \(\(h, c\)\)"):
        nn.LSTM(3, 4)(paddle.to_tensor(_data(2, 5, 3)), paddle.to_tensor(_data(1, 2, 4)))
    with pytest.raises(ValueError, match="direction should be forward or bidirect"):
        nn.GRU(3, 4, direction="backward")


class _LanguageModel(nn.Layer):
    """Embedding, a recurrent layer, and a projection back onto the vocabulary at every step."""

    def __init__(self, make_rnn, vocab: int = 12, hidden: int = 16) -> None:
        super().__init__()
        self.embedding = nn.Embedding(vocab, 8)
        self.rnn = make_rnn(8, hidden)
        self.head = nn.Linear(hidden, vocab)
        self.vocab = vocab

    def forward(self, ids):
        hidden, _ = self.rnn(self.embedding(ids))
        return paddle.reshape(self.head(hidden), [-1, self.vocab])


def _sentences(steps: int, batch: int = 8, length: int = 6, vocab: int = 12):
    """Counting sentences: each token is the one before plus a stride fixed per sentence (1 or 2),
    so the next token follows from the last two."""
    rng = np.random.default_rng(0)
    for _ in range(steps):
        start, stride = rng.integers(0, vocab, (batch, 1)), rng.integers(1, 3, (batch, 1))
        tokens = (start + stride * np.arange(length + 1)) % vocab
        yield tokens[:, :-1].astype("int64"), tokens[:, 1:].reshape(-1, 1).astype("int64")


def _lm_losses_dynamic(make_rnn, steps: int) -> list[float]:
    paddle.disable_static()
    paddle.seed(5)
    with unique_name.guard():
        model = _LanguageModel(make_rnn)
    opt = paddle.optimizer.Adam(learning_rate=0.05, parameters=model.parameters())
    losses = []
    for ids, labels in _sentences(steps):
        loss = paddle.mean(F.cross_entropy(model(paddle.to_tensor(ids)), paddle.to_tensor(labels)))
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss.numpy()))
    mode._mode = None
    return losses


def _lm_losses_static(make_rnn, steps: int) -> list[float]:
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    main.random_seed = startup.random_seed = 5
    with paddle.static.program_guard(main, startup), unique_name.guard():
        model = _LanguageModel(make_rnn)
        ids, labels = paddle.static.data("ids", [None, 6], "int64"), paddle.static.data("labels", [None, 1], "int64")
        loss = paddle.mean(F.cross_entropy(model(ids), labels))
        paddle.optimizer.Adam(learning_rate=0.05).minimize(loss)
    exe, scope = paddle.static.Executor(paddle.CPUPlace()), paddle.static.Scope()
    exe.run(startup, scope=scope)
    losses = [
        float(exe.run(main, feed={"ids": x, "labels": y}, fetch_list=[loss], scope=scope)[0])
        for x, y in _sentences(steps)
    ]
    mode._mode = None
    return losses


@pytest.mark.parametrize(
    "make_rnn",
    [lambda i, h: nn.LSTM(i, h), lambda i, h: nn.GRU(i, h, num_layers=2), lambda i, h: nn.RNN(nn.LSTMCell(i, h))],
    ids=["lstm", "gru_2_layers", "lstm_cell_loop"],
)
def test_a_tiny_language_model_trains_alike_in_both_modes(make_rnn):
    dynamic = _lm_losses_dynamic(make_rnn, 40)
    static = _lm_losses_static(make_rnn, 40)
    np.testing.assert_allclose(static, dynamic, rtol=1e-3, atol=1e-4)
    assert np.mean(dynamic[-5:]) < 0.2 * np.mean(dynamic[:5]), dynamic


def test_biases_turned_off_are_absent_and_count_as_zero():
    paddle.disable_static()
    gru = nn.GRU(3, 4, bias_ih_attr=False, bias_hh_attr=False)
    assert [n for n, _ in gru.named_parameters()] == ["weight_ih_l0", "weight_hh_l0"]
    xv = _data(2, 5, 3)
    out, h = gru(paddle.to_tensor(xv))
    zero = np.zeros(12)
    want = naive_rnn(
        xv.transpose(1, 0, 2).astype("float64"),
        [np.zeros((1, 2, 4))],
        [p.numpy().astype("float64") for p in gru.parameters()] + [zero, zero],
        mode="GRU",
        hidden_size=4,
        num_layers=1,
        is_bidirec=False,
    )
    np.testing.assert_allclose(out.numpy(), want["Out"].transpose(1, 0, 2), rtol=1e-5, atol=1e-6)
    out.sum().backward()
    assert gru.weight_hh_l0.grad is not None


def test_a_program_cloned_for_test_runs_without_dropout():
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        lstm = nn.LSTM(3, 4, num_layers=2, dropout=0.5)
        out, _ = lstm(paddle.static.data("x", [None, 5, 3], "float32"))
    test = main.clone(for_test=True)
    assert [op.attrs["is_test"] for op in test.global_block().ops if op.type == "rnn"] == [True]
    exe, scope = paddle.static.Executor(paddle.CPUPlace()), paddle.static.Scope()
    exe.run(startup, scope=scope)
    xv = _data(2, 5, 3)
    train = [exe.run(main, feed={"x": xv}, fetch_list=[out], scope=scope)[0] for _ in range(2)]
    evals = [exe.run(test, feed={"x": xv}, fetch_list=[out], scope=scope)[0] for _ in range(2)]
    assert not np.allclose(train[0], train[1])
    np.testing.assert_array_equal(evals[0], evals[1])
    mode._mode = None
    zeros = [np.zeros((2, 2, 4), "float32")] * 2
    weights = _in_op_order([np.asarray(scope.vars[p.name]) for _, p in lstm.named_parameters()])
    want = naive_rnn(xv.transpose(1, 0, 2), zeros, weights, mode="LSTM", hidden_size=4, num_layers=2, is_bidirec=False)
    np.testing.assert_allclose(evals[0], want["Out"].transpose(1, 0, 2), rtol=1e-5, atol=1e-6)


def test_to_static_traces_the_fused_layer_and_saved_models_load(tmp_path):
    paddle.disable_static()

    class Tagger(nn.Layer):
        def __init__(self) -> None:
            super().__init__()
            self.lstm, self.head = nn.LSTM(3, 4, direction="bidirect"), nn.Linear(8, 2)

        def forward(self, x):
            return self.head(self.lstm(x)[0])

    model = Tagger()
    model.eval()
    x = paddle.to_tensor(_data(2, 5, 3))
    want = model(x).numpy()
    traced = paddle.jit.to_static(model)
    np.testing.assert_allclose(traced(x).numpy(), want, rtol=1e-6, atol=1e-7)
    path = str(tmp_path / "tagger")
    paddle.jit.save(traced, path, input_spec=[paddle.jit.InputSpec([None, 5, 3], "float32")])
    np.testing.assert_allclose(paddle.jit.load(path)(x).numpy(), want, rtol=1e-6, atol=1e-7)
