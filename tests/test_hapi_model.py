"""paddle.Model (Paddle 2.0's hapi) in dynamic mode: prepare, fit with its progress lines, evaluate,
predict, save and load (training state and an inference model), summary, and the callbacks
(ModelCheckpoint, EarlyStopping, LRScheduler); paddle.summary's parameter counts (LeNet's 61,610)."""

from __future__ import annotations

import numpy as np
import pytest

import fleetgraph as paddle
from fleetgraph import nn

RNG = np.random.default_rng(0)
X = RNG.normal(size=(256, 4)).astype(np.float32)
Y = (X @ np.array([1.0, -2.0, 0.5, 1.5]) > 0).astype(np.int64)[:, None]


class Pairs(paddle.io.Dataset):
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __getitem__(self, i):
        return self.x[i], self.y[i]

    def __len__(self):
        return len(self.x)


def _model(lr=0.1, scheduler=None):
    paddle.disable_static()
    paddle.seed(1)
    net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
    model = paddle.Model(net, inputs=[paddle.jit.InputSpec([None, 4], "float32", "x")],
                         labels=[paddle.jit.InputSpec([None, 1], "int64", "label")])  # fmt: skip
    optimizer = paddle.optimizer.Adam(scheduler or lr, parameters=model.parameters())
    model.prepare(optimizer, nn.CrossEntropyLoss(), paddle.metric.Accuracy())
    return model


def test_fit_prints_its_progress_and_learns_then_evaluate_and_predict(capsys):
    model = _model()
    model.fit(Pairs(X[:192], Y[:192]), epochs=3, batch_size=32, log_freq=2, verbose=2)
    out = capsys.readouterr().out
    assert "Epoch 1/3" in out and "Epoch 3/3" in out and "step 6/6 - loss:" in out and "acc:" in out
    result = model.evaluate(Pairs(X[192:], Y[192:]), batch_size=32, verbose=0)
    assert set(result) == {"loss", "acc"} and result["acc"] > 0.85
    (logits,) = model.predict(Pairs(X[192:], Y[192:]), batch_size=32, stack_outputs=True, verbose=0)
    assert logits.shape == (64, 2)
    assert np.mean(logits.argmax(1) == Y[192:, 0]) == pytest.approx(result["acc"])


def test_save_and_load_restore_the_network_and_the_optimizer(tmp_path):
    model = _model()
    model.fit(Pairs(X, Y), epochs=1, batch_size=64, verbose=0)
    model.save(str(tmp_path / "ckpt"))
    assert (tmp_path / "ckpt.pdparams").exists() and (tmp_path / "ckpt.pdopt").exists()
    other = _model()
    other.load(str(tmp_path / "ckpt"))
    x = paddle.to_tensor(X[:8])
    np.testing.assert_allclose(other.network(x).numpy(), model.network(x).numpy())
    model.save(str(tmp_path / "infer"), training=False)
    loaded = paddle.jit.load(str(tmp_path / "infer"))
    np.testing.assert_allclose(np.asarray(loaded(x)[0] if isinstance(loaded(x), list) else loaded(x).numpy()),
                               model.network(x).numpy(), rtol=1e-5)  # fmt: skip


def test_checkpoint_early_stopping_and_lr_scheduler_callbacks(tmp_path):
    scheduler = paddle.optimizer.lr.StepDecay(0.1, step_size=1, gamma=0.5)
    model = _model(scheduler=scheduler)
    stop = paddle.callbacks.EarlyStopping(monitor="acc", mode="max", patience=0, save_best_model=False)
    model.fit(Pairs(X, Y), eval_data=Pairs(X, Y), epochs=5, batch_size=256, verbose=0, save_dir=str(tmp_path),
              callbacks=[stop, paddle.callbacks.LRScheduler(by_step=True)])  # fmt: skip
    assert (tmp_path / "0.pdparams").exists() and (tmp_path / "final.pdparams").exists()
    assert scheduler.last_epoch >= 1 and scheduler() < 0.1
    with pytest.raises(NotImplementedError, match="VisualDL"):
        paddle.callbacks.VisualDL(str(tmp_path))


