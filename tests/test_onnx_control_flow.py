"""ONNX export of branches and loops: cond as If, while_loop as Loop; onnxruntime runs each
exported model to the executor's outputs."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

import fleetgraph as paddle  # noqa: E402
from fleetgraph.ir import FleetgraphError, Program, program_guard  # noqa: E402
from fleetgraph.ir.prune import prune_for_inference  # noqa: E402
from fleetgraph.onnx import export  # noqa: E402

TOL = 1e-5


@pytest.fixture(autouse=True)
def _static():
    paddle.enable_static()


def _assert_exports(main, startup, feeds, fetches, feed_values):
    """export -> check_model(full) -> onnxruntime equals the executor, running the inference program
    export prunes to (dropout off), for each feed dict."""
    exe, scope = paddle.static.Executor(paddle.CPUPlace()), paddle.static.Scope()
    exe.run(startup, scope=scope)
    model = export(main, feeds, fetches, scope.vars)
    onnx.checker.check_model(model, full_check=True)
    inference = prune_for_inference(main, feeds, [getattr(f, "name", f) for f in fetches])
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for feed in feed_values:
        want = exe.run(inference, feed=feed, fetch_list=fetches, scope=scope)
        got = session.run(None, feed)
        for g, w, f in zip(got, want, fetches, strict=True):
            np.testing.assert_allclose(g, np.asarray(w), rtol=TOL, atol=TOL, err_msg=getattr(f, "name", f))
    return model


def _x(seed=0):
    return np.random.default_rng(seed).normal(size=(2, 3)).astype("float32")


def test_cond_exports_both_branches_with_nested_outputs():
    main, startup = Program(), Program()
    with program_guard(main, startup):
        x = paddle.static.data("x", [-1, 3], "float32")
        p = paddle.static.data("p", [1], "bool")
        a, (b, c) = paddle.static.nn.cond(
            p,
            lambda: (x * 2.0, (x + 1.0, paddle.static.nn.fc(x, 4))),
            lambda: (x - 1.0, (x * x, paddle.static.nn.fc(x, 4, activation="relu"))),
        )
    model = _assert_exports(
        main, startup, ["x", "p"], [a, b, c], [{"x": _x(), "p": np.array([v])} for v in (True, False)]
    )
    assert [n.op_type for n in model.graph.node].count("If") >= 2


def test_while_loop_exports_a_counter_and_a_float_recurrence():
    main, startup = Program(), Program()
    with program_guard(main, startup):
        x = paddle.static.data("x", [-1, 3], "float32")
        n = paddle.static.data("n", [1], "int64")
        i = paddle.full([1], 0, "int64")
        i, y = paddle.static.nn.while_loop(lambda i, y: i < n, lambda i, y: [i + 1, paddle.tanh(y) * 1.5 + 0.1], [i, x])
    feeds = [{"x": _x(1), "n": np.array([k], dtype="int64")} for k in (0, 1, 4)]
    model = _assert_exports(main, startup, ["x", "n"], [i, y], feeds)
    assert "Loop" in [node.op_type for node in model.graph.node]


def test_a_cond_inside_a_loop_exports():
    main, startup = Program(), Program()
    with program_guard(main, startup):
        x = paddle.static.data("x", [-1, 3], "float32")
        i = paddle.full([1], 0, "int64")
        ten = paddle.full([1], 5, "int64")
        two = paddle.full([1], 2, "int64")

        def body(i, y):
            y = paddle.static.nn.cond(i < two, lambda: y * 2.0, lambda: paddle.tanh(y) - 1.0)
            return [i + 1, y]

        i, y = paddle.static.nn.while_loop(lambda i, y: i < ten, body, [i, x * 1.0])
    _assert_exports(main, startup, ["x"], [i, y], [{"x": _x(2)}])


def test_a_loop_variable_written_only_inside_the_loop_is_refused_by_name():
    main, startup = Program(), Program()
    with program_guard(main, startup):
        x = paddle.static.data("x", [-1, 3], "float32")
        cond = paddle.full([1], True, "bool")
        out = main.global_block().create_var("late", (-1, 3), "float32")
        loop = paddle.fluid.layers.While(cond)
        with loop.block():
            paddle.fluid.layers.assign(x * 2.0, out)
            paddle.fluid.layers.assign(paddle.full([1], False, "bool"), cond)
    with pytest.raises(
        FleetgraphError, match=r"op while \(index \d+ of block 0\).*'late' has no value before the loop"
    ):
        export(main, ["x"], [out], {})


def test_select_input_and_select_output_export_as_ifs_on_the_mask():
    """select_output writes the picked output and leaves the others as they were (zeros where they
    held nothing); select_input reads the one the mask picks, of three."""
    main, startup = Program(), Program()
    with program_guard(main, startup):
        x = paddle.static.data("x", [-1, 3], "float32")
        mask = paddle.static.data("mask", [1], "int32")
        layers = paddle.fluid.layers
        outs = [x + 5.0, main.global_block().create_var("fresh", (-1, 3), "float32")]
        pick = layers.cast(layers.less_than(mask, paddle.full([1], 1, "int32")), "int32")
        layers.select_output(x * 2.0, outs, pick)
        picked = layers.select_input([outs[0], outs[1], x - 3.0], mask)
    feeds = [{"x": _x(3), "mask": np.array([k], dtype="int32")} for k in (0, 1, 2)]
    _assert_exports(main, startup, ["x", "mask"], [picked, outs[0], outs[1]], feeds)


@pytest.mark.parametrize(
    "make",
    [
        lambda: paddle.nn.LSTM(3, 4),
        lambda: paddle.nn.GRU(3, 4, num_layers=2, direction="bidirect"),
        lambda: paddle.nn.LSTM(3, 4, num_layers=2, direction="bidirectional", dropout=0.5),
        lambda: paddle.nn.SimpleRNN(3, 4, activation="relu"),
    ],
    ids=["lstm", "gru-2-layers-bidirectional", "lstm-2-layers-bidirectional", "simple-relu"],
)
@pytest.mark.parametrize("lengths", [False, True], ids=["full", "sequence_length"])
def test_recurrent_layers_export_as_onnx_lstm_gru_and_rnn(make, lengths):
    """Batch-major [B, T, I] through paddle.nn's layer; with sequence_length, the shorter sequences
    keep their last state and give zeros past their end, in both directions."""
    main, startup = Program(), Program()
    with program_guard(main, startup):
        x = paddle.static.data("x", [-1, 5, 3], "float32")
        seq = paddle.static.data("seq", [-1], "int64") if lengths else None
        out, state = make()(x, sequence_length=seq)
    states = list(state) if isinstance(state, tuple) else [state]
    feed = {"x": np.random.default_rng(4).normal(size=(3, 5, 3)).astype("float32")}
    if lengths:
        feed["seq"] = np.array([5, 2, 4], dtype="int64")
    feeds = ["x", "seq"] if lengths else ["x"]
    model = _assert_exports(main, startup, feeds, [out, *states], [feed])
    assert {n.op_type for n in model.graph.node} & {"LSTM", "GRU", "RNN"}
