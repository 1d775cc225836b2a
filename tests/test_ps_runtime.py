"""Parameter-server training as real processes on 127.0.0.1, against a single process as the oracle."""

from __future__ import annotations

import os

import numpy as np
import pytest
from dist_helpers import SCRIPTS, ProcessGroup, assert_all_exit_zero, endpoints, free_ports
from dist_scripts.ps_train import averaged_params, build
from models import global_batches

import fleetgraph as paddle

PS_TRAIN = os.path.join(SCRIPTS, "ps_train.py")
CTR_TRAFFIC = os.path.join(SCRIPTS, "ctr_traffic.py")
FAST_TIMEOUT = {"FLEETGRAPH_RPC_TIMEOUT": "30"}


def run_cluster(tmp_path, n_pservers=2, trainers=2, extra=(), env=None, timeout=120, pserver_saves=None):
    """Start the pservers and trainers of ps_train.py; returns {trainer id: saved npz}, outputs. With
    `pserver_saves` (a dict), it receives {endpoint: what that pserver held at the end}."""
    eps = ",".join(endpoints(n_pservers))
    common = ["--pservers", eps, "--trainers", str(trainers), *extra]
    saves = {ep: str(tmp_path / f"pserver{i}.npz") for i, ep in enumerate(eps.split(","))}
    with ProcessGroup(timeout=timeout) as group:
        for ep in eps.split(","):
            out = ["--out", saves[ep]] if pserver_saves is not None else []
            group.start(f"pserver {ep}", [PS_TRAIN, "pserver", ep, *common, *out], env={**FAST_TIMEOUT, **(env or {})})
        outs = {t: str(tmp_path / f"trainer{t}.npz") for t in range(trainers)}
        for t in range(trainers):
            group.start(
                f"trainer {t}",
                [PS_TRAIN, "trainer", str(t), "--out", outs[t], *common],
                env={**FAST_TIMEOUT, **(env or {})},
            )
        results = group.wait()
    assert_all_exit_zero(results)
    if pserver_saves is not None:
        pserver_saves.update({ep: dict(np.load(path)) for ep, path in saves.items()})
    return {t: dict(np.load(path)) for t, path in outs.items()}, results


def single_process(model, optimizer, steps, rows):
    """The oracle: the same model and seed trained on the whole global batches in one process."""
    main, startup, loss, _ = build(model, optimizer)
    scope = paddle.static.Scope()
    exe = paddle.static.Executor()
    exe.run(startup, scope=scope)
    losses = []
    for feed in global_batches(model, steps, rows):
        losses.append(float(exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0][0]))
        if main.lr_scheduler is not None:  # a paddle.optimizer.lr scheduler steps once per batch
            main.lr_scheduler.step()
    params = {p.name: np.array(scope.vars[p.name]) for p in main.all_parameters()}
    return {**params, **averaged_params(exe, main, scope)}, np.array(losses)


def _table_from_pservers(saves: dict, name: str) -> tuple[np.ndarray, int]:
    """The whole table from the blocks the pservers held, and how many rows they had created."""
    blocks = sorted(
        (int(held[k + "@OFFSET"]), held[k], int(held[k + "@ROWS"]))
        for held in saves.values()
        for k in held
        if k == name or k.startswith(name + ".block") and "@" not in k
    )
    return np.concatenate([rows for _, rows, _ in blocks]), sum(n for _, _, n in blocks)


