"""Seeds 000 and 002's parameter-server Fleet script (Paddle 2.x spelling), imports changed; the role
comes from the environment (TRAINING_ROLE, PADDLE_PSERVERS_IP_PORT_LIST, ...).

    fleet_ps.py --out DIR [--model fit_a_line|mlp] [--mode sync|async|geo] [--k_steps K]
                [--steps N] [--batch B] [--init_from DIR] [--barrier_late S]

Worker w trains on rows [w*B, (w+1)*B) of each global batch (see global_batches) by running
`default_main_program()`, writes DIR/worker<w>.npz (losses and parameters); the first worker also
saves persistables to DIR/persistables and an inference model to DIR/inference. Servers start from
the persistables in --init_from when it is given. With --barrier_late, every worker then meets the
others at fleet.barrier_worker(), the last worker S seconds after all the others reached it (each
marks that with DIR/reached<w>), and writes DIR/barrier<w>.json with the times it reached and left it.
"""

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from models import global_batches  # noqa: E402

import fleetgraph as paddle  # noqa: E402
import fleetgraph.distributed.fleet as fleet  # noqa: E402
import fleetgraph.distributed.fleet.base.role_maker as role_maker  # noqa: E402

FEEDS = {"fit_a_line": ("x", "y"), "mlp": ("image", "label")}


def build(model: str, seed: int = 11):
    """Build the network in the current default programs: returns (loss, prediction)."""
    paddle.static.default_main_program().random_seed = seed
    paddle.static.default_startup_program().random_seed = seed
    if model == "fit_a_line":
        x = paddle.static.data(name="x", shape=[None, 13], dtype="float32")
        y = paddle.static.data(name="y", shape=[None, 1], dtype="float32")
        pred = paddle.static.nn.fc(x, size=1)
        return paddle.mean(paddle.nn.functional.square_error_cost(pred, y)), pred
    image = paddle.static.data(name="image", shape=[None, 784], dtype="float32")
    label = paddle.static.data(name="label", shape=[None, 1], dtype="int64")
    hidden = paddle.static.nn.fc(image, size=32, activation="relu")
    pred = paddle.static.nn.fc(hidden, size=10)
    return paddle.nn.functional.cross_entropy(pred, label), pred


def optimizer(model: str):
    return paddle.optimizer.SGD(learning_rate=0.05) if model == "fit_a_line" else paddle.optimizer.Adam(0.01)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--model", default="fit_a_line", choices=sorted(FEEDS))
    p.add_argument("--mode", default="sync", choices=["sync", "async", "geo"])
    p.add_argument("--k_steps", type=int, default=3)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--init_from", default=None)
    p.add_argument("--barrier_late", type=float, default=None)
    args = p.parse_args()

    paddle.enable_static()
    loss, pred = build(args.model)

    role = role_maker.PaddleCloudRoleMaker()
    fleet.init(role)
    strategy = paddle.distributed.fleet.DistributedStrategy()
    strategy.a_sync = args.mode != "sync"
    if args.mode == "geo":
        strategy.a_sync_configs = {"k_steps": args.k_steps}
    dist_optimizer = fleet.distributed_optimizer(optimizer(args.model), strategy)
    dist_optimizer.minimize(loss)

    if fleet.is_server():
        fleet.init_server(args.init_from)
        fleet.run_server()
        return

    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(paddle.static.default_startup_program())
    fleet.init_worker()
    index, rows = fleet.worker_index(), args.batch
    losses = []
    for feed in global_batches(args.model, args.steps, rows * fleet.worker_num()):
        shard = {k: v[index * rows : (index + 1) * rows] for k, v in feed.items()}
        (value,) = exe.run(paddle.static.default_main_program(), feed=shard, fetch_list=[loss])
        losses.append(float(value.reshape(-1)[0]))
    scope = paddle.static.global_scope()
    params = {v.name: np.array(scope.vars[v.name]) for v in paddle.static.default_main_program().all_parameters()}
    np.savez(os.path.join(args.out, f"worker{index}.npz"), losses=np.array(losses), **params)
    if args.barrier_late is not None:
        if index == fleet.worker_num() - 1:  # late: after every other worker reached the barrier
            others = [os.path.join(args.out, f"reached{w}") for w in range(index)]
            deadline = time.monotonic() + 60
            while not all(os.path.exists(f) for f in others) and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(args.barrier_late)
        reached = time.time()
        open(os.path.join(args.out, f"reached{index}"), "w").close()
        fleet.barrier_worker()
        with open(os.path.join(args.out, f"barrier{index}.json"), "w") as f:
            json.dump({"reached": reached, "left": time.time()}, f)
    if fleet.is_first_worker():
        fleet.save_persistables(exe, os.path.join(args.out, "persistables"))
        fleet.save_inference_model(exe, os.path.join(args.out, "inference"), [FEEDS[args.model][0]], [pred])
    fleet.stop_worker()
    if losses:
        print(f"worker {index}: {len(losses)} steps, loss {losses[0]:.4f} -> {losses[-1]:.4f}")


if __name__ == "__main__":
    main()
