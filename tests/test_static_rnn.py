"""StaticRNN on the recurrent op: Paddle's test_recurrent_op.py models (values against a NumPy loop,
gradients against central differences), outputs and memories made from the same value, the
recurrent op's reverse order, training equal to the same model unrolled by hand, and the errors."""

from __future__ import annotations

import numpy as np
import pytest

import fleetgraph.fluid as fluid

L = fluid.layers
SEQ, BATCH, DIM = 3, 2, 2


def _programs():
    main, startup = fluid.Program(), fluid.Program()
    return main, startup, fluid.program_guard(main, startup)


def _run(main, startup, feed, fetch, params=None, return_numpy=True):
    """Run startup, set the named parameters (float32), run main once."""
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    exe.run(startup, scope=scope)
    for name, value in (params or {}).items():
        scope.find_var(name).get_tensor().set(value.astype("float32"), fluid.CPUPlace())
    return exe.run(main, feed=feed, fetch_list=fetch, scope=scope, return_numpy=return_numpy)


def _central_differences(f, values: dict, name: str, eps: float = 1e-6) -> np.ndarray:
    x = values[name].astype("float64")
    grad = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[k] = eps
        grad[k] = (f({**values, name: x + step}) - f({**values, name: x - step})) / (2 * eps)
    return grad


def _check(build, numpy_loss, values: dict, params=(), rtol=1e-4):
    """build(feeds) -> the RNN's output; its mean and the gradients of every fed value and of the
    named parameters match numpy_loss(values) and its central differences."""
    main, startup, guard = _programs()
    with guard:
        feeds = {}
        for name, value in values.items():
            if name not in params:
                feeds[name] = L.data(name, list(value.shape), dtype="float32", append_batch_size=False)
                feeds[name].stop_gradient = False
        loss = L.mean(build(feeds))
        names = list(values)
        grads = fluid.gradients(loss, [main.global_block().var(n) for n in names])
    fed = {n: v.astype("float32") for n, v in values.items() if n not in params}
    got = _run(main, startup, fed, [loss, *grads], {p: values[p] for p in params})
    np.testing.assert_allclose(got[0].reshape(()), numpy_loss(values), rtol=1e-5)
    for name, grad in zip(names, got[1:]):
        want = _central_differences(numpy_loss, values, name)
        np.testing.assert_allclose(grad, want, rtol=rtol, atol=1e-6, err_msg=name)


def _rng(seed: int = 0):
    return np.random.default_rng(seed)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _one_memory_rnn(cell):
    """build(feeds) for _check: a StaticRNN over x from h_boot with h_t = cell(x_t, h_{t-1}), output h_t."""

    def build(f):
        rnn = L.StaticRNN()
        with rnn.step():
            h_pre = rnn.memory(init=f["h_boot"])
            h = cell(rnn.step_input(f["x"]), h_pre)
            rnn.update_memory(h_pre, h)
            rnn.output(h)
        return rnn()

    return build


def _one_memory_loss(cell):
    """numpy_loss for _check: the mean of h_t = cell(values, x_t, h_{t-1}) over the steps."""

    def numpy_loss(v):
        h, ys = v["h_boot"], []
        for x_t in v["x"]:
            h = cell(v, x_t, h)
            ys.append(h)
        return np.mean(ys)

    return numpy_loss


def test_rnn_of_scaled_sums_matches_paddles_numpy_loop():
    """RecurrentOpTest1: h_t = (x_t + h_{t-1}) / 2."""
    build = _one_memory_rnn(lambda x_t, h_pre: L.scale(L.elementwise_add(h_pre, x_t), scale=0.5))
    numpy_loss = _one_memory_loss(lambda v, x_t, h: (h + x_t) * 0.5)
    rng = _rng(1)
    _check(build, numpy_loss, {"x": rng.normal(size=(SEQ, BATCH, DIM)), "h_boot": rng.normal(size=(BATCH, DIM))})


def test_sigmoid_rnn_sums_its_parameters_gradients_over_the_steps():
    """RecurrentOpTest2: h_t = sigmoid(x_t W + h_{t-1} U), W and U fc parameters read at every step."""

    def cell(x_t, h_pre):
        left = L.fc(x_t, DIM, param_attr=fluid.ParamAttr(name="W"), bias_attr=False)
        right = L.fc(h_pre, DIM, param_attr=fluid.ParamAttr(name="U"), bias_attr=False)
        return L.sigmoid(L.elementwise_add(left, right))

    numpy_loss = _one_memory_loss(lambda v, x_t, h: _sigmoid(x_t @ v["W"] + h @ v["U"]))
    rng = _rng(2)
    values = {
        "x": rng.normal(size=(SEQ, BATCH, DIM)),
        "h_boot": rng.normal(size=(BATCH, DIM)),
        "W": rng.normal(size=(DIM, DIM)),
        "U": rng.normal(size=(DIM, DIM)),
    }
    _check(_one_memory_rnn(cell), numpy_loss, values, params=("W", "U"))


