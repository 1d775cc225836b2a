"""BasicDecoder with Fluid 1.8's decode helpers, against NumPy loops of the same cell: teacher forcing
(TrainingHelper) and greedy decoding (GreedyEmbeddingHelper), eagerly and in a static program;
SampleEmbeddingHelper draws ids from the softmax it is given."""

from __future__ import annotations

import numpy as np

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph import nn
from fleetgraph.dygraph.mode import guard
from tests.test_decode import END, H0, START, B, Cell, E, H, V

T = 4
INPUTS = np.random.default_rng(3).standard_normal((B, T, E)).astype("float32")
LENGTHS = np.array([4, 2], np.int64)


def _numpy_cell(w, b):
    return lambda x, h: np.tanh(np.concatenate([x, h], axis=-1) @ w + b)


def test_training_helper_feeds_each_step_its_input_until_the_sequence_ends():
    with guard():
        cell, out = Cell(), nn.Linear(H, V)
        helper = fluid.layers.TrainingHelper(paddle.to_tensor(INPUTS), paddle.to_tensor(LENGTHS))
        decoder = fluid.layers.BasicDecoder(cell, helper, output_fn=out)
        outputs, _, lengths = fluid.layers.dynamic_decode(decoder, paddle.to_tensor(H0), return_length=True)
        step = _numpy_cell(cell.proj.weight.numpy(), cell.proj.bias.numpy())
        wo, bo = out.weight.numpy(), out.bias.numpy()
        logits = outputs.cell_outputs.numpy()
    h, expected = H0, []
    for t in range(T):
        h = step(INPUTS[:, t], h)
        expected.append(h @ wo + bo)
    expected = np.stack(expected, axis=1)
    assert lengths.numpy().tolist() == [4, 2] and logits.shape == (B, T, V)
    np.testing.assert_allclose(logits[0], expected[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(logits[1, :2], expected[1, :2], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(outputs.sample_ids.numpy(), logits.argmax(-1))


def _numpy_greedy(emb, w, b, wo, bo, max_steps):
    step, h = _numpy_cell(w, b), H0
    ids, finished, out = np.full(B, START), np.zeros(B, bool), []
    for _ in range(max_steps + 1):
        h = step(emb[ids], h)
        ids = (h @ wo + bo).argmax(-1)
        out.append(ids)
        finished |= ids == END
        if finished.all():
            break
    return np.stack(out, axis=1)


def _greedy_decoder():
    embedding, cell, out = nn.Embedding(V, E), Cell(), nn.Linear(H, V)
    start = fluid.layers.fill_constant([B], "int64", START)
    helper = fluid.layers.GreedyEmbeddingHelper(embedding, start, END)
    return fluid.layers.BasicDecoder(cell, helper, output_fn=out), (embedding, cell, out)


def _weights(layers, get):
    embedding, cell, out = layers
    return [get(p) for p in (embedding.weight, cell.proj.weight, cell.proj.bias, out.weight, out.bias)]


def test_greedy_helper_feeds_back_its_arg_max_eagerly():
    with guard():
        decoder, layers = _greedy_decoder()
        outputs, _ = fluid.layers.dynamic_decode(decoder, paddle.to_tensor(H0), max_step_num=6)
        weights = _weights(layers, lambda p: p.numpy())
    ids = outputs.sample_ids.numpy()
    expected = _numpy_greedy(*weights, max_steps=6)
    np.testing.assert_array_equal(ids[:, : expected.shape[1]], expected)


def test_greedy_helper_in_a_static_program():
    main, startup = fluid.Program(), fluid.Program()
    paddle.enable_static()  # paddle.nn layers then make static parameters
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        h0 = fluid.data("h0", [B, H])
        decoder, layers = _greedy_decoder()
        outputs, _ = fluid.layers.dynamic_decode(decoder, h0, max_step_num=6)
    exe, scope = fluid.Executor(fluid.CPUPlace()), fluid.Scope()
    exe.run(startup, scope=scope)
    (ids,) = exe.run(main, feed={"h0": H0}, fetch_list=[outputs.sample_ids], scope=scope)
    expected = _numpy_greedy(*_weights(layers, lambda p: np.array(scope.vars[p.name])), max_steps=6)
    np.testing.assert_array_equal(ids[:, : expected.shape[1]], expected)


def test_sample_helper_draws_ids_by_the_softmax():
    with guard():
        start = fluid.layers.fill_constant([2000], "int64", START)
        helper = fluid.layers.SampleEmbeddingHelper(lambda ids: ids, start, END, softmax_temperature=2.0, seed=5)
        logits = np.tile(np.log(np.array([[0.1, 0.2, 0.7]], "float32")) * 2.0, (2000, 1))
        ids = helper.sample(0, paddle.to_tensor(logits), None).numpy()
    counts = np.bincount(ids, minlength=3) / len(ids)
    np.testing.assert_allclose(counts, [0.1, 0.2, 0.7], atol=0.04)
