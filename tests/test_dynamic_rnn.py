"""DynamicRNN over LoD sequences on while and the tensor-array ops: values against a NumPy loop per
sequence (Paddle's test_dynrnn_gradient_check.py and test_dynrnn_static_input.py models), the
outputs' LoD, static inputs and memories reordered by rank, gradients against central
differences (and of the in-place counter DynamicRNN's loop writes its memory at), and the errors."""

from __future__ import annotations

import numpy as np
import pytest
from test_static_rnn import _programs
from test_static_rnn import _run as run

import fleetgraph.fluid as fluid
from fleetgraph.ops.lod_tensor import create_lod_tensor

L = fluid.layers
LENGTHS = [3, 1, 2, 4]  # ranked 4, 3, 2, 1: the batch's order is not the rank's
D, H = 3, 2


def _run(main, startup, feed, fetch, params=None):
    return run(main, startup, feed, fetch, params, return_numpy=False)  # LoD tensors, with their LoD


def _sequences(rows: np.ndarray, lengths=LENGTHS) -> list[np.ndarray]:
    return np.split(rows, np.cumsum(lengths)[:-1])


def _tanh_rnn(x):
    """h_t = tanh(x_t W + h_{t-1}) from a zero memory (TestSimpleMulWithMemory, with tanh)."""
    rnn = L.DynamicRNN()
    with rnn.block():
        step = rnn.step_input(x)
        mem = rnn.memory(shape=[H], value=0.0)
        h = L.tanh(L.elementwise_add(L.fc(step, H, param_attr="W", bias_attr=False), mem))
        rnn.update_memory(mem, h)
        rnn.output(h)
    return rnn()


def _numpy_tanh_rnn(rows, w):
    outs = []
    for seq in _sequences(rows):
        h = np.zeros(H)
        for row in seq:
            h = np.tanh(row @ w + h)
            outs.append(h)
    return np.array(outs)


def test_a_memory_runs_along_each_sequence_and_the_output_keeps_the_batchs_lod():
    rng = np.random.default_rng(0)
    rows, w = rng.normal(size=(sum(LENGTHS), D)), rng.normal(size=(D, H))
    main, startup, guard = _programs()
    with guard:
        x = L.data(name="x", shape=[D], dtype="float32", lod_level=1)
        out = _tanh_rnn(x)
        last = L.sequence_pool(out, "last")
    feed = {"x": create_lod_tensor(rows.astype("float32"), [LENGTHS])}
    got, got_last = _run(main, startup, feed, [out, last], {"W": w})
    want = _numpy_tanh_rnn(rows, w)
    assert got.recursive_sequence_lengths() == [LENGTHS]
    np.testing.assert_allclose(np.array(got), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.array(got_last), want[np.cumsum(LENGTHS) - 1], rtol=1e-5, atol=1e-6)


def test_static_input_and_a_reordered_memory_follow_each_sequence():
    """test_dynrnn_static_input.py's use: a per-sequence static row and initial memory (in the
    batch's order) meet that sequence's steps, though the steps run longest sequence first."""
    rng = np.random.default_rng(1)
    rows = rng.normal(size=(sum(LENGTHS), D))
    static, boot = rng.normal(size=(len(LENGTHS), D)), rng.normal(size=(len(LENGTHS), D))
    main, startup, guard = _programs()
    with guard:
        x = L.data(name="x", shape=[D], dtype="float32", lod_level=1)
        s = L.data(name="s", shape=[D], dtype="float32")
        h0 = L.data(name="h0", shape=[D], dtype="float32")
        rnn = L.DynamicRNN()
        with rnn.block():
            step = rnn.step_input(x)
            per_sequence = rnn.static_input(s)
            mem = rnn.memory(init=h0, need_reorder=True)
            h = L.elementwise_add(L.scale(mem, scale=0.5), L.elementwise_mul(step, per_sequence))
            rnn.update_memory(mem, h)
            rnn.output(h, per_sequence)
        out, seen = rnn()
    feed = {"x": create_lod_tensor(rows.astype("float32"), [LENGTHS]), "s": static, "h0": boot}
    feed = {k: v if k == "x" else v.astype("float32") for k, v in feed.items()}
    got, got_seen = _run(main, startup, feed, [out, seen])
    want, want_seen = [], []
    for k, seq in enumerate(_sequences(rows)):
        h = boot[k]
        for row in seq:
            h = h * 0.5 + row * static[k]
            want.append(h)
            want_seen.append(static[k])
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.array(got_seen), np.array(want_seen), rtol=1e-6)
    assert got_seen.recursive_sequence_lengths() == [LENGTHS]


def test_dynamic_rnn_builds_paddles_loop():
    main, startup, guard = _programs()
    with guard:
        _tanh_rnn(L.data(name="x", shape=[D], dtype="float32", lod_level=1))
    ops = [op.type for op in main.global_block().ops]
    assert ops == [
        "fill_constant",
        "lod_rank_table",
        "max_sequence_len",
        "less_than",
        "lod_tensor_to_array",
        "fill_constant",
        "read_from_array",
        "fill_constant_batch_size_like",
        "write_to_array",
        "while",
        "array_to_lod_tensor",
    ]
    body = [op.type for op in main.block(1).ops]
    assert body[:3] == ["read_from_array", "read_from_array", "shrink_rnn_memory"]
    assert body[-4:] == ["write_to_array", "increment", "write_to_array", "less_than"]