def test_two_memories_each_chain_their_own_gradient():
    """RecurrentOpMultipleMemoryTest: y_t = h1 + x_t + h2, both memories carried unchanged."""

    def build(f):
        rnn = L.StaticRNN()
        with rnn.step():
            h_pre1 = rnn.memory(init=f["h_boot1"])
            h_pre2 = rnn.memory(init=f["h_boot2"])
            x_t = rnn.step_input(f["x"])
            mem1 = L.scale(h_pre1, scale=1.0)
            mem2 = L.scale(h_pre2, scale=2.0)
            rnn.update_memory(h_pre1, mem1)
            rnn.update_memory(h_pre2, mem2)
            rnn.output(L.sums([mem1, x_t, mem2]))
        return rnn()

    def numpy_loss(v):
        h1, h2, ys = v["h_boot1"], v["h_boot2"], []
        for x_t in v["x"]:
            h2 = h2 * 2.0
            ys.append(h1 + x_t + h2)
        return np.mean(ys)

    rng = _rng(3)
    values = {
        "x": rng.normal(size=(SEQ, BATCH, DIM)),
        "h_boot1": rng.normal(size=(BATCH, DIM)),
        "h_boot2": rng.normal(size=(BATCH, DIM)),
    }
    _check(build, numpy_loss, values)


def test_a_value_of_the_enclosing_block_read_at_every_step_gets_its_gradient_summed():
    """RecurrentOpSubBlockTest's shape: y = emb W1 is made outside and read by every step (a
    `parameters` input of the op that is no parameter), with W2 fed as data; all four get gradients."""

    def build(f):
        y = L.matmul(f["emb"], f["w1"])
        rnn = L.StaticRNN()
        with rnn.step():
            pre_h = rnn.memory(shape=[-1, DIM], batch_ref=f["x"], init_value=0.0)
            both = L.concat([rnn.step_input(f["x"]), pre_h], 1)
            new_h = L.tanh(L.elementwise_add(L.matmul(both, f["w2"]), y))
            rnn.update_memory(pre_h, new_h)
            rnn.step_output(new_h)
        return rnn()

    def numpy_loss(v):
        y, h, outs = v["emb"] @ v["w1"], np.zeros((BATCH, DIM)), []
        for x_t in v["x"]:
            h = np.tanh(np.concatenate([x_t, h], 1) @ v["w2"] + y)
            outs.append(h)
        return np.mean(outs)

    rng = _rng(10)
    values = {
        "x": rng.normal(size=(SEQ, BATCH, DIM)),
        "emb": rng.normal(size=(BATCH, DIM)),
        "w1": rng.normal(size=(DIM, DIM)),
        "w2": rng.normal(size=(2 * DIM, DIM)),
    }
    _check(build, numpy_loss, values)


def test_memory_without_init_starts_at_init_value_with_the_batch_of_batch_ref():
    """RecurrentOpNoMemBootTest: mem_t = mem_{t-1} + x_t from a constant of x's batch (its dimension 1)."""

    def build(f):
        rnn = L.StaticRNN()
        with rnn.step():
            mem_pre = rnn.memory(shape=[-1, DIM], batch_ref=f["x"], init_value=0.5)
            x_t = rnn.step_input(f["x"])
            mem = L.elementwise_add(mem_pre, x_t)
            rnn.update_memory(mem_pre, mem)
            rnn.output(mem)
        return rnn()

    def numpy_loss(v):
        return np.mean(np.cumsum(v["x"], axis=0) + 0.5)

    _check(build, numpy_loss, {"x": _rng(4).normal(size=(SEQ, BATCH + 2, DIM))})


def test_one_value_as_output_and_memory_and_a_step_input_as_output():
    """Paddle's StaticRNN.output example: the hidden state is both the next memory and an output,
    the word itself a second output; the memory's batch comes from the step input."""
    rng = _rng(5)
    x = rng.normal(size=(SEQ, BATCH, DIM)).astype("float32")
    w = rng.normal(size=(2 * DIM, DIM)).astype("float32")
    main, startup, guard = _programs()
    with guard:
        seq = L.data("x", [SEQ, BATCH, DIM], dtype="float32", append_batch_size=False)
        rnn = L.StaticRNN()
        with rnn.step():
            word = rnn.step_input(seq)
            prev = rnn.memory(shape=[-1, DIM], batch_ref=word)
            both = L.concat([word, prev], 1)
            hidden = L.fc(both, DIM, act="relu", param_attr=fluid.ParamAttr(name="w"), bias_attr=False)
            rnn.update_memory(prev, hidden)
            rnn.output(hidden, word)
        hiddens, words = rnn()
    got_h, got_w = _run(main, startup, {"x": x}, [hiddens, words], {"w": w})
    h, want = np.zeros((BATCH, DIM), "float32"), []
    for x_t in x:
        h = np.maximum(np.concatenate([x_t, h], 1) @ w, 0)
        want.append(h)
    np.testing.assert_allclose(got_h, np.stack(want), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got_w, x)