@pytest.mark.parametrize("optimizer", ["sgd", "adam", "sgd_clip", "sgd-dataset"])
def test_a_distributed_table_trains_as_one_process_on_the_whole_batch(tmp_path, optimizer):
    """Sync, 2 trainers x batch B == one process x 2B, with the table on 2 pservers only, grown lazily;
    a global-norm clip takes the table's rows into the norm, as one process does. Through
    train_from_dataset each step's rows come with the last step's parameters (hint_prefetch)."""
    steps, batch = 12, 16
    optimizer, _, how = optimizer.partition("-")
    saves: dict = {}
    trained, _ = run_cluster(
        tmp_path,
        2,
        2,
        ["--model", "sparse", "--optimizer", optimizer, "--steps", str(steps), "--batch", str(batch)]
        + (["--dataset"] if how == "dataset" else []),
        pserver_saves=saves,
    )
    want, _ = single_process("sparse", optimizer, steps, 2 * batch)
    table, created = _table_from_pservers(saves, "table")
    # the pservers sum the two trainers' rows in trainer order: Adam's table is off by 3e-8 at most
    np.testing.assert_allclose(table, want["table"], atol=1e-5)
    if optimizer == "sgd_clip":  # the clip bites
        assert np.abs(single_process("sparse", "sgd", steps, 2 * batch)[0]["table"] - want["table"]).max() > 1e-3
    touched = len(
        np.unique(np.concatenate([f[k] for f in global_batches("sparse", steps, 2 * batch) for k in f if k[0] == "C"]))
    )
    assert created == touched  # a row exists only once an id touched it
    for t in (0, 1):
        assert "table" not in trained[t]  # the trainers never held it
        for name in ("fc_0.w_0", "fc_1.w_0", "fc_1.b_0"):
            np.testing.assert_allclose(trained[t][name], want[name], atol=1e-5, err_msg=f"trainer {t} {name}")


SYNC_CASES = {
    **{
        f"{o}-{layout}": (o, n, s)
        for o in ("sgd", "adam")
        for layout, n, s in (("1ps", 1, []), ("2ps-unsliced", 2, ["--no_slice"]), ("2ps-sliced", 2, []))
    },
    "rmsprop-2ps-sliced": ("rmsprop", 2, []),
    "adamax-2ps-sliced": ("adamax", 2, []),
    "ftrl-2ps-sliced": ("ftrl", 2, []),
    "lamb-2ps-unsliced": ("lamb", 2, ["--no_slice"]),  # its trust ratio is a norm of the whole parameter
    "sgd_decay-2ps-sliced": ("sgd_decay", 2, []),  # the schedule's ops run on every pserver
    "adam_warmup-2ps-sliced": ("adam_warmup", 2, []),
    "sgd_scheduler-2ps-sliced": ("sgd_scheduler", 2, []),  # the trainers send the scheduler's rate
    "momentum_scheduler-1ps": ("momentum_scheduler", 1, []),
    # the optimizers that wrap another, each with a decaying rate; the averages saved as '<param>@AVERAGED'
    **{f"{o}-2ps-sliced": (o, 2, []) for o in ("lookahead", "ema", "model_average", "recompute")},
}


@pytest.mark.parametrize("optimizer, n_pservers, slicing", SYNC_CASES.values(), ids=SYNC_CASES.keys())
def test_sync_training_equals_single_process_on_the_whole_batch(tmp_path, optimizer, n_pservers, slicing):
    steps, batch = 20, 8
    trained, _ = run_cluster(
        tmp_path,
        n_pservers,
        2,
        ["--model", "mlp", "--optimizer", optimizer, "--steps", str(steps), "--batch", str(batch), *slicing],
    )
    want, _ = single_process("mlp", optimizer, steps, 2 * batch)
    for name in [n for n in want if n.endswith("@AVERAGED")]:  # the averages are not the parameters
        assert np.abs(want[name] - want[name.split("@")[0]]).max() > 1e-3, name
    for t in (0, 1):
        for name, value in want.items():
            np.testing.assert_allclose(trained[t][name], value, atol=1e-5, err_msg=f"trainer {t} {name}")


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_sync_training_through_a_while_loop_equals_single_process(tmp_path, optimizer):
    """Parameters read in every iteration of a loop are sliced, sent and received as any other; their
    gradients, summed over the iterations by while_grad, are sent once per step."""
    steps, batch = 10, 8
    trained, _ = run_cluster(
        tmp_path, 2, 2, ["--model", "loop_rnn", "--optimizer", optimizer, "--steps", str(steps), "--batch", str(batch)]
    )
    want, losses = single_process("loop_rnn", optimizer, steps, 2 * batch)
    assert losses[-1] < losses[0]
    for t in (0, 1):
        for name, value in want.items():
            np.testing.assert_allclose(trained[t][name], value, atol=1e-5, err_msg=f"trainer {t} {name}")