def _central_differences(f, value: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    grad = np.zeros_like(value)
    for k in np.ndindex(value.shape):
        step = np.zeros_like(value)
        step[k] = eps
        grad[k] = (f(value + step) - f(value - step)) / (2 * eps)
    return grad


def test_gradients_of_a_dynamic_rnn_without_memory_match_central_differences():
    """TestSimpleMul: each step's row times W and the static row; the loss reads each sequence's last step."""
    rng = np.random.default_rng(3)
    rows, static, w = rng.normal(size=(sum(LENGTHS), D)), rng.normal(size=(len(LENGTHS), D)), rng.normal(size=(D, H))
    main, startup, guard = _programs()
    with guard:
        x = L.data(name="x", shape=[D], dtype="float32", lod_level=1)
        s = L.data(name="s", shape=[D], dtype="float32")
        x.stop_gradient = s.stop_gradient = False
        rnn = L.DynamicRNN()
        with rnn.block():
            step = L.elementwise_mul(rnn.step_input(x), rnn.static_input(s))
            rnn.output(L.tanh(L.fc(step, H, param_attr="W", bias_attr=False)))
        loss = L.mean(L.sequence_pool(rnn(), "last"))
        grads = fluid.gradients(loss, [x, s, main.global_block().var("W")])
    feed = {"x": create_lod_tensor(rows.astype("float32"), [LENGTHS]), "s": static.astype("float32")}
    got = _run(main, startup, feed, grads, {"W": w})

    def numpy_loss(rows, static, w):
        last = [np.tanh((seq[-1] * static[k]) @ w) for k, seq in enumerate(_sequences(rows))]
        return np.mean(last)

    values = [rows, static, w]
    for k, grad in enumerate(got):
        f = lambda v, k=k: numpy_loss(*[v if j == k else values[j] for j in range(3)])  # noqa: E731
        np.testing.assert_allclose(np.array(grad), _central_differences(f, values[k]), rtol=1e-4, atol=1e-6)


def test_a_loops_gradient_reads_a_counter_stepped_in_place_as_its_forward_op_did():
    """DynamicRNN's pattern: the body increments i in place, then writes at the new i; the gradient of
    that write must read element i + 1 (Paddle steps the counter back in the gradient block)."""
    main, startup, guard = _programs()
    with guard:
        w = L.data(name="w", shape=[2], dtype="float32", append_batch_size=False)
        w.stop_gradient = False
        i = L.fill_constant([1], "int64", 0)
        n = L.fill_constant([1], "int64", 3)
        h = L.fill_constant([2], "float32", 1.0)
        array = L.create_array("float32")
        cond = L.less_than(i, n)
        with L.While(cond).block():
            L.assign(L.elementwise_mul(h, w), output=h)
            L.increment(i, in_place=True)
            L.array_write(h, i, array=array)
            L.less_than(i, n, cond=cond)
        picks = [L.scale(L.array_read(array, L.fill_constant([1], "int64", k)), scale=float(k * k)) for k in (1, 2, 3)]
        loss = L.reduce_sum(L.sums(picks))
        (grad,) = fluid.gradients(loss, w)
    w0 = np.array([0.7, -1.3])
    (got,) = _run(main, startup, {"w": w0.astype("float32")}, [grad])

    def numpy_loss(w):
        return sum(k * k * w**k for k in (1, 2, 3)).sum()

    np.testing.assert_allclose(np.array(got), _central_differences(numpy_loss, w0), rtol=1e-4)


def test_gradients_through_a_dynamic_rnn_memory_match_central_differences():
    rng = np.random.default_rng(2)
    rows, w = rng.normal(size=(sum(LENGTHS), D)), rng.normal(size=(D, H))
    main, startup, guard = _programs()
    with guard:
        x = L.data(name="x", shape=[D], dtype="float32", lod_level=1)
        x.stop_gradient = False
        loss = L.mean(L.sequence_pool(_tanh_rnn(x), "last"))
        grads = fluid.gradients(loss, [x, main.global_block().var("W")])
    feed = {"x": create_lod_tensor(rows.astype("float32"), [LENGTHS])}
    got_x, got_w = _run(main, startup, feed, grads, {"W": w})

    def numpy_loss(rows, w):
        return _numpy_tanh_rnn(rows, w)[np.cumsum(LENGTHS) - 1].mean()

    for got, value, f in ((got_x, rows, lambda v: numpy_loss(v, w)), (got_w, w, lambda v: numpy_loss(rows, v))):
        np.testing.assert_allclose(np.array(got), _central_differences(f, value), rtol=1e-4, atol=1e-6)


def test_dynamic_rnn_refuses_misuse_with_paddles_messages():
    main, startup, guard = _programs()
    with guard:
        x = L.data(name="x", shape=[D], dtype="float32", lod_level=1)
        rnn = L.DynamicRNN()
        with pytest.raises(ValueError, match="step_input can only be invoked inside rnn block"):
            rnn.step_input(x)
        with pytest.raises(ValueError, match="only be visited outside the rnn block"):
            rnn()
        with rnn.block():
            with pytest.raises(RuntimeError, match="must be called after step_input"):
                rnn.static_input(x)
            with pytest.raises(ValueError, match="step_input should be invoked before memory"):
                rnn.memory(shape=[H])
            step = rnn.step_input(x)
            with pytest.raises(ValueError, match="Please invoke memory before update_memory"):
                rnn.update_memory(step, step)
            with pytest.raises(TypeError, match="must be a Variable"):
                rnn.step_input(np.zeros(3))
            rnn.output(step)
        with pytest.raises(ValueError, match="can only be invoke once"):
            with rnn.block():
                pass