def test_reverse_steps_from_the_last_time_step_and_stacks_in_time_order():
    main, startup, guard = _programs()
    with guard:
        seq = L.data("x", [SEQ, BATCH, DIM], dtype="float32", append_batch_size=False)
        seq.stop_gradient = False
        rnn = L.StaticRNN()
        with rnn.step():
            mem_pre = rnn.memory(shape=[-1, DIM], batch_ref=seq)
            mem = L.elementwise_add(L.scale(mem_pre, scale=0.5), rnn.step_input(seq))
            rnn.update_memory(mem_pre, mem)
            rnn.output(mem)
        out = rnn()
        main.global_block().ops[-1].attrs["reverse"] = True
        loss = L.reduce_sum(L.elementwise_mul(out, out))
        (grad,) = fluid.gradients(loss, seq)
    x = _rng(6).normal(size=(SEQ, BATCH, DIM))

    def forward(v):
        mem, outs = np.zeros((BATCH, DIM)), [None] * SEQ
        for t in reversed(range(SEQ)):
            mem = mem * 0.5 + v[t]
            outs[t] = mem
        return np.stack(outs)

    got, got_grad = _run(main, startup, {"x": x.astype("float32")}, [out, grad])
    np.testing.assert_allclose(got, forward(x), rtol=1e-5)
    want = _central_differences(lambda v: (forward(v["x"]) ** 2).sum(), {"x": x}, "x")
    np.testing.assert_allclose(got_grad, want, rtol=1e-4, atol=1e-6)


def _tanh_rnn_loss(x, label, *, unrolled: bool):
    """h_t = tanh(fc([x_t, h_{t-1}])), loss the squared error of fc(h_t) at every step: through a
    StaticRNN, or the same layers written once per time step (one set of named parameters)."""
    attrs = dict(param_attr=fluid.ParamAttr(name="w_h"), bias_attr=fluid.ParamAttr(name="b_h"))
    out_attrs = dict(param_attr=fluid.ParamAttr(name="w_o"), bias_attr=fluid.ParamAttr(name="b_o"))
    h0 = L.fill_constant_batch_size_like(x, [-1, 4], "float32", 0.0, input_dim_idx=1)
    if unrolled:
        h, outs = h0, []
        for x_t in L.split(x, SEQ, dim=0):
            h = L.fc(L.concat([L.reshape(x_t, [-1, DIM]), h], 1), 4, act="tanh", **attrs)
            outs.append(L.reshape(L.fc(h, 1, **out_attrs), [1, -1, 1]))
        pred = L.concat(outs, 0)
    else:
        rnn = L.StaticRNN()
        with rnn.step():
            h_pre = rnn.memory(init=h0)
            h = L.fc(L.concat([rnn.step_input(x), h_pre], 1), 4, act="tanh", **attrs)
            rnn.update_memory(h_pre, h)
            rnn.output(L.fc(h, 1, **out_attrs))
        pred = rnn()
    return L.mean(L.square_error_cost(pred, label))


def _tanh_rnn_params(rng) -> dict[str, np.ndarray]:
    shapes = {"w_h": (DIM + 4, 4), "b_h": (4,), "w_o": (4, 1), "b_o": (1,)}
    return {name: rng.normal(scale=0.5, size=shape).astype("float32") for name, shape in shapes.items()}


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_training_through_static_rnn_equals_the_model_unrolled(optimizer):
    rng = _rng(7)
    x = rng.normal(size=(SEQ, BATCH, DIM)).astype("float32")
    label = rng.normal(size=(SEQ, BATCH, 1)).astype("float32")
    params = _tanh_rnn_params(rng)
    losses = {}
    for unrolled in (False, True):
        main, startup, guard = _programs()
        with guard:
            xv = L.data("x", [SEQ, BATCH, DIM], dtype="float32", append_batch_size=False)
            yv = L.data("y", [SEQ, BATCH, 1], dtype="float32", append_batch_size=False)
            loss = _tanh_rnn_loss(xv, yv, unrolled=unrolled)
            opt = fluid.optimizer.SGD(0.5) if optimizer == "sgd" else fluid.optimizer.Adam(0.05)
            opt.minimize(loss)
        exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
        exe.run(startup, scope=scope)
        for name, value in params.items():
            scope.find_var(name).get_tensor().set(value, fluid.CPUPlace())
        losses[unrolled] = [
            float(exe.run(main, feed={"x": x, "y": label}, fetch_list=[loss], scope=scope)[0]) for _ in range(8)
        ]
    np.testing.assert_allclose(losses[False], losses[True], rtol=1e-5)
    assert losses[False][-1] < 0.7 * losses[False][0]