@pytest.mark.parametrize("optimizer", ["adam", "rmsprop"])
def test_sync_training_through_an_lstm_equals_single_process(tmp_path, optimizer):
    """paddle.nn.LSTM's fused `rnn` op over the MLP's images as 28 steps of 28: its weights, read at
    every step, are sent and received as any other parameter; 2 trainers x B == one process x 2B."""
    steps, batch = 10, 8
    trained, _ = run_cluster(
        tmp_path, 2, 2, ["--model", "lstm", "--optimizer", optimizer, "--steps", str(steps), "--batch", str(batch)]
    )
    want, losses = single_process("lstm", optimizer, steps, 2 * batch)
    assert losses[-3:].mean() < losses[:3].mean()
    assert {"lstm_0.w_0", "lstm_0.w_1", "lstm_0.b_0", "lstm_0.b_1"} <= set(want)
    for t in (0, 1):
        for name, value in want.items():
            np.testing.assert_allclose(trained[t][name], value, atol=1e-5, err_msg=f"trainer {t} {name}")


CLIP_CASES = {  # (optimizer with grad_clip, the same without it, slicing)
    "global_norm-decay-sliced": ("momentum_decay_clip", "momentum_decay", []),
    "by_norm-scheduler-sliced": ("sgd_scheduler_clip_norm", "sgd_scheduler", []),
    "by_value-decay-sliced": ("adam_decay_clip_value", "adam_decay", []),
}


@pytest.mark.parametrize("optimizer, unclipped, slicing", CLIP_CASES.values(), ids=CLIP_CASES.keys())
def test_sync_training_clips_the_averaged_gradient_as_one_process_does(tmp_path, optimizer, unclipped, slicing):
    """2 pservers x 2 trainers x batch B == one process x 2B with a learning-rate schedule and a clip
    that bites: the pservers clip the trainers' averaged gradient, the norm taken over every block of
    every parameter on every pserver (by norm: of each whole parameter), not each trainer's own."""
    steps, batch = 12, 8
    args = ["--model", "mlp", "--optimizer", optimizer, "--steps", str(steps), "--batch", str(batch), *slicing]
    trained, _ = run_cluster(tmp_path, 2, 2, args)
    want, _ = single_process("mlp", optimizer, steps, 2 * batch)
    free, _ = single_process("mlp", unclipped, steps, 2 * batch)
    assert max(np.abs(free[n] - want[n]).max() for n in want) > 1e-3  # the clip bites
    for t in (0, 1):
        for name, value in want.items():
            np.testing.assert_allclose(trained[t][name], value, atol=1e-5, err_msg=f"trainer {t} {name}")


def test_trainers_with_different_numbers_of_batches_finish_cleanly(tmp_path):
    trained, _ = run_cluster(tmp_path, 2, 3, ["--steps", "12", "--batches_for", "1:4,2:8"], timeout=90)
    assert [len(trained[t]["losses"]) for t in range(3)] == [12, 4, 8]  # and every process exited 0


ASYNC_CASES = {
    **{
        f"{mode}-{model}": (mode, model, "sgd" if model == "fit_a_line" else "adam")
        for mode in ("async", "half_async", "geo")
        for model in ("fit_a_line", "mlp", "sparse")
    },
    # a schedule: the pservers step a decay's ops per trainer batch; a scheduler's rate comes with the sends
    **{f"{mode}-mlp-{o}": (mode, "mlp", o) for mode in ("async", "geo") for o in ("sgd_decay", "sgd_scheduler")},
}


@pytest.mark.parametrize("mode, model, optimizer", ASYNC_CASES.values(), ids=ASYNC_CASES.keys())
def test_async_modes_lower_the_loss_like_single_process(tmp_path, mode, model, optimizer):
    """Stated tolerance: the trainers' mean loss over their last 10 steps is within 1.5x (plus 0.05) of
    the single-process loss over its last 10 steps, and at most half the first loss."""
    steps, batch = 60, 16
    args = ["--model", model, "--optimizer", optimizer, "--mode", mode]
    trained, _ = run_cluster(tmp_path, 2, 2, [*args, "--steps", str(steps), "--batch", str(batch), "--k_steps", "3"])
    _, oracle = single_process(model, optimizer, steps, batch)
    ours = np.mean([trained[t]["losses"][-10:].mean() for t in (0, 1)])
    first = np.mean([trained[t]["losses"][:3].mean() for t in (0, 1)])
    # GEO averages the trainers' moves (each counts 1 / trainers): a table row that one trainer's batches
    # touch moves half as far as in one process, where a dense parameter gets both trainers' halves
    slack = 2.5 if (mode, model) == ("geo", "sparse") else 1.5
    assert ours <= slack * oracle[-10:].mean() + 0.05, (mode, model, ours, oracle[-10:].mean())
    assert ours <= 0.5 * first, (mode, model, first, ours)


