"""Dynamic-mode data parallelism on real processes: 2 ranks with fleet.distributed_model (or
paddle.DataParallel) end equal to one process training on the whole batch; seed 002's dygraph
script runs under the launcher."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest
from dist_helpers import SCRIPTS, ProcessGroup, assert_all_exit_zero, endpoints

sys.path.insert(0, SCRIPTS)
import dygraph_data_parallel as job  # noqa: E402

STEPS = 6


def _run_two_ranks(tmp_path, api: str) -> list[dict]:
    eps = endpoints(2)
    with ProcessGroup(timeout=60) as group:
        for rank in range(2):
            env = {
                "PADDLE_TRAINER_ID": str(rank),
                "PADDLE_TRAINERS_NUM": "2",
                "PADDLE_TRAINER_ENDPOINTS": ",".join(eps),
                "PADDLE_CURRENT_ENDPOINT": eps[rank],
                "TRAINING_ROLE": "TRAINER",
            }
            args = [os.path.join(SCRIPTS, "dygraph_data_parallel.py"), str(tmp_path / f"r{rank}.npz"), str(STEPS), api]
            group.start(f"rank{rank}", args, env=env)
        assert_all_exit_zero(group.wait())
    return [dict(np.load(tmp_path / f"r{rank}.npz")) for rank in range(2)]


def _one_process_on_the_whole_batch(bfloat16: bool = False) -> dict:
    from fleetgraph.dygraph import mode
    from fleetgraph.ir import unique_name

    old, mode._mode = mode._mode, None
    try:
        with unique_name.guard():
            model, opt = job.make(seed=1, bfloat16=bfloat16)
            job.train(model, opt, STEPS, bfloat16=bfloat16)
        return {p.name: p.numpy() for p in model.parameters()}
    finally:
        mode._mode = old


@pytest.mark.parametrize("api", ["fleet", "dataparallel"])
def test_two_rank_distributed_model_equals_one_process_on_the_whole_batch(tmp_path, api):
    ranks = _run_two_ranks(tmp_path, api)
    oracle = _one_process_on_the_whole_batch()
    assert sorted(ranks[0]) == sorted(oracle)
    for name, want in oracle.items():
        np.testing.assert_array_equal(ranks[0][name], ranks[1][name], err_msg=name)
        np.testing.assert_allclose(ranks[0][name], want, rtol=1e-5, atol=1e-5, err_msg=name)


def test_bfloat16_gradients_are_all_reduced_to_the_same_parameters_on_both_ranks(tmp_path):
    """decorate(O2, bfloat16) under paddle.DataParallel: bfloat16 gradients (a sparse one too) cross
    the ring; both ranks end bit-identical, within bfloat16's rounding of one process on the whole batch."""
    ranks = _run_two_ranks(tmp_path, "bfloat16")
    oracle = _one_process_on_the_whole_batch(bfloat16=True)
    assert sorted(ranks[0]) == sorted(oracle)
    for name, want in oracle.items():  # the ranks saved their bfloat16 parameters as float32, exactly
        assert want.dtype == np.dtype("bfloat16"), name
        np.testing.assert_array_equal(ranks[0][name].astype(want.dtype).astype("float32"), ranks[0][name])
        np.testing.assert_array_equal(ranks[0][name], ranks[1][name], err_msg=name)
        np.testing.assert_allclose(ranks[0][name], want.astype("float32"), atol=0.004, err_msg=name)  # 2 ulps at 0.5


