"""One trainer of a data-parallel job whose model normalizes with SyncBatchNorm: argv = out_dir,
where rank r writes rank<r>.npz.

Rank r trains on rows [r*B/n, (r+1)*B/n) of each global batch of B, first in dynamic mode
(paddle.DataParallel over the model with its BatchNorms converted by convert_sync_batchnorm), then in
static mode (a fleet collective program built with SyncBatchNorm layers), and saves each part's
losses, state (running mean and variance included) and an eval-mode output on the whole batch.
`dynamic(sync=False)` and `static(sync=False)` with one rank are the test's oracle: BatchNorm on the
whole batch."""

import os
import sys

import numpy as np

import fleetgraph as paddle
import fleetgraph.nn as nn
import fleetgraph.nn.functional as F
from fleetgraph.distributed import fleet
from fleetgraph.ir import unique_name

BATCH, STEPS = 8, 3


class Net(nn.Layer):
    """conv -> BN (NCHW) -> conv -> BN (NHWC) -> fc -> BN (a 2-D input) -> fc."""

    def __init__(self, norm, norm_flat):
        super().__init__()
        self.conv = nn.Conv2D(3, 4, 3, padding=1)
        self.bn = norm(4)
        self.conv_last = nn.Conv2D(4, 4, 1, data_format="NHWC")
        self.bn_last = norm(4, data_format="NHWC")
        self.fc = nn.Linear(4 * 4 * 4, 6)
        self.bn_flat = norm_flat(6, data_format="NC")
        self.out = nn.Linear(6, 1)

    def forward(self, x):
        h = F.relu(self.bn(self.conv(x)))
        h = F.relu(self.bn_last(self.conv_last(paddle.transpose(h, [0, 2, 3, 1]))))
        h = F.relu(self.bn_flat(self.fc(paddle.flatten(h, 1))))
        return self.out(h)


def batches():
    rng = np.random.default_rng(5)
    for _ in range(STEPS + 1):  # the last one for the eval-mode output
        x = rng.normal(1.0, 2.0, size=(BATCH, 3, 4, 4)).astype("float32")
        yield x, rng.normal(size=(BATCH, 1)).astype("float32")


def shard(array, rank, nranks):
    return array[rank * BATCH // nranks : (rank + 1) * BATCH // nranks]


def dynamic(rank=0, nranks=1, sync=False):
    """Parameters are drawn from streams named after them: the guard gives the job and the test's
    process (which made layers before) the same names, hence the same initial weights."""
    paddle.seed(1)
    with unique_name.guard():
        model = Net(nn.BatchNorm2D, nn.BatchNorm1D)
    if sync:
        model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    opt = paddle.optimizer.Momentum(0.05, momentum=0.9, parameters=model.parameters())
    trained = paddle.DataParallel(model) if nranks > 1 else model
    *train, (x_eval, _) = batches()
    losses = []
    for x, y in train:
        loss = F.mse_loss(trained(paddle.to_tensor(shard(x, rank, nranks))), paddle.to_tensor(shard(y, rank, nranks)))
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(float(loss))
    model.eval()
    state = {f"state/{k}": v.numpy() for k, v in model.state_dict().items()}
    return {"losses": np.array(losses), "eval": model(paddle.to_tensor(x_eval)).numpy(), **state}


def static(rank=0, nranks=1, sync=False, replicas=1):
    """`replicas` > 1: one process's CPU replicas, BatchNorm layers and BuildStrategy.sync_batch_norm
    = `sync`, the whole batch fed (CompiledProgram splits it)."""
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    main.random_seed = startup.random_seed = 1
    with paddle.static.program_guard(main, startup), unique_name.guard():
        x = paddle.static.data("x", [-1, 3, 4, 4], "float32")
        y = paddle.static.data("y", [-1, 1], "float32")
        sync_layers = sync and replicas == 1
        model = Net(nn.SyncBatchNorm, nn.SyncBatchNorm) if sync_layers else Net(nn.BatchNorm2D, nn.BatchNorm1D)
        pred = model(x)
        loss = F.mse_loss(pred, y)
        test_program = main.clone(for_test=True)
        opt = paddle.optimizer.Momentum(0.05, momentum=0.9)
        if nranks > 1:
            fleet.init(is_collective=True)
            opt = fleet.distributed_optimizer(opt)
        opt.minimize(loss)
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    program = main
    if replicas > 1:
        strategy = paddle.static.BuildStrategy()
        strategy.sync_batch_norm = sync
        program = paddle.static.CompiledProgram(main).with_data_parallel(
            loss.name, build_strategy=strategy, places=paddle.static.cpu_places(replicas)
        )
    *train, (x_eval, _) = batches()
    losses = []
    for xs, ys in train:
        feed = {"x": shard(xs, rank, nranks), "y": shard(ys, rank, nranks)}
        (value,) = exe.run(program, feed=feed, fetch_list=[loss])
        losses.append(float(np.mean(value)))  # the mean of the replicas' losses
    (out,) = exe.run(test_program, feed={"x": x_eval, "y": np.zeros((BATCH, 1), "float32")}, fetch_list=[pred])
    scope = paddle.static.global_scope()
    state = {f"state/{k}": np.array(scope.vars[v.name]) for k, v in model.state_dict().items()}
    return {"losses": np.array(losses), "eval": out, **state}


if __name__ == "__main__":
    env = paddle.distributed.ParallelEnv()
    paddle.distributed.init_parallel_env()
    parts = {"dynamic": dynamic(env.rank, env.world_size, sync=True)}
    parts["static"] = static(env.rank, env.world_size, sync=True)
    np.savez(
        os.path.join(sys.argv[1], f"rank{env.rank}.npz"),
        **{f"{part}/{k}": v for part, got in parts.items() for k, v in got.items()},
    )
    print(f"rank {env.rank}: losses {parts['dynamic']['losses']} {parts['static']['losses']}")