# -- seed 001 as its documentation starts it --------------------------------------------------------


def _port_free_on(port: int, hosts) -> bool:
    import socket

    for host in hosts:
        with socket.socket() as s:
            try:
                s.bind((host, port))
            except OSError:
                return False
    return True


def test_seed_001_trains_with_two_pservers_and_two_trainers_from_its_environment_table():
    """Seed 001's script, only its imports changed, started as its table says: one port, one host per
    pserver (two loopback addresses here, so each pserver binds its own)."""
    hosts = ("127.0.0.1", "127.0.0.2")
    port = next(p for p in free_ports(8) if _port_free_on(p, hosts))
    common = {
        "PADDLE_PSERVER_IPS": ", ".join(hosts),
        "PADDLE_TRAINERS": "2",
        "PADDLE_PSERVER_PORT": str(port),
        **FAST_TIMEOUT,
    }
    script = os.path.join(SCRIPTS, "seed001_dist_train.py")
    with ProcessGroup(timeout=150) as group:
        for host in hosts:
            group.start(
                f"pserver {host}",
                [script],
                env={**common, "PADDLE_TRAINING_ROLE": "PSERVER", "PADDLE_CURRENT_IP": host},
            )
        for t in (0, 1):
            group.start(
                f"trainer {t}", [script], env={**common, "PADDLE_TRAINING_ROLE": "TRAINER", "PADDLE_TRAINER_ID": str(t)}
            )
        results = group.wait()
    assert_all_exit_zero(results)
    for t in (0, 1):
        lines = [ln for ln in results[f"trainer {t}"][1].splitlines() if ln.startswith("Epoch:")]
        assert lines[-1].startswith("Epoch: 29, Batch: 49")
        first, last = float(lines[0].rsplit(" ", 1)[1]), float(lines[-1].rsplit(" ", 1)[1])
        assert last < first / 10


def test_a_worker_that_stopped_no_longer_counts_at_barrier_worker():
    import zmq

    from fleetgraph.executor.comm.wire import Kind, decode, encode

    ep = endpoints(1)[0]
    context = zmq.Context()
    trainers = [context.socket(zmq.DEALER) for _ in range(2)]
    try:
        with ProcessGroup(timeout=60) as group:
            group.start("pserver", [PS_TRAIN, "pserver", ep, "--pservers", ep, "--trainers", "2"], env=FAST_TIMEOUT)
            for sock in trainers:
                sock.setsockopt(zmq.LINGER, 0)
                sock.connect(f"tcp://{ep}")
            trainers[0].send_multipart(encode(Kind.WORKER_BARRIER, sender=0, seq=1))
            assert not trainers[0].poll(500), "the barrier let trainer 0 through alone"
            trainers[1].send_multipart(encode(Kind.COMPLETE, sender=1, seq=1))
            assert trainers[1].poll(20000) and decode(trainers[1].recv_multipart()).kind == Kind.ACK
            assert trainers[0].poll(20000), "trainer 1 is done, yet trainer 0 still waits"
            assert decode(trainers[0].recv_multipart()).kind == Kind.ACK
            trainers[0].send_multipart(encode(Kind.COMPLETE, sender=0, seq=2))
            results = group.wait()
    finally:
        for sock in trainers:
            sock.close()
        context.term()
    assert_all_exit_zero(results)


def ctr_traffic(tmp_path, dim: int, distinct: list[int]) -> dict:
    """Seed 000's CTR-DNN, a table of `dim` rows on 2 pservers, one sync trainer: bytes per step."""
    eps = ",".join(endpoints(2))
    common = ["--pservers", eps, "--dim", str(dim)]
    out = str(tmp_path / f"traffic{dim}.npz")
    with ProcessGroup(timeout=120) as group:
        for ep in eps.split(","):
            group.start(f"pserver {ep}", [CTR_TRAFFIC, "pserver", ep, *common], env=FAST_TIMEOUT)
        argv = [CTR_TRAFFIC, "trainer", "0", *common, "--distinct", ",".join(map(str, distinct)), "--out", out]
        group.start("trainer", argv, env=FAST_TIMEOUT)
        results = group.wait()
    assert_all_exit_zero(results)
    return dict(np.load(out))