def _trained_tanh_rnn(place, steps: int = 2) -> tuple[np.ndarray, fluid.Program]:
    rng = _rng(8)
    main, startup, guard = _programs()
    with guard:
        x = L.data("x", [SEQ, BATCH, DIM], dtype="float32", append_batch_size=False)
        y = L.data("y", [SEQ, BATCH, 1], dtype="float32", append_batch_size=False)
        fluid.optimizer.SGD(0.1).minimize(_tanh_rnn_loss(x, y, unrolled=False))
    exe, scope = fluid.Executor(place), fluid.Scope()
    exe.run(startup, scope=scope)
    for name, value in _tanh_rnn_params(rng).items():
        scope.find_var(name).get_tensor().set(value, place)
    feed = {"x": rng.normal(size=(SEQ, BATCH, DIM)).astype("float32"), "y": np.ones((SEQ, BATCH, 1), "float32")}
    for _ in range(steps):
        exe.run(main, feed=feed, scope=scope)
    return np.asarray(scope.find_var("w_h").get_tensor()), main


def test_static_rnn_trains_on_the_strict_array_api():
    xps = pytest.importorskip("array_api_strict")
    from fleetgraph.executor.place import Place

    class StrictPlace(Place):
        def array_module(self):
            return xps

    strict, _ = _trained_tanh_rnn(StrictPlace())
    plain, _ = _trained_tanh_rnn(fluid.CPUPlace())
    np.testing.assert_allclose(strict, plain, rtol=1e-6)


def test_the_recurrent_gradient_op_names_every_parameter_it_produces_the_gradient_of():
    """A backward op: op_role_var holds [param, grad] pairs, which the collective transpiler all-reduces."""
    _, main = _trained_tanh_rnn(fluid.CPUPlace(), steps=0)
    (grad_op,) = [op for op in main.global_block().ops if op.type == "recurrent_grad"]
    role_var = grad_op.attrs["op_role_var"]
    assert sorted(zip(role_var[0::2], role_var[1::2])) == [(n, n + "@GRAD") for n in ("b_h", "b_o", "w_h", "w_o")]


def test_a_trained_static_rnn_saves_and_loads_as_an_inference_model(tmp_path):
    """The pruned inference program keeps the step block and the variables the op feeds it."""
    rng = _rng(9)
    main, startup, guard = _programs()
    with guard:
        x = L.data("x", [SEQ, BATCH, DIM], dtype="float32", append_batch_size=False)
        y = L.data("y", [SEQ, BATCH, 1], dtype="float32", append_batch_size=False)
        loss = _tanh_rnn_loss(x, y, unrolled=False)
        fluid.optimizer.SGD(0.1).minimize(loss)
    pred = [op for op in main.global_block().ops if op.type == "recurrent"][0].output("outputs")[0]
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    exe.run(startup, scope=scope)
    feed = {"x": rng.normal(size=(SEQ, BATCH, DIM)).astype("float32"), "y": np.ones((SEQ, BATCH, 1), "float32")}
    exe.run(main, feed=feed, scope=scope)
    test_program = main.clone(for_test=True)
    (want,) = exe.run(test_program, feed=feed, fetch_list=[pred], scope=scope)
    with fluid.scope_guard(scope):
        fluid.io.save_inference_model(str(tmp_path), ["x"], [test_program.global_block().var(pred)], exe, main)
        program, feeds, fetches = fluid.io.load_inference_model(str(tmp_path), exe)
        (got,) = exe.run(program, feed={feeds[0]: feed["x"]}, fetch_list=fetches)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_static_rnn_refuses_misuse_with_paddles_messages():
    main, startup, guard = _programs()
    with guard:
        x = L.data("x", [SEQ, BATCH, DIM], dtype="float32", append_batch_size=False)
        short = L.data("short", [SEQ - 1, BATCH, DIM], dtype="float32", append_batch_size=False)
        rnn = L.StaticRNN()
        with pytest.raises(ValueError, match="You must invoke memory in rnn block"):
            rnn.memory(init=x)
        with pytest.raises(ValueError, match="after rnn block"):
            rnn()
        with pytest.raises(ValueError, match="should be updated in every step"):
            with rnn.step():
                rnn.memory(shape=[-1, DIM], batch_ref=x)
                rnn.step_output(rnn.step_input(x))
        other = L.StaticRNN()
        with other.step():
            other.output(other.step_input(x))
            with pytest.raises(ValueError, match="fix seq_len"):
                other.step_input(short)
            with pytest.raises(ValueError, match="need shape and batch_ref"):
                other.memory()
