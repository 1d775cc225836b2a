"""Programs round-trip through JSON exactly; values through .npz; inference models are pruned."""

from __future__ import annotations

import json

import numpy as np
import pytest
from models import fit_a_line_2x, housing_batches, mlp, train

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import FleetgraphError, load_program, op_summary, program_from_json, program_to_json, save_program


def test_json_round_trip_is_exact():
    main, startup, *_ = fit_a_line_2x(optimizer=paddle.optimizer.Adam(0.01))
    for prog in (main, startup):
        text = program_to_json(prog)
        again = program_from_json(text)
        assert program_to_json(again) == text
        assert again.to_string() == prog.to_string()
        json.loads(text)  # plain JSON


def test_saved_program_runs_bit_identically(tmp_path):
    main, startup, x, y, loss = fit_a_line_2x()
    save_program(main, tmp_path / "main.json")
    save_program(startup, tmp_path / "startup.json")
    loaded_main, loaded_startup = load_program(tmp_path / "main.json"), load_program(tmp_path / "startup.json")
    feeds = [{"x": xb, "y": yb} for xb, yb in housing_batches(20, 1)]
    ours, _ = train(main, startup, feeds, [loss])
    theirs, _ = train(loaded_main, loaded_startup, feeds, [loss.name])
    for a, b in zip(ours, theirs):
        assert a[0].tobytes() == b[0].tobytes()


def test_load_rejects_files_that_are_not_programs(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"format": "something else"}')
    with pytest.raises(FleetgraphError, match="expected format 'fleetgraph.program'"):
        load_program(path)
    path.write_text("not json")
    with pytest.raises(FleetgraphError, match="not a program JSON file"):
        load_program(path)


def test_persistables_round_trip_through_npz(tmp_path):
    main, startup, x, y, loss = fit_a_line_2x(optimizer=paddle.optimizer.Adam(0.01))
    exe = paddle.static.Executor()
    scope = paddle.static.Scope()
    with paddle.static.scope_guard(scope):
        exe.run(startup)
        exe.run(main, feed=next({"x": a, "y": b} for a, b in housing_batches(8)))
        fluid.io.save_persistables(exe, str(tmp_path), main)
        saved = {k: np.array(v) for k, v in scope.vars.items() if main.global_block().var(k).persistable}
    other = paddle.static.Scope()
    with paddle.static.scope_guard(other):
        fluid.io.load_persistables(exe, str(tmp_path), main)
    assert set(saved) == {v.name for v in main.list_vars() if v.persistable}
    for k, v in saved.items():
        np.testing.assert_array_equal(other.vars[k], v)


def test_inference_model_is_pruned_to_feeds_and_fetches_and_predicts_the_same(tmp_path):
    main, startup, image, label, loss, acc = mlp(lambda: paddle.optimizer.SGD(0.1), hidden=(16,))
    swce = next(op for op in main.global_block().ops if op.type == "softmax_with_cross_entropy")
    logits = main.global_block().var(swce.input("Logits")[0])
    exe = paddle.static.Executor()
    scope = paddle.static.Scope()
    data = np.random.default_rng(0).normal(size=(4, 784)).astype("float32")
    with paddle.static.scope_guard(scope):
        exe.run(startup)
        (want,) = exe.run(
            main.clone(for_test=True), feed={"image": data, "label": np.zeros((4, 1), "int64")}, fetch_list=[logits]
        )
        paddle.static.save_inference_model(str(tmp_path / "mlp"), [image], [logits], exe, program=main)
    with paddle.static.scope_guard(paddle.static.Scope()):
        program, feed_names, fetch_targets = paddle.static.load_inference_model(str(tmp_path / "mlp"), exe)
        (got,) = exe.run(program, feed={feed_names[0]: data}, fetch_list=fetch_targets)
    assert feed_names == ["image"]
    assert op_summary(program) == "block0: mul elementwise_add relu mul elementwise_add"
    np.testing.assert_array_equal(got, want)


def test_load_persistables_checks_shapes(tmp_path):
    main, startup, *_ = fit_a_line_2x()
    exe = paddle.static.Executor()
    with paddle.static.scope_guard(paddle.static.Scope()):
        exe.run(startup)
        fluid.io.save_persistables(exe, str(tmp_path), main)
    main.global_block().var("fc_0.w_0").shape = (12, 1)
    with pytest.raises(FleetgraphError, match=r"'fc_0.w_0' expected shape \[12, 1\], got \[13, 1\]"):
        fluid.io.load_persistables(exe, str(tmp_path), main)


def test_no_pickle_in_saved_files(tmp_path):
    main, startup, *_ = fit_a_line_2x()
    exe = paddle.static.Executor()
    with paddle.static.scope_guard(paddle.static.Scope()):
        exe.run(startup)
        path = fluid.io.save_persistables(exe, str(tmp_path), main)
    with np.load(path, allow_pickle=False) as data:
        assert sorted(data.files) == ["fc_0.b_0", "fc_0.w_0", "learning_rate_0"]
