"""A 784-512-512-10 MLP on MNIST digits (synthetic digits when the real files are absent), Paddle 2.x style."""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import fleetgraph as paddle  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--batch_size", type=int, default=128)
parser.add_argument("--lr", type=float, default=0.001)
args = parser.parse_args()

paddle.enable_static()
paddle.seed(2024)
image = paddle.static.data(name="image", shape=[None, 784], dtype="float32")
label = paddle.static.data(name="label", shape=[None, 1], dtype="int64")
h = paddle.static.nn.fc(image, size=512, activation="relu")
h = paddle.static.nn.fc(h, size=512, activation="relu")
logits = paddle.static.nn.fc(h, size=10)
loss = paddle.nn.functional.cross_entropy(logits, label)
acc = paddle.metric.accuracy(input=logits, label=label, k=1)
test_program = paddle.static.default_main_program().clone(for_test=True)
paddle.optimizer.Adam(learning_rate=args.lr).minimize(loss)

exe = paddle.static.Executor(paddle.CPUPlace())
exe.run(paddle.static.default_startup_program())


def batches(reader):
    for data in paddle.batch(reader, args.batch_size)():
        yield {
            "image": np.stack([d[0] for d in data]).astype("float32"),
            "label": np.array([[d[1]] for d in data], dtype="int64"),
        }


for epoch in range(args.epochs):
    for step, feed in enumerate(batches(paddle.reader.shuffle(paddle.dataset.mnist.train(), 10000))):
        loss_v, acc_v = exe.run(feed=feed, fetch_list=[loss, acc])
        if step % 20 == 0:
            print(f"epoch {epoch} step {step}: loss {loss_v[0]:.4f} acc {acc_v[0]:.3f}")
    accs = [exe.run(test_program, feed=f, fetch_list=[acc])[0][0] for f in batches(paddle.dataset.mnist.test())]
    print(f"epoch {epoch}: test accuracy {np.mean(accs):.4f}")
