"""paddle.Model in static mode, alone or under the launcher: fit over one dataset (--batch rows per
trainer, unshuffled), evaluate, save an inference model (trainer 0); writes OUT/rank<r>.npz with
each step's loss, the final parameters and the evaluated accuracy.

    hapi_model_static.py OUT --batch B
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from test_hapi_model import Pairs, X, Y  # noqa: E402

import fleetgraph as paddle  # noqa: E402
from fleetgraph import nn  # noqa: E402


class Losses(paddle.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.values = []

    def on_train_batch_end(self, step, logs=None):
        self.values.append(float(np.asarray(logs["loss"][0]).reshape(-1)[0]))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--batch", type=int, required=True)
    args = p.parse_args()

    paddle.enable_static()
    paddle.seed(1)
    net = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
    model = paddle.Model(net, inputs=[paddle.static.InputSpec([None, 4], "float32", "x")],
                         labels=[paddle.static.InputSpec([None, 1], "int64", "label")])  # fmt: skip
    model.prepare(paddle.optimizer.Adam(0.05, parameters=net.parameters()), nn.CrossEntropyLoss(),
                  paddle.metric.Accuracy())  # fmt: skip
    losses = Losses()
    model.fit(Pairs(X, Y), epochs=2, batch_size=args.batch, shuffle=False, verbose=0, callbacks=[losses])
    acc = model.evaluate(Pairs(X, Y), batch_size=args.batch, verbose=0)["acc"]
    model.save(os.path.join(args.out, "infer"), training=False)
    rank = paddle.distributed.get_rank()
    params = model._adapter.state_dict()
    np.savez(os.path.join(args.out, f"rank{rank}.npz"), losses=np.array(losses.values), acc=acc, **params)
    print(f"rank {rank}: {len(losses.values)} steps, acc {acc:.4f}", flush=True)


if __name__ == "__main__":
    main()
