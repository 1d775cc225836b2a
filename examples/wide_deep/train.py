"""Seed 002's parameter-server quick start (section 2), its fragments put together in their order with
only the imports changed, and two flags: the seed lists three strategies one after another, `--mode`
picks one (async unless told); `--lr` sets SGD's learning rate, the seed's 0.0001 unless told (with
it, 20,000 samples teach the model next to nothing, on PaddlePaddle too: see README.md). The last
lines print the job's AUC over every worker (fleet.metrics).

    python -m fleetgraph.distributed.launch --server_num 1 --worker_num 2 train.py [--mode geo] [--lr 0.05]
"""

import argparse

import numpy as np

import fleetgraph as paddle
import fleetgraph.distributed.fleet as fleet

# 当前参数服务器模式只支持静态图模式， 因此训练前必须指定 ``paddle.enable_static()``
paddle.enable_static()
fleet.init(is_collective=False)

# 模型定义参考 examples/wide_and_deep 中 model.py
from model import WideDeepModel  # noqa: E402
from reader import WideDeepDataset  # noqa: E402

model = WideDeepModel()
model.net(is_train=True)


def distributed_training(exe, train_model, train_data_path="./data", batch_size=10, epoch_num=1):
    train_data = WideDeepDataset(data_path=train_data_path)
    reader = train_model.loader.set_sample_generator(
        train_data, batch_size=batch_size, drop_last=True, places=paddle.CPUPlace())

    for epoch_id in range(epoch_num):
        reader.start()
        try:
            while True:
                loss_val = exe.run(program=paddle.static.default_main_program(),
                                fetch_list=[train_model.cost.name])
                loss_val = np.mean(loss_val)
                print("TRAIN ---> pass: {} loss: {}\n".format(epoch_id, loss_val))
        except paddle.common_ops_import.core.EOFException:
            reader.reset()


parser = argparse.ArgumentParser(description="seed 002's wide & deep under parameter servers")
parser.add_argument("--mode", choices=["sync", "async", "geo"], default="async")
parser.add_argument("--lr", type=float, default=0.0001)
args = parser.parse_args()
mode = args.mode

if mode == "async":
    # 定义异步训练
    dist_strategy = fleet.DistributedStrategy()
    dist_strategy.a_sync = True
elif mode == "sync":
    # 定义同步训练
    dist_strategy = fleet.DistributedStrategy()
    dist_strategy.a_sync = False
else:
    # 定义Geo异步训练, Geo异步目前只支持SGD优化算法
    dist_strategy = fleet.DistributedStrategy()
    dist_strategy.a_sync = True
    dist_strategy.a_sync_configs = {"k_steps": 100}

optimizer = paddle.optimizer.SGD(learning_rate=args.lr)
optimizer = fleet.distributed_optimizer(optimizer, dist_strategy)
optimizer.minimize(model.loss)

if fleet.is_server():
    fleet.init_server()
    fleet.run_server()
else:
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(paddle.static.default_startup_program())

    fleet.init_worker()

    distributed_training(exe, model)

    state = model._metrics["auc"]["state"]
    print("AUC of the job: %.4f" % fleet.metrics.auc(state["stat_pos"], state["stat_neg"]))
    fleet.stop_worker()