def test_bytes_on_the_wire_per_step_follow_the_ids_of_a_ctr_batch_not_the_table_height(tmp_path):
    """Batches of 100 samples x 26 slots (2,600 lookups) over 50 to 800 distinct ids: each step's
    bytes are the dense parameters' plus a fixed cost per distinct id, the DistPlan's figures, and
    the same for a table of 100,000 rows and one of 10,000,001."""
    distinct = [100, 50, 200, 400, 800, 400]
    small = ctr_traffic(tmp_path, 100_000, distinct)
    large = ctr_traffic(tmp_path, 10_000_001, distinct)
    np.testing.assert_array_equal(small["distinct"], distinct)
    np.testing.assert_array_equal(large["bytes"], small["bytes"])
    steps = small["bytes"][1:].astype(float)  # step 0 holds the start barrier
    ids = small["distinct"][1:]
    for direction in (0, 1):  # sent, received
        slope, constant = np.polyfit(ids, steps[:, direction], 1)
        np.testing.assert_allclose(steps[:, direction], slope * ids + constant, atol=1)  # exactly linear
        assert round(slope) == small["plan_per_id"][direction]  # 56 B sent (id asked, id + row pushed), 40 B back
        plan_dense = small["plan_per_step"][direction]
        assert plan_dense <= constant < plan_dense * 1.01  # the dense parameters, plus message headers


def test_a_clipped_step_is_applied_only_with_the_scale_the_barrier_answer_leads_to():
    """With a global-norm clip, a pserver answers the send barrier with the sums of squares of the
    gradient blocks it holds, refuses a message that commits that step without the clip scale, and
    applies the step with the scale that commits it."""
    import zmq

    from fleetgraph.executor.comm.wire import Kind, decode, encode, unpack_arrays

    ep = endpoints(1)[0]
    main, startup, _, _ = build("mlp", "momentum_decay_clip")
    t = paddle.fluid.transpiler.DistributeTranspiler()
    t.transpile(0, program=main, pservers=ep, trainers=1, startup_program=startup)
    server = t.get_pserver_programs(ep)[0]
    grads = [entry.rsplit(":", 1)[0] for entry in server.global_block().ops[0].attrs["grad_to_block_id"]]
    rng = np.random.default_rng(0)
    values = {g: rng.normal(size=server.global_block().var(g).shape).astype("float32") for g in grads}
    context = zmq.Context()
    sock = context.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)

    def ask(kind, name="", value=None, seq=[0], commit=0):  # noqa: B006 - the request counter
        seq[0] += 1
        sock.send_multipart(encode(kind, name, value, sender=0, seq=seq[0], commit=commit))
        assert sock.poll(20000), f"no answer to {kind.name}"
        return decode(sock.recv_multipart())

    try:
        with ProcessGroup(timeout=60) as group:
            args = ["--pservers", ep, "--trainers", "1", "--model", "mlp", "--optimizer", "momentum_decay_clip"]
            group.start("pserver", [PS_TRAIN, "pserver", ep, *args], env=FAST_TIMEOUT)
            sock.connect(f"tcp://{ep}")
            before = ask(Kind.GET, "fc_1.b_0").value.copy()
            for g in grads:
                assert ask(Kind.SEND, g, values[g]).kind == Kind.ACK
            squares = ask(Kind.SEND_BARRIER).value
            np.testing.assert_allclose(squares, [sum((v.astype(np.float64) ** 2).sum() for v in values.values())], 1e-5)
            refused = ask(Kind.GET, "fc_1.b_0", commit=1)
            assert refused.kind == Kind.ERROR and "'@CLIP_SCALE@'" in refused.text
            assert ask(Kind.SEND, "@CLIP_SCALE@", np.array([0.0], "float32"), commit=1).kind == Kind.ACK
            np.testing.assert_array_equal(ask(Kind.GET, "fc_1.b_0").value, before)  # a zero scale: no move
            state = ask(Kind.STATE)
            assert unpack_arrays(state.value)[state.name.split("\n").index("@STEPS@")].tolist() == [1]  # applied
            assert ask(Kind.COMPLETE).kind == Kind.ACK
            results = group.wait()
    finally:
        sock.close()
        context.term()
    assert_all_exit_zero(results)
