"""One role of a parameter-server run for the equivalence tests.

    ps_train.py pserver ENDPOINT --pservers EPS --trainers N [model options]
    ps_train.py trainer ID --pservers EPS --trainers N --out PARAMS.npz [model options]

Trainer t trains on rows [t*B, (t+1)*B) of each global batch of N*B rows (see global_batches),
then saves its parameters. With --dataset it writes those rows to a MultiSlot file first and trains
with train_from_dataset (one reader thread: the batches keep their order). A trainer whose training
fails can save a checkpoint (--save_on_error) and say it is done (--close_on_error) before it fails,
as a script does in an `except` or `finally`.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from models import fit_a_line_2x, global_batches, loop_rnn, lstm_mlp, mlp, sparse_ctr, word2vec  # noqa: E402

import fleetgraph as paddle  # noqa: E402
from fleetgraph.ops.sparse_table import SparseTable  # noqa: E402
from fleetgraph.transpiler import DistributeTranspiler, DistributeTranspilerConfig  # noqa: E402

_AVERAGES: dict[int, object] = {}  # id(main program) -> the ExponentialMovingAverage / ModelAverage set up


class _ThenAverage:
    """`inner.minimize`, then `make()` (an ExponentialMovingAverage, updated, or a ModelAverage)."""

    def __init__(self, inner, make) -> None:
        self.inner, self.make = inner, make

    def minimize(self, loss, *args, **kwargs):
        result = self.inner.minimize(loss, *args, **kwargs)
        average = self.make()
        if hasattr(average, "update"):
            average.update()
        _AVERAGES[id(loss.block.program)] = average
        return result


class _Recompute:
    """RecomputeOptimizer over `inner`, the first hidden activation its checkpoint."""

    def __init__(self, inner) -> None:
        self.optimizer = paddle.fluid.optimizer.RecomputeOptimizer(inner)

    def minimize(self, loss, *args, **kwargs):
        self.optimizer._set_checkpoints([next(op.output("Out")[0] for op in loss.block.ops if op.type == "relu")])
        return self.optimizer.minimize(loss)


def averaged_params(exe, main_prog, scope) -> dict:
    """With an ExponentialMovingAverage or ModelAverage set up: each parameter's average, saved as
    '<name>@AVERAGED' (applied, then restored)."""
    average = _AVERAGES.get(id(main_prog))
    if average is None:
        return {}
    with paddle.static.scope_guard(scope), average.apply(exe):
        return {f"{p.name}@AVERAGED": np.array(scope.vars[p.name]) for p in main_prog.all_parameters()}


OPTIMIZERS = {
    "sgd": lambda: paddle.optimizer.SGD(0.05),
    "adam": lambda: paddle.optimizer.Adam(0.01),
    "sgd_clip": lambda: paddle.optimizer.SGD(0.05, grad_clip=paddle.nn.ClipGradByGlobalNorm(0.05)),
    "rmsprop": lambda: paddle.optimizer.RMSProp(0.01, momentum=0.5, centered=True),
    "adamax": lambda: paddle.optimizer.Adamax(0.01),
    "lamb": lambda: paddle.optimizer.Lamb(0.01),
    "ftrl": lambda: paddle.fluid.optimizer.Ftrl(0.05, l1=0.001, l2=0.01),
    "sgd_decay": lambda: paddle.fluid.optimizer.SGD(paddle.fluid.layers.exponential_decay(0.1, 3, 0.5)),
    "sgd_scheduler": lambda: paddle.optimizer.SGD(paddle.optimizer.lr.StepDecay(0.1, step_size=3, gamma=0.5)),
    "momentum_scheduler": lambda: paddle.optimizer.Momentum(
        paddle.optimizer.lr.LinearWarmup(0.05, warmup_steps=5, start_lr=0.0, end_lr=0.05)
    ),
    "momentum_decay_clip": lambda: paddle.optimizer.Momentum(
        paddle.fluid.layers.exponential_decay(0.05, 5, 0.7), grad_clip=paddle.nn.ClipGradByGlobalNorm(0.5)
    ),
    "momentum_decay": lambda: paddle.optimizer.Momentum(paddle.fluid.layers.exponential_decay(0.05, 5, 0.7)),
    "sgd_scheduler_clip_norm": lambda: paddle.optimizer.SGD(
        paddle.optimizer.lr.StepDecay(0.1, step_size=3, gamma=0.5), grad_clip=paddle.nn.ClipGradByNorm(0.3)
    ),
    "adam_decay_clip_value": lambda: paddle.fluid.optimizer.Adam(
        paddle.fluid.layers.exponential_decay(0.01, 5, 0.7), grad_clip=paddle.fluid.clip.GradientClipByValue(0.02)
    ),
    "adam_decay": lambda: paddle.fluid.optimizer.Adam(paddle.fluid.layers.exponential_decay(0.01, 5, 0.7)),
    "lookahead": lambda: paddle.fluid.optimizer.LookaheadOptimizer(
        paddle.fluid.optimizer.Momentum(paddle.fluid.layers.exponential_decay(0.05, 5, 0.7), 0.9), alpha=0.4, k=3
    ),
    "ema": lambda: _ThenAverage(
        paddle.fluid.optimizer.Adam(paddle.fluid.layers.exponential_decay(0.01, 5, 0.7)),
        lambda: paddle.fluid.optimizer.ExponentialMovingAverage(0.8),
    ),
    "model_average": lambda: _ThenAverage(
        paddle.fluid.optimizer.SGD(paddle.fluid.layers.exponential_decay(0.1, 5, 0.7)),
        lambda: paddle.fluid.optimizer.ModelAverage(0.5, min_average_window=2, max_average_window=4),
    ),
    "recompute": lambda: _Recompute(paddle.fluid.optimizer.Adam(paddle.fluid.layers.exponential_decay(0.01, 5, 0.7))),
    "adam_warmup": lambda: paddle.fluid.optimizer.Adam(
        paddle.fluid.layers.linear_lr_warmup(paddle.fluid.layers.cosine_decay(0.01, 2, 10), 4, 0.0, 0.01)
    ),
}


def build(model: str, optimizer: str):
    """(main, startup, loss, feed names) of the model under test."""
    if model == "fit_a_line":
        main, startup, _, _, loss = fit_a_line_2x(seed=11, optimizer=OPTIMIZERS[optimizer]())
        return main, startup, loss, ("x", "y")
    if model == "sparse":
        main, startup, loss = sparse_ctr(OPTIMIZERS[optimizer], seed=11)
        return main, startup, loss, None
    if model == "loop_rnn":  # the MLP's data through a while loop that reads its parameters each iteration
        main, startup, _, _, loss = loop_rnn(OPTIMIZERS[optimizer], seed=11)
        return main, startup, loss, ("image", "label")
    if model == "lstm":  # the MLP's data as 28 steps of 28 features through paddle.nn.LSTM
        main, startup, _, _, loss = lstm_mlp(OPTIMIZERS[optimizer], seed=11)
        return main, startup, loss, ("image", "label")
    if model.startswith("w2v_"):  # w2v_{nce,hsigmoid}[_sparse]: the table and the loss's weight sparse
        _, loss_name, *sparse = model.split("_")
        main, startup, loss = word2vec(OPTIMIZERS[optimizer], loss_name, is_sparse=bool(sparse), seed=11)
        return main, startup, loss, None
    main, startup, _, _, loss, _ = mlp(OPTIMIZERS[optimizer], hidden=(32,), seed=11)
    return main, startup, loss, ("image", "label")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("role", choices=["pserver", "trainer"])
    p.add_argument("who", help="pserver endpoint or trainer id")
    p.add_argument("--pservers", required=True)
    p.add_argument("--trainers", type=int, required=True)
    p.add_argument("--model", default="fit_a_line")
    p.add_argument("--optimizer", default="sgd")
    p.add_argument("--mode", default="sync", choices=["sync", "async", "half_async", "geo"])
    p.add_argument("--k_steps", type=int, default=4)
    p.add_argument("--no_slice", action="store_true")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--batches_for", default="", help="trainer:steps,... trainers that stop early")
    p.add_argument("--out", default="")
    p.add_argument("--dataset", action="store_true", help="train_from_dataset from a MultiSlot file of the rows")
    p.add_argument("--ready", default="", help="a file created once the first step is done")
    p.add_argument("--close_on_error", action="store_true", help="exe.close() when training fails")
    p.add_argument(
        "--save_on_error",
        default="",
        help="when training fails, save_persistables (the pservers' state) to this directory, and this "
        "trainer's parameters to DIR.held.npz",
    )
    args = p.parse_args()

    main_prog, startup, loss, feed_names = build(args.model, args.optimizer)
    config = DistributeTranspilerConfig()
    config.slice_var_up = not args.no_slice
    config.half_async = args.mode == "half_async"
    if args.mode == "async":  # Paddle 1.8's async: sync_mode off and runtime_split_send_recv on
        config.sync_mode, config.runtime_split_send_recv = False, True
    config.geo_sgd_mode = args.mode == "geo"
    config.geo_sgd_need_push_nums = args.k_steps
    trainer_id = int(args.who) if args.role == "trainer" else 0
    t = DistributeTranspiler(config)
    t.transpile(
        trainer_id,
        program=main_prog,
        pservers=args.pservers,
        trainers=args.trainers,
        sync_mode=args.mode == "sync",
        startup_program=startup,
    )
    exe = paddle.static.Executor(paddle.CPUPlace())
    if args.role == "pserver":
        ps_main, ps_startup = t.get_pserver_programs(args.who)
        exe.run(ps_startup)
        exe.run(ps_main)
        if args.out:  # what this pserver holds: a table block as (its first row, its rows)
            held = {}
            for name, value in paddle.static.global_scope().vars.items():
                if isinstance(value, SparseTable):
                    held[name], held[name + "@OFFSET"] = value.to_dense(), np.array(value.offset)
                    held[name + "@ROWS"] = np.array(len(value))
                elif value is not None and ps_main.global_block().has_var(name):
                    held[name] = np.array(value)
            np.savez(args.out, **held)
        return
    steps = dict(tuple(map(int, s.split(":"))) for s in args.batches_for.split(",") if s).get(trainer_id, args.steps)
    exe.run(startup)
    trainer_prog = t.get_trainer_program()
    losses = []
    shards = (  # made as they are trained on: the fault tests run "100000" steps until a kill
        {k: v[trainer_id * args.batch : (trainer_id + 1) * args.batch] for k, v in feed.items()}
        for feed in global_batches(args.model, steps, args.batch * args.trainers)
    )
    scope = paddle.static.global_scope()
    on_pservers = {p.param for p in t.plan.tables} if args.mode != "geo" else set()  # trainers hold a placeholder
    if args.dataset:
        train_from_file(exe, trainer_prog, list(shards), args.batch, args.out + ".data")
    try:
        for shard in shards if not args.dataset else ():
            losses.append(float(exe.run(trainer_prog, feed=shard, fetch_list=[loss])[0][0]))
            if args.ready and len(losses) == 1:
                open(args.ready, "w").close()
            if trainer_prog.lr_scheduler is not None:  # a paddle.optimizer.lr scheduler steps once per batch
                trainer_prog.lr_scheduler.step()
    except Exception:
        try:
            if args.save_on_error:
                np.savez(args.save_on_error + ".held.npz", **trainer_params(scope, main_prog, on_pservers))
                paddle.fluid.io.save_persistables(exe, args.save_on_error, trainer_prog)
        finally:
            if args.close_on_error:
                exe.close()
        raise
    averaged = averaged_params(exe, main_prog, scope)
    exe.close()
    params = trainer_params(scope, main_prog, on_pservers)
    params.update(averaged)
    if args.out:  # without --out, np.savez would write '.npz' into the working directory
        np.savez(args.out, losses=np.array(losses), **params)
    if losses:
        print(f"trainer {trainer_id}: {len(losses)} steps, loss {losses[0]:.4f} -> {losses[-1]:.4f}")


def trainer_params(scope, main_prog, on_pservers: set) -> dict:
    """The parameters this trainer holds (a local table densely), by name."""
    params = {}
    for p in main_prog.all_parameters():
        if p.name not in on_pservers:
            value = scope.vars[p.name]
            params[p.name] = value.to_dense() if isinstance(value, SparseTable) else np.array(value)
    return params


def train_from_file(exe, program, shards: list[dict], batch: int, path: str) -> None:
    """The shards' rows as MultiSlot lines (each value as the float64 that holds its float32 exactly),
    trained on in order by train_from_dataset with one reader thread."""
    names = list(shards[0])
    with open(path, "w") as f:
        for shard in shards:
            for row in range(batch):
                f.write(
                    " ".join(f"{shard[n][row].size} " + " ".join(repr(v.item()) for v in shard[n][row]) for n in names)
                )
                f.write("\n")
    block = program.global_block()
    dataset = paddle.distributed.QueueDataset()
    dataset.init(batch_size=batch, thread_num=1, use_var=[block.var(n) for n in names])
    dataset.set_filelist([path])
    exe.train_from_dataset(program, dataset, thread=1)


if __name__ == "__main__":
    main()
