"""fit_a_line with the Fleet API, as parameter servers and trainers whose roles come from the
environment (the launcher sets it): `python -m fleetgraph.distributed.launch_ps --server_num 2
--worker_num 2 examples/dist_fit_a_line/train.py`."""

import argparse
import os
import random
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from model import build  # noqa: E402

import fleetgraph as paddle  # noqa: E402
import fleetgraph.distributed.fleet as fleet  # noqa: E402
import fleetgraph.distributed.fleet.base.role_maker as role_maker  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--epochs", type=int, default=50)
parser.add_argument("--batch_size", type=int, default=8)
args = parser.parse_args()

paddle.enable_static()
random.seed(90)  # paddle.reader.shuffle draws from Python's random
x, y, loss = build()
fleet.init(role_maker.PaddleCloudRoleMaker())
strategy = fleet.DistributedStrategy()
strategy.a_sync = False
optimizer = fleet.distributed_optimizer(paddle.optimizer.SGD(learning_rate=0.001), strategy)
optimizer.minimize(loss)

if fleet.is_server():
    fleet.init_server()
    fleet.run_server()
else:
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(paddle.static.default_startup_program())
    fleet.init_worker()
    samples = list(paddle.dataset.uci_housing.train()())[fleet.worker_index() :: fleet.worker_num()]
    reader = paddle.batch(paddle.reader.shuffle(lambda: iter(samples), buf_size=500), args.batch_size)
    feeder = paddle.fluid.DataFeeder(feed_list=[x, y])
    for epoch in range(args.epochs):
        losses = [
            exe.run(paddle.static.default_main_program(), feed=feeder.feed(batch), fetch_list=[loss])[0][0]
            for batch in reader()
        ]
        if epoch % 5 == 0 or epoch == args.epochs - 1:
            print(f"worker {fleet.worker_index()} epoch {epoch:2d}: mean loss {np.mean(losses):9.3f}", flush=True)
    fleet.stop_worker()
