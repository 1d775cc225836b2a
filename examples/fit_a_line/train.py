"""Seed 001's linear regression on UCI housing, trained in one process.

The model and loop are the seed's, with only the imports changed (`import fleetgraph as paddle`,
`import fleetgraph.fluid as fluid`). `--save DIR` also writes the programs as JSON (for
`fleetgraph inspect` / `transpile`) and the trained model for inference.
"""

import argparse
import os
import random
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import fleetgraph as paddle  # noqa: E402
import fleetgraph.fluid as fluid  # noqa: E402
from fleetgraph.ir import save_program  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__)
parser.add_argument("--epochs", type=int, default=30)
parser.add_argument("--batch_size", type=int, default=8)
parser.add_argument("--seed", type=int, default=90)
parser.add_argument("--save", metavar="DIR", help="write main.json, startup.json and the inference model here")
args = parser.parse_args()

train_reader = paddle.batch(
    paddle.reader.shuffle(paddle.dataset.uci_housing.train(), buf_size=500), batch_size=args.batch_size
)


def train():
    random.seed(args.seed)  # paddle.reader.shuffle draws from Python's random
    fluid.default_main_program().random_seed = args.seed
    fluid.default_startup_program().random_seed = args.seed
    y = fluid.layers.data(name="y", shape=[1], dtype="float32")
    x = fluid.layers.data(name="x", shape=[13], dtype="float32")
    y_predict = fluid.layers.fc(input=x, size=1, act=None)

    loss = fluid.layers.square_error_cost(input=y_predict, label=y)
    avg_loss = fluid.layers.mean(loss)
    opt = fluid.optimizer.SGD(learning_rate=0.001)
    opt.minimize(avg_loss)

    place = fluid.CPUPlace()
    feeder = fluid.DataFeeder(place=place, feed_list=[x, y])
    exe = fluid.Executor(place)
    exe.run(fluid.default_startup_program())

    epoch_losses = []
    for epoch in range(args.epochs):
        losses = []
        for batch_id, batch_data in enumerate(train_reader()):
            (avg_loss_value,) = exe.run(
                fluid.default_main_program(), feed=feeder.feed(batch_data), fetch_list=[avg_loss]
            )
            losses.append(avg_loss_value[0])
            if (batch_id + 1) % 10 == 0 and epoch % 5 == 0:
                print("Epoch: {0}, Batch: {1}, loss: {2}".format(epoch, batch_id, avg_loss_value[0]))
        epoch_losses.append(sum(losses) / len(losses))
    print(f"mean loss of the first epoch {epoch_losses[0]:.3f}, of the last {epoch_losses[-1]:.3f}")

    if args.save:
        os.makedirs(args.save, exist_ok=True)
        save_program(fluid.default_main_program(), os.path.join(args.save, "main.json"))
        save_program(fluid.default_startup_program(), os.path.join(args.save, "startup.json"))
        fluid.io.save_inference_model(os.path.join(args.save, "inference"), ["x"], [y_predict], exe)
        print(f"saved programs and inference model to {args.save}")
    exe.close()


train()
