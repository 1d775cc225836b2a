"""A Fleet parameter-server job for the launcher tests: fit_a_line, roles from the launcher's
environment. `--fail_worker K` makes worker K raise after a few steps; `--steps` sets the length;
`--profile` profiles every process (the launcher merges their traces). Extra arguments (the tests'
process marker) are ignored."""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from models import global_batches  # noqa: E402

import fleetgraph as paddle  # noqa: E402
import fleetgraph.distributed.fleet as fleet  # noqa: E402
import fleetgraph.distributed.fleet.base.role_maker as role_maker  # noqa: E402

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=30)
parser.add_argument("--fail_worker", type=int, default=-1)
parser.add_argument("--profile", action="store_true")
args, _ = parser.parse_known_args()

paddle.enable_static()
paddle.seed(1)
x = paddle.static.data(name="x", shape=[None, 13], dtype="float32")
y = paddle.static.data(name="y", shape=[None, 1], dtype="float32")
loss = paddle.mean(paddle.nn.functional.square_error_cost(paddle.static.nn.fc(x, size=1), y))
fleet.init(role_maker.PaddleCloudRoleMaker())
fleet.distributed_optimizer(paddle.optimizer.SGD(0.05), fleet.DistributedStrategy()).minimize(loss)

if args.profile:
    paddle.fluid.profiler.start_profiler("CPU")
if fleet.is_server():
    fleet.init_server()
    fleet.run_server()
else:
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(paddle.static.default_startup_program())
    fleet.init_worker()
    for step, feed in enumerate(global_batches("fit_a_line", args.steps, 8, seed=fleet.worker_index())):
        if step == 3 and fleet.worker_index() == args.fail_worker:
            raise RuntimeError(f"worker {args.fail_worker} fails on purpose")
        value = exe.run(paddle.static.default_main_program(), feed=feed, fetch_list=[loss])[0]
        print(f"step {step} loss {float(value):.5f}", flush=True)
    fleet.stop_worker()
    print(f"worker {fleet.worker_index()} done, final loss {float(np.asarray(value).reshape(())):.5f}")
if args.profile:
    paddle.fluid.profiler.stop_profiler("total", profile_path="")
