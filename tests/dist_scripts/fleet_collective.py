"""Seed 002's static collective Fleet script (section 1.4), imports changed, the model smaller; the
rank comes from the environment (PADDLE_TRAINER_ENDPOINTS, PADDLE_TRAINER_ID, ...).

    fleet_collective.py --out DIR [--model fit_a_line|mlp] [--steps N] [--batch B]

Rank r trains on rows [r*B, (r+1)*B) of each global batch by running `default_main_program()`,
meets the other ranks at `fleet.barrier_worker()`, and writes DIR/rank<r>.npz.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from fleet_ps import FEEDS, build, global_batches, optimizer  # noqa: E402

import fleetgraph as paddle  # noqa: E402
import fleetgraph.distributed.fleet as fleet  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--model", default="mlp", choices=sorted(FEEDS))
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--batch", type=int, default=8)
    args = p.parse_args()

    paddle.enable_static()
    loss, _ = build(args.model)
    strategy = fleet.DistributedStrategy()
    fleet.init(is_collective=True, strategy=strategy)
    dist_optimizer = fleet.distributed_optimizer(optimizer(args.model))
    dist_optimizer.minimize(loss)

    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(paddle.static.default_startup_program())
    rank, rows = fleet.worker_index(), args.batch
    losses = []
    for feed in global_batches(args.model, args.steps, rows * fleet.worker_num()):
        shard = {k: v[rank * rows : (rank + 1) * rows] for k, v in feed.items()}
        (value,) = exe.run(paddle.static.default_main_program(), feed=shard, fetch_list=[loss.name])
        losses.append(float(np.asarray(value).reshape(-1)[0]))
    fleet.barrier_worker()
    scope = paddle.static.global_scope()
    params = {v.name: np.array(scope.vars[v.name]) for v in paddle.static.default_main_program().all_parameters()}
    np.savez(os.path.join(args.out, f"rank{rank}.npz"), losses=np.array(losses), **params)
    print(f"rank {rank}: loss {losses[0]:.4f} -> {losses[-1]:.4f}")


if __name__ == "__main__":
    main()