def test_seed_002_dygraph_script_runs_under_the_launcher_with_gpus_on_a_cpu_host(tmp_path):
    """The seed's train_fleet_dygraph.py as written (imports changed) on 64 synthetic flowers: 2
    batches of 32 an epoch, 10 epochs, each rank printing batch 0 of every epoch; launched with the
    seed's `--gpus=0,1`, which on a host without a GPU warns and runs on the CPU."""
    import subprocess

    from dist_helpers import REPO

    env = dict(os.environ, PYTHONPATH=REPO, FLEETGRAPH_FLOWERS_SAMPLES="64", FLEETGRAPH_RPC_TIMEOUT="20")
    args = ["--log_dir", str(tmp_path / "log"), "--gpus=0,1", os.path.join(SCRIPTS, "seed002_dygraph.py")]
    proc = subprocess.Popen(
        [sys.executable, "-m", "fleetgraph.distributed.launch", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, 9)
            proc.communicate()
    assert proc.returncode == 0, out[-3000:]
    if not any(name.startswith("nvidia") and name[6:].isdigit() for name in os.listdir("/dev")):
        assert "warning: --gpus 0,1 but this host shows no NVIDIA GPU" in out
    for rank in (0, 1):
        log = (tmp_path / "log" / f"workerlog.{rank}").read_text()
        lines = [ln for ln in log.splitlines() if ln.startswith("[Epoch")]
        losses = [float(ln.split("loss: ")[1].split(",")[0]) for ln in lines]
        assert len(losses) == 10 and losses[-1] < losses[0] / 4, lines


def test_a_new_gradient_is_all_reduced_even_where_the_last_one_was_freed(monkeypatch):
    """DataParallel all-reduces after a backward that gave new gradients; a new gradient array that
    CPython puts where the last all-reduced one was freed is still new."""
    import fleetgraph as paddle
    from fleetgraph.distributed import parallel

    real, reduced = parallel.run_op, []

    def one_rank_ring(op, ins, outs, attrs):  # the sum over a ring of one
        reduced.append(op)
        if op == "coalesce_tensor":
            real(op, ins, outs, attrs)

    monkeypatch.setattr(parallel, "run_op", one_rank_ring)
    model = paddle.DataParallel(paddle.nn.Linear(2, 1, bias_attr=False))
    model._nranks = 2
    for _ in range(5):
        model._layers.weight._grad = np.ones((2, 1), "float32")
        model._allreduce_grads()
        model._layers.weight.clear_gradient()
    assert reduced.count("c_allreduce_sum") == 5 * 2  # each time: the has-a-gradient flags, then the one bucket


def test_a_parameter_without_a_gradient_on_any_rank_keeps_none(monkeypatch):
    """A sublayer forward never calls gets no gradient on any rank (the all-reduced flags say so):
    it stays None, so Momentum with weight decay leaves it alone, as Paddle's; before, it was
    all-reduced as zeros and the optimizer moved it."""
    import fleetgraph as paddle
    from fleetgraph.distributed import parallel

    real = parallel.run_op

    def two_equal_ranks(op, ins, outs, attrs):  # the sum over two ranks holding the same values
        if op == "c_allreduce_sum":
            outs["Out"][0].value = ins["X"][0].value * 2
        elif op != "c_broadcast":
            real(op, ins, outs, attrs)

    monkeypatch.setattr(parallel, "run_op", two_equal_ranks)

    class TwoHeads(paddle.nn.Layer):
        def __init__(self):
            super().__init__()
            self.used, self.unused = paddle.nn.Linear(3, 1), paddle.nn.Linear(3, 1)

        def forward(self, x):
            return self.used(x)

    model = paddle.DataParallel(TwoHeads())
    model._nranks = 2
    opt = paddle.optimizer.Momentum(0.1, parameters=model.parameters(), weight_decay=0.1)
    before = model._layers.unused.weight.numpy()
    x = paddle.to_tensor(np.ones((2, 3), "float32"))
    paddle.mean(model(x)).backward()
    model._allreduce_grads()
    assert model._layers.unused.weight.grad is None and model._layers.unused.bias.grad is None
    np.testing.assert_allclose(model._layers.used.weight.grad.numpy(), np.ones((3, 1)), rtol=1e-6)
    opt.step()
    np.testing.assert_array_equal(model._layers.unused.weight.numpy(), before)
