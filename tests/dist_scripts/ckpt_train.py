"""A Fleet job that checkpoints after every step and can resume from its last checkpoint; the role
comes from the environment (parameter-server or, with --collective, collective).

    ckpt_train.py --ckpt DIR --final DIR [--steps N] [--batch B] [--resume] [--collective] [--pause S]
                  [--fluid_save]

The model is tests/models.py's sparse CTR (a table on the pservers, Adam) in parameter-server mode and
the MLP of fleet_ps.py (Adam) in collective mode. Worker w trains on rows [w*B, (w+1)*B) of each
global batch; worker 0 saves the persistables to --ckpt after each step (the step in the
checkpoint's meta, or in the `ckpt_step` variable the program increments) and to --final at the end.
With --resume, servers start from --ckpt and workers skip the steps it holds.
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from models import global_batches, sparse_ctr  # noqa: E402

import fleetgraph as paddle  # noqa: E402
import fleetgraph.distributed.fleet as fleet  # noqa: E402
import fleetgraph.distributed.fleet.base.role_maker as role_maker  # noqa: E402
import fleetgraph.fluid as fluid  # noqa: E402
from fleetgraph.ir import Program, program_guard, unique_name  # noqa: E402
from fleetgraph.store import checkpoint  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--ckpt", required=True)
    p.add_argument("--final", required=True)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--resume", action="store_true")
    p.add_argument("--collective", action="store_true")
    p.add_argument("--fluid_save", action="store_true", help="save with fluid.io.save_persistables")
    p.add_argument("--pause", type=float, default=0.0, help="seconds between steps (a wider window to kill in)")
    args = p.parse_args()
    fleet.init(role_maker.PaddleCloudRoleMaker(is_collective=args.collective))
    optimizer = lambda: fleet.distributed_optimizer(paddle.optimizer.Adam(0.01))  # noqa: E731
    if args.collective:
        main_prog, startup, loss = _mlp(optimizer)
        model = "mlp"
    else:
        main_prog, startup, loss = sparse_ctr(optimizer)
        model = "sparse"
    exe = paddle.static.Executor(paddle.CPUPlace())
    if fleet.is_server():
        fleet.init_server(args.ckpt if args.resume else None)
        fleet.run_server()
        return
    exe.run(startup)
    fleet.init_worker()
    start = 0
    if args.resume and args.collective:
        fluid.io.load_persistables(exe, args.ckpt, main_prog)
        start = int(paddle.static.global_scope().vars["ckpt_step"][0])
    elif args.resume:
        start = checkpoint.meta(args.ckpt)["step"]
    w, batch = fleet.worker_index(), args.batch
    for step, feed in enumerate(global_batches(model, args.steps, batch * fleet.worker_num())):
        if step < start:
            continue
        shard = {k: v[w * batch : (w + 1) * batch] for k, v in feed.items()}
        exe.run(main_prog, feed=shard, fetch_list=[loss])
        if args.fluid_save and fleet.worker_index() == 0:  # Fluid's spelling, on fleet's trainer program
            fluid.io.save_persistables(exe, args.ckpt, main_prog)
        else:
            fleet.save_persistables(exe, args.ckpt)  # worker 0 saves; the others return at once
        time.sleep(args.pause)
    fleet.save_persistables(exe, args.final)
    fleet.stop_worker()


def _mlp(optimizer):
    main_prog, startup = Program(), Program()
    main_prog.random_seed = startup.random_seed = 11
    with program_guard(main_prog, startup), unique_name.guard():
        image = paddle.static.data(name="image", shape=[None, 784], dtype="float32")
        label = paddle.static.data(name="label", shape=[None, 1], dtype="int64")
        hidden = paddle.static.nn.fc(image, size=32, activation="relu")
        loss = paddle.nn.functional.cross_entropy(paddle.static.nn.fc(hidden, size=10), label)
        step = fluid.layers.create_global_var([1], 0, "int64", persistable=True, name="ckpt_step")
        fluid.layers.increment(step)
        optimizer().minimize(loss)
    return main_prog, startup, loss


if __name__ == "__main__":
    main()
