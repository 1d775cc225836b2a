"""The linear-chain CRF layers: the transition parameter that linear_chain_crf makes and
crf_decoding reads by name, the cost's sign (Paddle's LogLikelihood holds -log p), Viterbi paths
against brute force, chunk_eval on Paddle's NER example, padded batches equal to LoD ones, eager
calls, errors, and a tiny tagger that learns what only the transitions can tell."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import test_sequence_ops

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import FleetgraphError, Program, ShapeError, program_guard
from fleetgraph.ops.lod_tensor import create_lod_tensor

programs = test_sequence_ops.programs  # the fixture: fresh default programs and unique names


def _run(main, feed, fetch, scope=None):
    """The fetched values' rows as arrays (a LoD value's too)."""
    out = fluid.Executor().run(
        main, feed=feed, fetch_list=fetch, scope=scope or paddle.static.Scope(), return_numpy=False
    )
    return [np.asarray(v) for v in out]


def _score(x, w, path):
    """A path's unnormalised log score: start + emissions + transitions + end (Paddle's formula)."""
    pairs = sum(w[2 + a, b] for a, b in zip(path[:-1], path[1:]))
    return w[0, path[0]] + w[1, path[-1]] + sum(x[k, t] for k, t in enumerate(path)) + pairs


def _lod_data(name, width, dtype="float32"):
    return fluid.layers.data(name=name, shape=[width], dtype=dtype, lod_level=1)


# -- the layers build Paddle's ops around one transition parameter ----------------------------------


def test_linear_chain_crf_makes_the_transition_param_attr_names_and_crf_decoding_reads_it(programs):
    main, startup = programs
    x, label = _lod_data("x", 4), _lod_data("label", 1, "int64")
    cost = fluid.layers.linear_chain_crf(x, label, param_attr=fluid.ParamAttr(name="crfw"))
    path = fluid.layers.crf_decoding(x, param_attr=fluid.ParamAttr(name="crfw"))
    crf, decode = main.global_block().ops
    transition = main.global_block().var("crfw")
    assert transition.shape == (6, 4) and startup.global_block().has_var("crfw")
    assert crf.type == "linear_chain_crf" and crf.inputs == {
        "Emission": ["x"],
        "Transition": ["crfw"],
        "Label": ["label"],
    }
    assert sorted(crf.outputs) == ["Alpha", "EmissionExps", "LogLikelihood", "TransitionExps"]
    assert crf.outputs["LogLikelihood"] == [cost.name] and cost.shape == (-1, 1)
    assert decode.type == "crf_decoding" and decode.inputs == {"Emission": ["x"], "Transition": ["crfw"]}
    assert path.dtype == "int64" and path.lod_level == 1 and path.shape == (-1, 1)


def test_the_cost_is_minus_the_log_likelihood_so_exp_of_minus_it_sums_to_one_over_all_paths(programs):
    main, startup = programs
    tags, steps = 3, 3
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=(steps, tags)), rng.normal(size=(tags + 2, tags))
    paths = list(itertools.product(range(tags), repeat=steps))
    emission = _lod_data("x", tags, "float64")
    label = _lod_data("label", 1, "int64")
    cost = fluid.layers.linear_chain_crf(emission, label, param_attr=fluid.ParamAttr(name="crfw"))
    lod = [[steps] * len(paths)]
    feed = {
        "x": create_lod_tensor(np.tile(x, (len(paths), 1)), lod),
        "label": create_lod_tensor(np.array(paths).reshape(-1, 1), lod),
        "crfw": w,
    }
    (costs,) = _run(main, feed, [cost])
    assert (costs > 0).all()  # a cost, not a log-likelihood
    np.testing.assert_allclose(np.exp(-costs).sum(), 1.0, rtol=1e-12)
    log_z = np.log(sum(np.exp(_score(x, w, p)) for p in paths))
    np.testing.assert_allclose(costs.ravel(), [log_z - _score(x, w, p) for p in paths], rtol=1e-10)


# -- crf_decoding ---------------------------------------------------------------------------------------


def test_crf_decoding_finds_the_best_scoring_path_of_each_padded_sequence(programs):
    main, startup = programs
    tags, lengths = 3, [4, 2, 0]
    rng = np.random.default_rng(1)
    x, w = rng.normal(size=(3, 4, tags)), rng.normal(size=(tags + 2, tags))
    emission = fluid.data("x", [None, 4, tags], "float64")
    length = fluid.data("length", [None], "int64")
    fluid.layers.linear_chain_crf(emission, fluid.data("label", [None, 4], "int64"), "crfw", length)
    path = fluid.layers.crf_decoding(emission, fluid.ParamAttr(name="crfw"), length=length)
    feed = {"x": x, "label": np.zeros((3, 4), np.int64), "length": np.array(lengths), "crfw": w}
    (got,) = _run(main, feed, [path])
    assert got.shape == (3, 4) and got.dtype == np.int64
    for i, n in enumerate(lengths):
        if n:
            best = max(itertools.product(range(tags), repeat=n), key=lambda p: _score(x[i], w, p))
            assert tuple(got[i, :n]) == best
        assert not got[i, n:].any()  # zeros past the end


def test_crf_decoding_with_label_marks_the_tags_it_got_right_as_paddles_test(programs):
    main, _ = programs
    # Paddle's TestCRFDecodingOp2: every emission and transition row is 0..4, so tag 4 wins everywhere
    lod, tags = [[1, 2, 3, 4]], 5
    ramp = np.tile(np.arange(tags, dtype="float64"), (12, 1))
    emission, label = _lod_data("x", tags, "float64"), _lod_data("label", 1, "int64")
    transition = fluid.layers.create_parameter([tags + 2, tags], "float64", name="crfw")
    right = fluid.layers.crf_decoding(emission, transition, label=label)
    labels = np.random.default_rng(2).integers(0, tags, size=(10, 1))
    feed = {"x": create_lod_tensor(ramp[:10], lod), "label": create_lod_tensor(labels, lod), "crfw": ramp[:7]}
    (got,) = _run(main, feed, [right])
    np.testing.assert_array_equal(got, (labels == 4).astype(np.int64))


def test_crf_decoding_runs_eagerly_on_tensors_with_the_transition_itself():
    x = np.random.default_rng(3).normal(size=(2, 3, 4))
    w = np.random.default_rng(4).normal(size=(6, 4))
    path = fluid.layers.crf_decoding(paddle.to_tensor(x), paddle.to_tensor(w), length=paddle.to_tensor([3, 1]))
    assert isinstance(path, paddle.Tensor)
    best = max(itertools.product(range(4), repeat=3), key=lambda p: _score(x[0], w, p))
    np.testing.assert_array_equal(path.numpy(), [best, [int(np.argmax(w[0] + x[1, 0] + w[1])), 0, 0]])


# -- chunk_eval on the NER example of Paddle's docstring ---------------------------------------------------

# "Li Ming works at Agricultural Bank of China in Beijing." tagged PER, ORG and LOC: Paddle's table
# gives ids chunk type * tags + tag (IOB: B-ORG 0, I-ORG 1, B-PER 2, I-PER 3, B-LOC 4, I-LOC 5, O 6).
_NER = {
    "IOB": [2, 3, 6, 6, 0, 1, 1, 1, 6, 4],
    "IOE": [2, 3, 6, 6, 0, 0, 0, 1, 6, 5],  # I-PER E-PER O O I-ORG I-ORG I-ORG E-ORG O E-LOC
    "plain": [1, 1, 3, 3, 0, 0, 0, 0, 3, 2],  # I-PER I-PER O O I-ORG ... O I-LOC
}


def _chunk_eval(main, inference, label, scheme, excluded=None):
    lod = [[len(label)]]
    out = fluid.layers.chunk_eval(
        _lod_data(f"infer_{scheme}", 1, "int64"), _lod_data(f"label_{scheme}", 1, "int64"), scheme, 3, excluded
    )
    feed = {
        f"infer_{scheme}": create_lod_tensor(np.array(inference).reshape(-1, 1), lod),
        f"label_{scheme}": create_lod_tensor(np.array(label).reshape(-1, 1), lod),
    }
    return [float(np.ravel(v)[0]) for v in _run(main, feed, list(out))]


@pytest.mark.parametrize("scheme", sorted(_NER))
def test_chunk_eval_finds_the_three_named_entities_of_paddles_example_in_each_scheme(programs, scheme):
    assert _chunk_eval(programs[0], _NER[scheme], _NER[scheme], scheme) == [1.0, 1.0, 1.0, 3, 3, 3]


def test_chunk_eval_counts_a_split_entity_as_wrong_and_leaves_excluded_types_out(programs):
    # the tagger misses "Agricultural" (O) and begins ORG at "Bank": its ORG chunk is not the label's
    wrong = [2, 3, 6, 6, 6, 0, 1, 1, 6, 4]
    assert _chunk_eval(programs[0], wrong, _NER["IOB"], "IOB") == pytest.approx([2 / 3, 2 / 3, 2 / 3, 3, 3, 2])
    assert _chunk_eval(programs[0], wrong, _NER["IOB"], "IOB", excluded=[1]) == [0.5, 0.5, 0.5, 2, 2, 1]  # no PER


def test_chunk_eval_of_a_padded_batch_reads_only_each_sequences_steps():
    label = np.array([_NER["IOB"], _NER["IOB"][:4] + [-1] * 6])  # the second sequence is 4 steps long
    out = fluid.layers.chunk_eval(
        paddle.to_tensor(label), paddle.to_tensor(label), "IOB", 3, seq_length=paddle.to_tensor([10, 4])
    )
    assert [float(v.numpy()[0]) for v in out] == [1.0, 1.0, 1.0, 4, 4, 4]


# -- a padded batch with Length is the LoD batch -------------------------------------------------------------


def test_a_padded_batch_with_length_gives_the_lod_batchs_costs_and_gradients(programs):
    main, startup = programs
    lengths, tags = [3, 1, 4], 4
    rng = np.random.default_rng(5)
    rows, labels = rng.normal(size=(8, tags)), rng.integers(0, tags, size=(8, 1))
    padded, padded_labels = np.zeros((3, 4, tags)), np.zeros((3, 4, 1), np.int64)
    for i, (a, n) in enumerate(zip(np.cumsum([0, *lengths]), lengths)):
        padded[i, :n], padded_labels[i, :n] = rows[a : a + n], labels[a : a + n]
    x, label = _lod_data("x", tags, "float64"), _lod_data("label", 1, "int64")
    x.stop_gradient = False
    xp = fluid.data("xp", [None, 4, tags], "float64")
    xp.stop_gradient = False
    length = fluid.data("length", [None], "int64")
    attr = fluid.ParamAttr(name="crfw", initializer=fluid.initializer.Normal(seed=1))
    costs = [
        fluid.layers.linear_chain_crf(x, label, attr),
        fluid.layers.linear_chain_crf(xp, fluid.data("lp", [None, 4, 1], "int64"), attr, length),
    ]
    grads = [
        fluid.gradients([fluid.layers.mean(c)], [v, main.global_block().var("crfw")]) for c, v in zip(costs, [x, xp])
    ]
    scope = paddle.static.Scope()
    fluid.Executor().run(startup, scope=scope)
    lod = [lengths]
    feed = {"x": create_lod_tensor(rows, lod), "label": create_lod_tensor(labels, lod)}
    feed.update(xp=padded, lp=padded_labels, length=np.array(lengths))
    lod_cost, pad_cost, dx, dw, dxp, dwp = _run(main, feed, [*costs, *grads[0], *grads[1]], scope)
    np.testing.assert_allclose(pad_cost, lod_cost, rtol=1e-12)
    np.testing.assert_allclose(dwp, dw, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(dxp[np.arange(4) < np.array(lengths)[:, None]], dx, rtol=1e-10, atol=1e-14)
    assert not dxp[np.arange(4) >= np.array(lengths)[:, None]].any()


# -- errors ------------------------------------------------------------------------------------------------


def test_a_transition_that_is_not_d_plus_2_by_d_fails_at_build_time(programs):
    x, label = _lod_data("x", 4), _lod_data("label", 1, "int64")
    wrong = fluid.layers.create_parameter([5, 4], "float32", name="w")
    with pytest.raises(ShapeError, match=r"Transition 'w' \[5, 4\]: expected \[D \+ 2, D\]"):
        fluid.layers.crf_decoding(x, wrong, label=label)


def test_a_label_beyond_the_tags_and_an_unknown_transition_name_are_clear_errors(programs):
    main, _ = programs
    x, label = _lod_data("x", 3), _lod_data("label", 1, "int64")
    cost = fluid.layers.linear_chain_crf(x, label, param_attr="crfw")
    with pytest.raises(FleetgraphError, match="no parameter 'crfv'"):
        fluid.layers.crf_decoding(x, param_attr=fluid.ParamAttr(name="crfv"))
    feed = {
        "x": create_lod_tensor(np.zeros((2, 3), "float32"), [[2]]),
        "label": create_lod_tensor(np.array([[0], [3]]), [[2]]),
        "crfw": np.zeros((5, 3), "float32"),
    }
    with pytest.raises(FleetgraphError, match=r"Label holds 3; expected ids between 0 and 2"):
        _run(main, feed, [cost])


# -- a tiny tagger ------------------------------------------------------------------------------------------

_TYPES, _OUTSIDE = 2, 4  # IOB over two chunk types: B-t = 2t, I-t = 2t + 1, O = 4


def _tagged(rng, sequences: int):
    """Sentences of words 0-3 outside chunks and words 4 + 4t .. 7 + 4t inside a chunk of type t: a
    word tells the type, never whether it begins the chunk; chunks of one type never touch, so a
    tag's predecessor tells (what the CRF's transitions learn)."""
    words, tags, lengths = [], [], []
    for _ in range(sequences):
        n, seq = int(rng.integers(4, 10)), []
        while len(seq) < n:
            prev = seq[-1][1] // 2 if seq and seq[-1][1] != _OUTSIDE else -1
            if rng.random() < 0.4:
                seq.append((int(rng.integers(0, 4)), _OUTSIDE))
                continue
            kind = (prev + 1) % _TYPES if prev >= 0 else int(rng.integers(0, _TYPES))
            seq += [(4 + 4 * kind + int(rng.integers(0, 4)), 2 * kind + (j > 0)) for j in range(rng.integers(1, 4))]
        words += [w for w, _ in seq[:n]]
        tags += [t for _, t in seq[:n]]
        lengths.append(n)
    return [create_lod_tensor(np.array(v).reshape(-1, 1), [lengths]) for v in (words, tags)]


def test_a_tagger_trained_with_the_crf_cost_decodes_every_chunk_of_new_sentences(programs):
    """embedding -> fc -> linear_chain_crf, SGD (0.2): in 40 steps of 32 sentences the cost falls
    below a tenth (12.1 -> 0.89) and crf_decoding finds every chunk of 64 new sentences (F1 1.0), where
    the best tag of each word's emission alone, blind to its neighbour, stays below F1 0.5 (0.28)."""
    main, startup = programs
    word, label = _lod_data("word", 1, "int64"), _lod_data("label", 1, "int64")
    emission = fluid.layers.fc(fluid.layers.embedding(word, size=[12, 8]), size=5)
    loss = fluid.layers.mean(fluid.layers.linear_chain_crf(emission, label, param_attr=fluid.ParamAttr(name="crfw")))
    test = main.clone(for_test=True)
    fluid.optimizer.SGD(learning_rate=0.2).minimize(loss)
    with program_guard(test, Program()):
        path = fluid.layers.crf_decoding(emission, param_attr=fluid.ParamAttr(name="crfw"))
        crf_f1 = fluid.layers.chunk_eval(path, label, "IOB", _TYPES)[2]
        _, best = fluid.layers.topk(emission, 1)
        word_f1 = fluid.layers.chunk_eval(best, label, "IOB", _TYPES)[2]
    scope = paddle.static.Scope()
    fluid.Executor().run(startup, scope=scope)
    rng = np.random.default_rng(0)
    costs = []
    for _ in range(40):
        words, tags = _tagged(rng, 32)
        costs.append(float(_run(main, {"word": words, "label": tags}, [loss], scope)[0][0]))
    words, tags = _tagged(np.random.default_rng(99), 64)
    f1, blind = _run(test, {"word": words, "label": tags}, [crf_f1, word_f1], scope)
    assert costs[-1] < costs[0] / 10
    assert f1[0] == 1.0 and blind[0] < 0.5
