"""paddle.Model in static mode beyond fit/evaluate/predict (test_hapi_model.py): summary from the input
specs (the table dynamic mode prints, LeNet's documented 61,610 parameters), save(training=False) as an
inference model whose predictions are Model.predict's, and training under the launcher, where two
trainers on half a batch each step as one process on the whole batch."""

from __future__ import annotations

import os

import numpy as np
import pytest
from dist_helpers import SCRIPTS, ProcessGroup, assert_all_exit_zero
from test_hapi_model import Pairs, X, Y

import fleetgraph as paddle
from fleetgraph import nn

IMAGE = paddle.static.InputSpec([None, 1, 28, 28], "float32", "image")
LABEL = paddle.static.InputSpec([None, 1], "int64", "label")


def _lenet_summary(capsys, static: bool):
    """Model(LeNet, inputs).summary()'s table and result, the network built in `static` mode."""
    paddle.enable_static() if static else paddle.disable_static()
    main = paddle.static.Program()
    with paddle.static.program_guard(main, paddle.static.Program()):
        model = paddle.Model(paddle.vision.models.LeNet(), IMAGE, LABEL)
        model.prepare(paddle.optimizer.Adam(0.001, parameters=model.parameters()), nn.CrossEntropyLoss())
    ops = len(main.global_block().ops)
    capsys.readouterr()
    info = model.summary()
    assert len(main.global_block().ops) == ops  # built aside: the model's programs are left alone
    table = capsys.readouterr().out
    assert model.summary((1, 1, 28, 28)) == model.summary([IMAGE]) == info  # input_size as Paddle's takes it
    capsys.readouterr()
    return table, info


def test_static_summary_prints_the_table_dynamic_mode_prints(capsys):
    static_table, static_info = _lenet_summary(capsys, static=True)
    dynamic_table, dynamic_info = _lenet_summary(capsys, static=False)
    assert static_table == dynamic_table
    assert static_info == dynamic_info == {"total_params": 61610, "trainable_params": 61610}  # Paddle's doc
    assert "Conv2D-1" in static_table and "[1, 6, 28, 28]" in static_table and "[1, 10]" in static_table


def _static_model():
    paddle.enable_static()
    paddle.seed(1)
    with paddle.static.program_guard(paddle.static.Program(), paddle.static.Program()):
        net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
        model = paddle.Model(net, inputs=[paddle.static.InputSpec([None, 4], "float32", "x")],
                             labels=[paddle.static.InputSpec([None, 1], "int64", "label")])  # fmt: skip
        model.prepare(paddle.optimizer.Adam(0.05, parameters=net.parameters()), nn.CrossEntropyLoss())
    return model


def test_static_save_for_inference_loads_and_predicts_as_model_predict(tmp_path):
    model = _static_model()
    model.fit(Pairs(X, Y), epochs=1, batch_size=64, verbose=0)
    model.save(str(tmp_path / "infer" / "mlp"), training=False)
    (expected,) = model.predict(Pairs(X, Y), batch_size=64, stack_outputs=True, verbose=0)
    exe = paddle.static.Executor(paddle.CPUPlace())
    with paddle.static.scope_guard(paddle.static.Scope()):
        program, feeds, fetches = paddle.static.load_inference_model(str(tmp_path / "infer" / "mlp"), exe)
        (got,) = exe.run(program, feed={feeds[0]: X}, fetch_list=fetches)
    assert feeds == ["x"] and got.shape == (256, 2)
    np.testing.assert_allclose(got, expected, rtol=1e-6)
    with pytest.raises(ValueError, match="file_prefix"):
        model.save(str(tmp_path) + os.sep, training=False)


@pytest.fixture(scope="module")
def launched(tmp_path_factory):
    """hapi_model_static.py under the launcher (2 trainers, 32 rows each) and alone (64 rows), at once."""
    out = tmp_path_factory.mktemp("hapi_static")
    script = os.path.join(SCRIPTS, "hapi_model_static.py")
    env = {"FLEETGRAPH_RPC_TIMEOUT": "30"}
    for where in ("single", "dist"):
        (out / where).mkdir()
    launch = ["-m", "fleetgraph.distributed.launch", "--nproc_per_node", "2", "--log_dir", str(out / "log")]
    with ProcessGroup(timeout=120) as group:
        group.start("single", [script, str(out / "single"), "--batch", "64"], env=env)
        group.start("launch", [*launch, script, str(out / "dist"), "--batch", "32"], env=env)
        assert_all_exit_zero(group.wait())
    return out


def test_two_launched_static_trainers_step_as_one_process_on_the_whole_batch(launched):
    single = np.load(launched / "single" / "rank0.npz")
    ranks = [np.load(launched / "dist" / f"rank{r}.npz") for r in (0, 1)]
    assert len(single["losses"]) == 8  # 2 epochs of 256 rows, 64 at a time
    # each trainer's loss is the mean over its half: the whole batch's is their mean
    np.testing.assert_allclose((ranks[0]["losses"] + ranks[1]["losses"]) / 2, single["losses"], rtol=1e-5)
    params = [k for k in single.files if k not in ("losses", "acc")]
    assert len(params) == 4
    for name in params:
        np.testing.assert_array_equal(ranks[0][name], ranks[1][name])
        np.testing.assert_allclose(ranks[0][name], single[name], rtol=1e-5, atol=1e-7)
    # evaluation's metric covers both trainers' shares (gathered): the single process's accuracy
    assert float(ranks[0]["acc"]) == float(ranks[1]["acc"]) == float(single["acc"]) > 0.85


def test_the_launched_jobs_inference_model_predicts_what_it_evaluated(launched):
    """Trainer 0 saved it after training: its accuracy over the data is the evaluated one."""
    exe = paddle.static.Executor(paddle.CPUPlace())
    paddle.enable_static()
    with paddle.static.scope_guard(paddle.static.Scope()):
        program, feeds, fetches = paddle.static.load_inference_model(str(launched / "dist" / "infer"), exe)
        (logits,) = exe.run(program, feed={feeds[0]: X}, fetch_list=fetches)
    assert np.mean(logits.argmax(1) == Y[:, 0]) == pytest.approx(float(np.load(launched / "dist" / "rank0.npz")["acc"]))