def test_summary_and_flops_count_lenets_parameters_and_multiply_adds(capsys):
    paddle.disable_static()
    lenet = nn.Sequential(
        nn.Conv2D(1, 6, 3, stride=1, padding=1), nn.ReLU(), nn.MaxPool2D(2, 2),
        nn.Conv2D(6, 16, 5, stride=1, padding=0), nn.ReLU(), nn.MaxPool2D(2, 2),
        nn.Flatten(), nn.Linear(400, 120), nn.Linear(120, 84), nn.Linear(84, 10),
    )  # fmt: skip
    assert paddle.flops(lenet, [1, 1, 28, 28]) == 347560  # Paddle 2.0's documented LeNet figure
    info = paddle.summary(lenet, (1, 1, 28, 28))
    assert info == {"total_params": 61610, "trainable_params": 61610}  # Paddle 2.0's documented LeNet figure
    out = capsys.readouterr().out
    assert "Conv2D-1" in out and "[1, 6, 28, 28]" in out and "Total params: 61,610" in out


def test_in_static_mode_the_model_trains_evaluates_predicts_saves_and_loads_its_programs(tmp_path):
    paddle.enable_static()
    paddle.seed(1)
    net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
    model = paddle.Model(net, inputs=[paddle.jit.InputSpec([None, 4], "float32", "x")],
                         labels=[paddle.jit.InputSpec([None, 1], "int64", "label")])  # fmt: skip
    model.prepare(
        paddle.optimizer.Adam(0.1, parameters=net.parameters()), nn.CrossEntropyLoss(), paddle.metric.Accuracy()
    )
    model.fit(Pairs(X[:192], Y[:192]), epochs=3, batch_size=32, verbose=0)
    result = model.evaluate(Pairs(X[192:], Y[192:]), batch_size=32, verbose=0)
    assert set(result) == {"loss", "acc"} and result["acc"] > 0.85
    (logits,) = model.predict(Pairs(X[192:], Y[192:]), batch_size=32, stack_outputs=True, verbose=0)
    assert logits.shape == (64, 2) and np.mean(logits.argmax(1) == Y[192:, 0]) == pytest.approx(result["acc"])
    model.save(str(tmp_path / "static"))
    saved = model._adapter.state_dict()
    model.fit(Pairs(X, Y), epochs=1, batch_size=64, verbose=0)
    assert any(not np.allclose(saved[k], v) for k, v in model._adapter.state_dict().items())
    model.load(str(tmp_path / "static"))
    assert all(np.allclose(saved[k], v) for k, v in model._adapter.state_dict().items())


def test_a_fit_before_prepare_is_refused():
    paddle.disable_static()
    with pytest.raises(Exception, match="prepare"):
        paddle.Model(nn.Linear(4, 2)).fit(Pairs(X, Y))


def test_under_the_launcher_two_trainers_fit_one_model_through_data_parallel(tmp_path):
    """Each trainer reads half the batches; the gradients are averaged, so both end with the same
    parameters, and evaluation's accuracy covers both halves (all_gather), the same on both."""
    import os
    import subprocess
    import sys

    from dist_helpers import REPO, SCRIPTS

    env = dict(os.environ, PYTHONPATH=REPO, FLEETGRAPH_RPC_TIMEOUT="30")
    cmd = [sys.executable, "-m", "fleetgraph.distributed.launch", "--nproc_per_node", "2",
           "--log_dir", str(tmp_path / "log"), os.path.join(SCRIPTS, "hapi_model_dp.py")]  # fmt: skip
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    lines = [
        (tmp_path / "log" / f"workerlog.{r}").read_text().splitlines()[-1].split() for r in (0, 1)
    ]  # ['rank', r, 'acc', a, 'checksum', c]
    assert lines[0][3] == lines[1][3] and lines[0][5] == lines[1][5], lines
    assert float(lines[0][3]) > 0.85
    assert "Epoch 1/4" in (tmp_path / "log" / "workerlog.0").read_text()
    assert "Epoch 1/4" not in (tmp_path / "log" / "workerlog.1").read_text()  # trainer 0 prints


def test_a_model_without_input_specs_takes_loaders_and_predicts_from_forwards_parameters():
    """Paddle builds the inputs from forward's parameters: predict over (x, label) batches feeds x only;
    a paddle.io.DataLoader over a map dataset is a loader fit and predict take."""
    paddle.disable_static()
    paddle.seed(1)

    class Net(nn.Layer):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            return self.fc(x)

    model = paddle.Model(Net())
    model.prepare(paddle.optimizer.SGD(0.1, parameters=model.parameters()), nn.CrossEntropyLoss())
    loader = paddle.io.DataLoader(Pairs(X, Y), batch_size=64)
    model.fit(loader, epochs=1, verbose=0)
    (logits,) = model.predict(loader, stack_outputs=True, verbose=0)
    assert logits.shape == (256, 2)
