"""The examples run as the README says."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
from dist_helpers import REPO


def _run(*args, timeout=180):
    return subprocess.run([sys.executable, *args], cwd=REPO, capture_output=True, text=True, timeout=timeout)


def test_fit_a_line_example_trains():
    out = _run("examples/fit_a_line/train.py")
    assert out.returncode == 0, out.stderr
    first, last = (float(v) for v in out.stdout.split("of the first epoch ")[1].split(", of the last "))
    assert last < first / 10


def test_distributed_demo_shows_programs_and_a_falling_loss(tmp_path):
    out = _run("examples/dist_fit_a_line/demo.py")
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert "block0: listen_and_serv" in out.stdout and "send_barrier recv recv fetch_barrier" in out.stdout
    losses = [float(ln.rsplit(" ", 1)[1]) for ln in out.stdout.splitlines() if ln.startswith("worker 0 epoch")]
    assert len(losses) >= 5 and losses[-1] < losses[0] / 10
    assert "the job succeeded" in out.stdout + out.stderr


# -- the CTR examples: seed 000's CTR-DNN and seed 002's wide & deep on generated Criteo data --------

JOB_TIMEOUT_S = 300


def _job(cwd, *args):
    """A command of an example's README, run in its directory; fails with the end of its output."""
    env = dict(os.environ, PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run(
        [sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=JOB_TIMEOUT_S, env=env
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    return out.stdout + out.stderr


def _example(tmp_path, name, lines, data_args=()):
    """A copy of examples/NAME with 2 files of LINES generated click logs whose counts are 3 times
    their usual size (generate_data.py --count_scale): the signal the network learns first, so that
    a few thousand samples reach the AUC 10,000 of the default data do. Two files: one per trainer,
    and seed 000 starts a reader process per file and pass (40 in its 20 passes, not 80)."""
    where = tmp_path / name
    shutil.copytree(os.path.join(REPO, "examples", name), where, ignore=shutil.ignore_patterns("__pycache__"))
    generate = os.path.join(REPO, "examples", "ctr_dnn", "generate_data.py")
    _job(where, generate, "--files", "2", "--lines", str(lines), "--count_scale", "3", *data_args)
    return where


def _worker_logs(log_dir):
    return [(log_dir / f).read_text() for f in sorted(os.listdir(log_dir)) if f.startswith("workerlog")]


def test_count_scale_draws_the_counts_that_many_times_larger():
    """generate_data.py's knob for the tests below: K times each column's mean count; K > 0."""
    import importlib.util

    import numpy as np

    spec = importlib.util.spec_from_file_location("gen", os.path.join(REPO, "examples", "ctr_dnn", "generate_data.py"))
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)

    def counts(lines):
        rows = [line.split("\t")[1:14] for line in lines]
        return np.array([[float(v) if v else np.nan for v in row] for row in rows])

    plain = list(gen.ClickModel(0).lines(np.random.default_rng(1), 2000))
    scaled = list(gen.ClickModel(0, 3.0).lines(np.random.default_rng(1), 2000))
    ratio = np.nanmean(counts(scaled), axis=0) / np.nanmean(counts(plain), axis=0)
    np.testing.assert_allclose(ratio, 3.0, rtol=0.1)
    with pytest.raises(ValueError, match="count_scale must be positive; expected > 0, got 0"):
        gen.ClickModel(0, 0)


# seed 000 states its strategy as `strategy.a_sync = True`; its other modes are that line rewritten
STRATEGY_LINES = {
    "sync": "strategy.a_sync = False\n",
    "async": "strategy.a_sync = True\n",
    "geo": "strategy.a_sync = True\n        strategy.a_sync_configs = {'k_steps': 100}\n",
}


@pytest.mark.parametrize("how", ["local", "launch_ps async", "launch sync", "launch geo"])
def test_seed_000_ctr_dnn_reaches_an_auc_over_0_7(tmp_path, how):
    """Seed 000's train.py, imports changed only: 20 passes over the data, 10 dataset threads; AUC
    as its fetch_info prints it last (over every batch of the run, the early ones included)."""
    where = _example(tmp_path, "ctr_dnn", 2000)
    if how == "local":
        output = _job(where, "train.py", "--is_local", "1")
        aucs = [float(re.findall(r"auc: ([0-9.]+)", output)[-1])]
    else:
        launcher, mode = how.split()
        script = where / "train.py"
        text = script.read_text()
        assert text.count(STRATEGY_LINES["async"]) == 1
        script.write_text(text.replace(STRATEGY_LINES["async"], STRATEGY_LINES[mode]))
        _job(where, "-m", f"fleetgraph.distributed.{launcher}", "--server_num", "2", "--worker_num", "2", "train.py")
        logs = _worker_logs(where / ("logs" if launcher == "launch_ps" else "log"))
        assert len(logs) == 2
        aucs = [float(re.findall(r"auc: ([0-9.]+)", log)[-1]) for log in logs]
    assert min(aucs) > 0.70, (how, aucs)


@pytest.mark.parametrize("mode", ["sync", "async", "geo"])
def test_seed_002_wide_and_deep_reaches_an_auc_over_0_7(tmp_path, mode):
    """Seed 002's parameter-server quick start on one pserver and two workers, each reading every
    file through its non-iterable DataLoader; learning rate 0.1 (the seed's 0.0001 needs far more
    data than a test can read: see the example's README)."""
    where = _example(tmp_path, "wide_deep", 2500, ["--out", "data"])
    cmd = ["-m", "fleetgraph.distributed.launch", "--server_num", "1", "--worker_num", "2", "train.py"]
    _job(where, *cmd, "--mode", mode, "--lr", "0.1")
    logs = _worker_logs(where / "log")
    assert len(logs) == 2 and all(log.count("TRAIN ---> pass: 0") == 500 for log in logs)  # 5,000 samples each
    aucs = {float(re.search(r"AUC of the job: ([0-9.]+)", log).group(1)) for log in logs}
    assert len(aucs) == 1 and aucs.pop() > 0.70  # both workers print the job's AUC over both


@pytest.mark.parametrize("layers, params", [(18, 11_689_512), (50, 25_557_032)])
def test_the_resnet_example_builds_resnets_of_the_published_size(layers, params):
    """examples/resnet/resnet_static.py: the trainable parameters of ResNet-18 and -50 for 1000
    classes, as the published architectures count them; seed 002's script runs it with two ranks."""
    import importlib.util

    import numpy as np

    import fleetgraph as paddle

    spec = importlib.util.spec_from_file_location(
        "resnet_static", os.path.join(REPO, "examples", "resnet", "resnet_static.py")
    )
    resnet = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(resnet)
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        image = paddle.static.data(name="x", shape=[None, 3, 224, 224], dtype="float32")
        out = resnet.ResNet(layers=layers).net(input=image, class_dim=1000)
    assert out.shape == (-1, 1000)
    assert sum(int(np.prod(p.shape)) for p in main.all_parameters() if p.trainable) == params


# -- the book's word2vec and understand_sentiment, on small generated data ---------------------------


def _book_example(tmp_path_factory, name, *sets):
    """A copy of examples/NAME with each (folder, generate_data.py arguments) of SETS generated."""
    where = tmp_path_factory.mktemp(name)
    for script in ("generate_data.py", "train.py"):
        shutil.copy(os.path.join(REPO, "examples", name, script), where)
    for out, *data_args in sets:
        _job(where, "generate_data.py", "--out", out, *data_args)
    return where


def _launch_2x2(where, *args):
    """train.py under launch with 2 pservers and 2 workers; the two workers' logs."""
    shutil.rmtree(where / "log", ignore_errors=True)
    _job(where, "-m", "fleetgraph.distributed.launch", "--server_num", "2", "--worker_num", "2", "train.py", *args)
    return _worker_logs(where / "log")


def _assert_sync_equals_one_process(where, *args):
    """The parameters after training synchronously on 2 workers' halves of each batch equal one
    process's on the whole batches (1e-5), the embedding table's rows included; the table's rows
    no id touched (the pservers create a row when an id first arrives) come back as zeros."""
    _job(where, "train.py", *args, "--save", "local.npz")
    _launch_2x2(where, *args, "--save", "dist.npz")
    local, dist = np.load(where / "local.npz"), np.load(where / "dist.npz")
    assert sorted(local.files) == sorted(dist.files)
    for name in local.files:
        want, got = local[name], dist[name]
        if name in ("shared_w", "embedding_0.w_0"):  # the tables
            touched = np.any(got != 0, axis=1)
            assert np.mean(touched) > 0.9, name
            want, got = want[touched], got[touched]
        np.testing.assert_allclose(got, want, atol=1e-5, err_msg=name)


def _figures(pattern, text):
    return [float(v) for v in re.findall(pattern, text)]


@pytest.fixture(scope="module")
def word2vec(tmp_path_factory):
    return _book_example(
        tmp_path_factory,
        "word2vec",
        ("small", "--train", "800", "--test", "100"),
        ("tiny", "--train", "200", "--test", "20"),
    )


def test_word2vec_learns_the_next_word_in_one_process(word2vec):
    out = _job(word2vec, "train.py", "--data", "small", "--epochs", "6")
    losses = _figures(r"mean loss ([0-9.]+)", out)
    assert losses[-1] < losses[0] / 1.8 and _figures(r"accuracy on the test set: ([0-9.]+)", out)[0] > 0.35, out


def test_word2vec_with_sync_parameter_servers_equals_one_process(word2vec):
    """With the hierarchical sigmoid: nce draws its negatives afresh each run, so two workers draw
    other negatives for their halves than one process for the whole batch."""
    _assert_sync_equals_one_process(word2vec, "--data", "tiny", "--epochs", "2", "--loss", "hsigmoid", "--lr", "0.1")


def test_word2vec_with_async_parameter_servers_lowers_the_loss(word2vec):
    """The loss only: on this little data the test accuracy of asynchronous runs ranges from 0.03
    to 0.56 (see the README)."""
    for log in _launch_2x2(word2vec, "--data", "small", "--epochs", "6", "--mode", "async"):
        losses = _figures(r"mean loss ([0-9.]+)", log)
        assert len(losses) == 6 and losses[-1] < losses[0] / 1.8, log


@pytest.fixture(scope="module")
def sentiment(tmp_path_factory):
    return _book_example(
        tmp_path_factory,
        "sentiment",
        ("small", "--train", "800", "--test", "200"),
        ("tiny", "--train", "256", "--test", "40"),
    )


@pytest.mark.parametrize("net, accuracy", [("lstm", 0.85), ("conv", 0.8)])
def test_sentiment_learns_and_its_inference_model_predicts_after_loading(sentiment, net, accuracy):
    out = _job(sentiment, "train.py", "--net", net, "--data", "small", "--epochs", "4")
    assert _figures(r"loaded inference model: test accuracy ([0-9.]+)", out)[0] > accuracy, out
    assert 0 <= _figures(r"positive with probability ([0-9.]+)", out)[0] <= 1


# Adagrad's first step is about lr * g / (|g| + epsilon): where a gradient is near zero, the float32
# rounding of summing two halves instead of one batch moves the convolutions' weights by 1.1e-5 at
# Paddle's epsilon 1e-6, by 1e-6 at 1e-4
@pytest.mark.parametrize("net, epsilon", [("lstm", "1e-6"), ("conv", "1e-4")])
def test_sentiment_with_sync_parameter_servers_equals_one_process(sentiment, net, epsilon):
    _assert_sync_equals_one_process(sentiment, "--net", net, "--epsilon", epsilon, "--data", "tiny", "--epochs", "2")


def test_sentiment_with_async_parameter_servers_learns(sentiment):
    logs = _launch_2x2(sentiment, "--data", "small", "--epochs", "4", "--mode", "async")
    for log in logs:
        losses = _figures(r"mean loss ([0-9.]+)", log)
        assert len(losses) == 4 and losses[-1] < losses[0] / 2, log
    assert _figures(r"loaded inference model: test accuracy ([0-9.]+)", logs[0])[0] > 0.85, logs[0]
