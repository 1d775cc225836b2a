"""A click-through-rate model in dynamic mode (Paddle 2.0's default): an embedding of each of 26
categorical slots and 13 scaled counts, concatenated into a ReLU network with a softmax over
click / no click, trained with Adam on a paddle.io.Dataset of generated Criteo click logs that a
paddle.io.DataLoader batches in 2 worker processes; paddle.metric.Auc scores the held-out logs.

The logs come from examples/ctr_dnn's generator (its ClickModel: a learnable click signal in four
counts and in eight categorical columns) and are parsed by that example's reader, so both CTR
examples see the same features."""

import argparse
import os
import sys

import numpy as np

import fleetgraph as paddle
import fleetgraph.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "ctr_dnn"))
from criteo_reader import CriteoDataset  # noqa: E402  (examples/ctr_dnn's reader)
from generate_data import DENSE, SPARSE, ClickModel  # noqa: E402  (examples/ctr_dnn's generator)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--train_lines", type=int, default=20000)
    parser.add_argument("--test_lines", type=int, default=2000)
    parser.add_argument("--count_scale", type=float, default=3.0, help="generate_data.py's knob: stronger counts")
    parser.add_argument("--sparse_feature_dim", type=int, default=10001, help="ids each categorical value hashes into")
    parser.add_argument("--embedding_size", type=int, default=10)
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--batch_size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=0.002)
    parser.add_argument("--num_workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


class ClickLogs(paddle.io.Dataset):
    """Generated click logs as (dense [13] float32, sparse ids [26] int64, label [1] int64) samples."""

    def __init__(self, lines, sparse_feature_dim: int):
        parse = CriteoDataset(sparse_feature_dim).generate_sample
        samples = [dict(next(parse(line)())) for line in lines]
        self.dense = np.array([s["dense_input"] for s in samples], dtype="float32")
        self.sparse = np.array([[s[f"C{i}"][0] for i in range(1, SPARSE + 1)] for s in samples], dtype="int64")
        self.labels = np.array([s["label"] for s in samples], dtype="int64")

    def __getitem__(self, idx):
        return self.dense[idx], self.sparse[idx], self.labels[idx]

    def __len__(self):
        return len(self.labels)


class CTRNet(paddle.nn.Layer):
    def __init__(self, sparse_feature_dim: int, embedding_size: int, hidden=(128, 64)):
        super().__init__()
        self.embedding = paddle.nn.Embedding(sparse_feature_dim, embedding_size)
        sizes = [DENSE + SPARSE * embedding_size, *hidden]
        layers = []
        for fan_in, fan_out in zip(sizes, sizes[1:]):
            layers += [paddle.nn.Linear(fan_in, fan_out), paddle.nn.ReLU()]
        self.dnn = paddle.nn.Sequential(*layers, paddle.nn.Linear(sizes[-1], 2))

    def forward(self, dense, sparse):
        slots = paddle.flatten(self.embedding(sparse), start_axis=1)  # [batch, 26 * embedding_size]
        return self.dnn(paddle.concat([dense, slots], axis=1))


def auc_on(model, loader) -> float:
    model.eval()
    auc = paddle.metric.Auc()
    with paddle.no_grad():
        for dense, sparse, labels in loader:
            auc.update(F.softmax(model(dense, sparse)), labels)
    model.train()
    return float(auc.accumulate())


def main(argv=None):
    args = parse_args(argv)
    paddle.seed(args.seed)
    np.random.seed(args.seed)
    clicks, rng = ClickModel(args.seed, args.count_scale), np.random.default_rng(args.seed + 1)
    train = ClickLogs(clicks.lines(rng, args.train_lines), args.sparse_feature_dim)
    test = ClickLogs(clicks.lines(rng, args.test_lines), args.sparse_feature_dim)
    train_loader = paddle.io.DataLoader(train, batch_size=args.batch_size, shuffle=True, num_workers=args.num_workers)
    test_loader = paddle.io.DataLoader(test, batch_size=512, num_workers=args.num_workers)

    model = CTRNet(args.sparse_feature_dim, args.embedding_size)
    optimizer = paddle.optimizer.Adam(learning_rate=args.lr, parameters=model.parameters())
    for epoch in range(args.epochs):
        for step, (dense, sparse, labels) in enumerate(train_loader):
            loss = F.cross_entropy(model(dense, sparse), labels)
            loss.backward()
            optimizer.step()
            optimizer.clear_grad()
            if step % 20 == 0:
                print(f"epoch {epoch} step {step} loss {float(loss.numpy()):.4f}")
        print(f"epoch {epoch} test AUC {auc_on(model, test_loader):.4f}")


if __name__ == "__main__":
    main()
