"""Seed 003 (FleetAPI, parameter-server mode), imports changed.

The seed's code blocks appear below in its order, word for word but for the imports. Where the
seed leaves something to its reader (`model()`, `fake_reader`, `place`, `exe`, `auc`, and the
values passed to UserDefinedRoleMaker, which it shows as constants for one example process), this
file supplies them; the role values come from SEED003_* environment variables so that several
processes can run the same script. Without them it takes the seed's other form,
`fleet.init(role_maker=None)`: the role comes from MPI (`mpirun -np 4 python seed003_fleet.py`).
The seed's one typo, a space after a line-continuation backslash, is removed.
"""

import os

import numpy as np

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.fluid.incubate.fleet.base.role_maker import Role, UserDefinedRoleMaker
from fleetgraph.fluid.incubate.fleet.parameter_server.distribute_transpiler import fleet
from fleetgraph.fluid.transpiler import DistributeTranspilerConfig

# -- what the seed leaves to its reader -------------------------------------------------------------
USER_DEFINED = "SEED003_ROLE" in os.environ
if USER_DEFINED:
    CURRENT_ID = int(os.environ["SEED003_ID"])
    ROLE = Role.SERVER if os.environ["SEED003_ROLE"] == "SERVER" else Role.WORKER
    WORKER_NUM = int(os.environ["SEED003_WORKERS"])
    SERVER_ENDPOINTS = os.environ["SEED003_SERVERS"].split(",")
place = fluid.CPUPlace()
exe = fluid.Executor(place)
fluid.default_main_program().random_seed = fluid.default_startup_program().random_seed = 3


def model():
    """A click predictor over 13 dense features: softmax over two classes, mean cross entropy, AUC."""
    global x, y, auc, auc_batch
    x = fluid.layers.data(name="x", shape=[13], dtype="float32")
    y = fluid.layers.data(name="y", shape=[1], dtype="int64")
    hidden = fluid.layers.fc(input=x, size=16, act="relu")
    predict = fluid.layers.fc(input=hidden, size=2, act="softmax")
    auc, auc_batch, _ = fluid.layers.auc(input=predict, label=y)
    return fluid.layers.mean(fluid.layers.cross_entropy(input=predict, label=y))


def fake_reader():
    """Samples whose label is whether their features sum above zero."""

    def reader():
        rng = np.random.default_rng(fleet.worker_index())
        for _ in range(240):
            features = rng.normal(size=13).astype("float32")
            yield features, int(features.sum() > 0)

    return reader


# -- the seed's code --------------------------------------------------------------------------------
if USER_DEFINED:
    role = UserDefinedRoleMaker(current_id=CURRENT_ID,
                     role=ROLE,
                     worker_num=WORKER_NUM,
                     server_endpoints=SERVER_ENDPOINTS)
    fleet.init(role_maker=role)
else:
    fleet.init(role_maker=None)

config = DistributeTranspilerConfig()
config.sync_mode = True

# build network
# ...
avg_cost = model()

optimizer = fluid.optimizer.Adam(learning_rate=0.001)
# 加入 fleet distributed_optimizer 加入分布式策略配置及多机优化
optimizer = fleet.distributed_optimizer(optimizer, config)
optimizer.minimize(avg_cost)

# 启动server
if fleet.is_server():
    fleet.init_server()
    fleet.run_server()

# 启动worker
if fleet.is_worker():
    # 初始化worker配置
    fleet.init_worker()

    feeder = fluid.DataFeeder(place=place, feed_list=[x, y])
    train_reader = paddle.batch(fake_reader(), batch_size=24)

    exe.run(fleet.startup_program)

    PASS_NUM = 10
    for pass_id in range(PASS_NUM):
        for batch_id, data in enumerate(train_reader()):
            avg_loss_value, auc_value, auc_batch_value = \
                exe.run(fleet.main_program, feed=feeder.feed(data), fetch_list=[avg_cost, auc, auc_batch])
            print("Pass %d, cost = %f, auc = %f, batch_auc = %f" % (pass_id, avg_loss_value, auc_value, auc_batch_value))
    # 通知server，当前节点训练结束
    fleet.stop_worker()
