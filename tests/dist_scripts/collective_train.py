"""One rank of a collective (all-reduce) run for the equivalence tests.

    collective_train.py RANK --endpoints EPS --model {fit_a_line,mlp,mlp_clip,loop_rnn,lstm} --steps N --batch B
                        [--fuse_mb MB] [--seed S] [--steps_for RANK:STEPS,...] [--optimizer NAME]
                        [--hidden 32,...] --out PARAMS.npz

fit_a_line trains with SGD, the MLP (hidden layers --hidden, default one of 32) with Adam, mlp_clip the MLP with
Momentum at an exponentially decaying rate and global-norm clipping. Rank r trains on rows
[r*B, (r+1)*B) of each global batch of n*B rows (tests/models.global_batches, seeded with --seed
as the model is), then saves its parameters and losses. --fuse_mb > 0 fuses the all-reduces into
buckets of that many MiB. --optimizer trains the MLP with one of ps_train.py's optimizers instead
(the averages of ExponentialMovingAverage / ModelAverage saved too, as '<param>@AVERAGED').
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from dist_scripts.ps_train import OPTIMIZERS, averaged_params  # noqa: E402
from models import fit_a_line_2x, global_batches, loop_rnn, lstm_mlp, mlp  # noqa: E402

import fleetgraph as paddle  # noqa: E402
from fleetgraph.executor.comm import process_comm  # noqa: E402
from fleetgraph.transpiler import DistributeTranspiler, DistributeTranspilerConfig  # noqa: E402

MODELS = ("fit_a_line", "mlp", "mlp_clip", "loop_rnn", "lstm")


def build(model: str, seed: int, optimizer: str = "", hidden: tuple = (32,)):
    """(main, startup, loss) of the model under test, with its optimizer."""
    if optimizer:
        main, startup, _, _, loss, _ = mlp(OPTIMIZERS[optimizer], hidden=hidden, seed=seed)
        return main, startup, loss
    if model == "fit_a_line":
        main, startup, _, _, loss = fit_a_line_2x(seed=seed, optimizer=paddle.optimizer.SGD(learning_rate=0.05))
        return main, startup, loss
    if model == "mlp_clip":  # a decaying rate and global-norm clipping, which must see the averaged gradient

        def optimizer():
            lr = paddle.fluid.layers.exponential_decay(0.05, 5, 0.7)
            return paddle.optimizer.Momentum(lr, momentum=0.9, grad_clip=paddle.nn.ClipGradByGlobalNorm(0.5))

        main, startup, _, _, loss, _ = mlp(optimizer, hidden=hidden, seed=seed)
        return main, startup, loss
    if model == "loop_rnn":  # parameters read in every iteration of a while loop
        main, startup, _, _, loss = loop_rnn(lambda: paddle.optimizer.Adam(learning_rate=0.01), seed=seed)
        return main, startup, loss
    if model == "lstm":  # paddle.nn.LSTM's fused rnn op, the images as 28 steps of 28
        main, startup, _, _, loss = lstm_mlp(lambda: paddle.optimizer.Adam(learning_rate=0.01), seed=seed)
        return main, startup, loss
    main, startup, _, _, loss, _ = mlp(lambda: paddle.optimizer.Adam(learning_rate=0.01), hidden=hidden, seed=seed)
    return main, startup, loss


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("rank", type=int)
    p.add_argument("--endpoints", required=True, help="ip:port of every rank, comma-separated")
    p.add_argument("--model", default="fit_a_line", choices=MODELS)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--steps_for", default="", help="rank:steps,... ranks that stop early")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--fuse_mb", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--optimizer", default="", choices=["", *OPTIMIZERS])
    p.add_argument("--hidden", default="32", help="the MLP's hidden layer sizes, comma-separated")
    p.add_argument("--out", required=True)
    args = p.parse_args()

    eps = args.endpoints.split(",")
    hidden = tuple(int(h) for h in args.hidden.split(","))
    main_prog, startup, loss = build(args.model, args.seed, args.optimizer, hidden)
    config = DistributeTranspilerConfig()
    config.mode = "collective"
    config.fuse_all_reduce_ops = args.fuse_mb > 0
    config.fuse_grad_size_in_MB = args.fuse_mb
    t = DistributeTranspiler(config)
    t.transpile(
        args.rank, program=main_prog, trainers=args.endpoints, current_endpoint=eps[args.rank], startup_program=startup
    )
    trainer_prog = t.get_trainer_program()
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    transport = process_comm().ring(0).transport
    losses = []
    b = args.batch
    steps = dict(tuple(map(int, s.split(":"))) for s in args.steps_for.split(",") if s).get(args.rank, args.steps)
    for feed in global_batches(args.model, steps, b * len(eps), args.seed):
        shard = {k: v[args.rank * b : (args.rank + 1) * b] for k, v in feed.items()}
        losses.append(float(exe.run(trainer_prog, feed=shard, fetch_list=[loss])[0][0]))
    averaged = averaged_params(exe, main_prog, paddle.static.global_scope())
    exe.close()
    scope = paddle.static.global_scope()
    params = {v.name: np.array(scope.vars[v.name]) for v in main_prog.all_parameters()} | averaged
    np.savez(args.out, losses=np.array(losses), **params)
    fused = sum(op.type == "coalesce_tensor" for op in trainer_prog.global_block().ops)
    trend = f", loss {losses[0]:.4f} -> {losses[-1]:.4f}" if losses else ""
    print(f"rank {args.rank}: {len(losses)} steps, {fused} fused buckets, ring over {transport}{trend}")


if __name__ == "__main__":
    main()
