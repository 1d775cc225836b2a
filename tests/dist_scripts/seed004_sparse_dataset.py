"""Seed 004's passages on sparse updates, the Dataset API and its four strategies, put together with
its imports changed: an `is_sparse` embedding of `ids`, trained by `train_from_dataset` from MultiSlot
files through a `pipe_command`, under a strategy of DistributedStrategyFactory, roles from Fluid's
environment variables (PaddleCloudRoleMaker).

    seed004_sparse_dataset.py --data DIR --strategy sync|half_async|async|geo [--epochs N]

A sample is `1 ID 1 LABEL`: the label says whether the id is in the lower half of the dictionary,
which the embedding learns. Each trainer reads its share of DIR's files; `fetch_info` prints the loss.
"""

import argparse
import os

import fleetgraph.fluid as fluid
import fleetgraph.fluid.incubate.fleet.base.role_maker as role_maker
from fleetgraph.fluid.incubate.fleet.parameter_server.distribute_transpiler import fleet
from fleetgraph.fluid.incubate.fleet.parameter_server.distribute_transpiler.distributed_strategy_factory import (
    DistributedStrategyFactory,
)

dict_size = 1000
learning_rate = 0.5


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--strategy", required=True, choices=["sync", "half_async", "async", "geo"])
    p.add_argument("--epochs", type=int, default=4)
    args = p.parse_args()

    data = fluid.layers.data(name="ids", shape=[1], dtype="int64")
    fc = fluid.layers.embedding(input=data, size=[dict_size, 16], is_sparse=True)
    label = fluid.layers.data(name="label", shape=[1], dtype="int64")
    predict = fluid.layers.fc(input=fc, size=2, act="softmax")
    loss = fluid.layers.mean(fluid.layers.cross_entropy(input=predict, label=label))

    # step1: 引入CPU分布式训练策略
    if args.strategy == "sync":
        strategy = DistributedStrategyFactory.create_sync_strategy()
    elif args.strategy == "half_async":
        strategy = DistributedStrategyFactory.create_half_async_strategy()
    elif args.strategy == "async":
        strategy = DistributedStrategyFactory.create_async_strategy()
    else:
        strategy = DistributedStrategyFactory.create_geo_strategy(update_frequency=400)

    # step2: 定义节点角色
    role = role_maker.PaddleCloudRoleMaker()
    fleet.init(role)

    # step3: 分布式训练program构建
    optimizer = fluid.optimizer.SGD(learning_rate)  # 以SGD优化器为例
    optimizer = fleet.distributed_optimizer(optimizer, strategy)
    optimizer.minimize(loss)

    exe = fluid.Executor(fluid.CPUPlace())
    # step4.1: 启动参数服务器节点（Server）
    if fleet.is_server():
        fleet.init_server()
        fleet.run_server()

    # step4.2: 启动训练节点（Trainer）
    elif fleet.is_worker():
        fleet.init_worker()
        exe.run(fleet.startup_program)
        dataset = fluid.DatasetFactory().create_dataset()
        dataset.set_use_var([data, label])
        dataset.set_pipe_command("cat")
        dataset.set_batch_size(16)
        dataset.set_thread(2)
        dataset.set_filelist(sorted(os.path.join(args.data, f) for f in os.listdir(args.data)))
        for _ in range(args.epochs):
            exe.train_from_dataset(
                program=fleet.main_program,
                dataset=dataset,
                fetch_list=[loss],
                fetch_info=["loss"],
                print_period=5,
            )
        fleet.stop_worker()


if __name__ == "__main__":
    main()
