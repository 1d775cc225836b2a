"""One trainer of a dynamic-mode data-parallel job: argv = out.npz steps api ("fleet", "dataparallel" or
"bfloat16": paddle.DataParallel over a model decorated at O2 with bfloat16, trained under auto_cast).

Each rank starts from its own seed (rank 0's parameters must win the broadcast), trains an MLP with a
sparse embedding on its half of each batch with Momentum, and saves its parameters."""

import sys

import numpy as np

import fleetgraph as paddle
import fleetgraph.nn as nn
import fleetgraph.nn.functional as F
from fleetgraph.distributed import fleet


class Net(nn.Layer):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(20, 4, sparse=True)
        self.fc1 = nn.Linear(8, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, ids, x):
        e = paddle.reshape(self.emb(ids), [-1, 4])
        h = F.relu(self.fc1(paddle.concat([e, x], axis=1)))
        return self.fc2(h)


def batches(steps, size=8):
    rng = np.random.default_rng(3)
    for _ in range(steps):
        ids = rng.integers(0, 20, (size, 1)).astype("int64")
        x = rng.normal(size=(size, 4)).astype("float32")
        y = rng.integers(0, 3, (size, 1)).astype("int64")
        yield ids, x, y


def train(model, opt, steps, rank=0, nranks=1, bfloat16=False):
    for ids, x, y in batches(steps):
        part = slice(rank * len(x) // nranks, (rank + 1) * len(x) // nranks)
        with paddle.amp.auto_cast(enable=bfloat16, level="O2", dtype="bfloat16"):
            out = model(paddle.to_tensor(ids[part]), paddle.to_tensor(x[part])).astype("float32")
        loss = paddle.mean(F.cross_entropy(out, paddle.to_tensor(y[part])))
        loss.backward()
        opt.minimize(loss)
        model.clear_gradients()
    return loss


def make(seed, bfloat16=False):
    paddle.seed(seed)
    model = Net()
    opt = paddle.optimizer.Momentum(
        learning_rate=0.1, momentum=0.9, parameters=model.parameters(), weight_decay=paddle.regularizer.L2Decay(1e-3)
    )
    if bfloat16:  # decorated before DataParallel wraps it, as Paddle requires
        model, opt = paddle.amp.decorate(model, opt, level="O2", dtype="bfloat16")
    return model, opt


if __name__ == "__main__":
    out, steps, api = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    env = paddle.distributed.ParallelEnv()
    if api == "fleet":
        fleet.init(is_collective=True)
        model, opt = make(seed=1 + env.rank)
        opt = fleet.distributed_optimizer(opt)
        model = fleet.distributed_model(model)
    else:
        paddle.distributed.init_parallel_env()
        model, opt = make(seed=1 + env.rank, bfloat16=api == "bfloat16")
        model = paddle.DataParallel(model)
    loss = train(model, opt, steps, env.rank, env.world_size, bfloat16=api == "bfloat16")
    # float32 holds every bfloat16 exactly, and np.load cannot read bfloat16 back
    np.savez(out, **{p.name: p.numpy().astype("float32") for p in model.parameters()})
    print(f"rank {env.rank} loss {float(loss):.6f}")
