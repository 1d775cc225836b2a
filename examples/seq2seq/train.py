"""Trains the seq2seq model with teacher forcing, then translates the test set with beam search.

    python train.py [--data data] [--epochs 12] [--batch 64] [--lr 0.005] [--save PARAMS.npz]
    python -m fleetgraph.distributed.launch --server_num 2 --worker_num 2 train.py [--mode sync|async]

In one process it prints each epoch's mean loss and, at the end, the share of test sentences
whose best beam is exactly the translation. Under the launcher (the role comes from the
environment) each worker trains on its share of every batch's sentences, synchronously by default.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from model import exact_matches, feed, infer_program, read_pairs, train_program  # noqa: E402

import fleetgraph as paddle  # noqa: E402
import fleetgraph.distributed.fleet as fleet  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--data", default="data")
parser.add_argument("--epochs", type=int, default=12)
parser.add_argument("--batch", type=int, default=64)
parser.add_argument("--lr", type=float, default=0.005)
parser.add_argument("--vocab", type=int, default=40, help="as generate_data.py --vocab")
parser.add_argument("--mode", choices=("sync", "async"), default="sync")
parser.add_argument("--seed", type=int, default=7)
parser.add_argument("--save", default="", help="write the trained parameters to this .npz (worker 0 under a launcher)")
args = parser.parse_args()

paddle.enable_static()
distributed = any(os.environ.get(k) for k in ("TRAINING_ROLE", "PADDLE_TRAINING_ROLE"))
main, startup, loss = train_program(args.vocab, args.seed)
optimizer = paddle.optimizer.Adam(learning_rate=args.lr)
with paddle.static.program_guard(main, startup):
    if distributed:
        fleet.init(is_collective=False)
        strategy = fleet.DistributedStrategy()
        strategy.a_sync = args.mode == "async"
        optimizer = fleet.distributed_optimizer(optimizer, strategy)
    optimizer.minimize(loss)

if distributed and fleet.is_server():
    fleet.init_server()
    fleet.run_server()
    sys.exit(0)

exe = paddle.static.Executor(paddle.CPUPlace())
exe.run(startup)
worker, workers = (fleet.worker_index(), fleet.worker_num()) if distributed else (0, 1)
if distributed:
    fleet.init_worker()
train = read_pairs(os.path.join(args.data, "train.txt"))
trainer = fleet.main_program if distributed else main
who = f"worker {worker}" if distributed else "local"
for epoch in range(args.epochs):
    losses = []
    for start in range(0, len(train) - args.batch + 1, args.batch):
        batch = train[start : start + args.batch]
        mine = batch[worker * len(batch) // workers : (worker + 1) * len(batch) // workers]
        losses.append(float(exe.run(trainer, feed=feed(mine), fetch_list=[loss])[0]))
    print(f"{who} epoch {epoch}: mean loss {np.mean(losses):.4f}", flush=True)

if args.save and worker == 0:
    scope = paddle.static.global_scope()
    np.savez(args.save, **{p.name: np.array(scope.find_var(p.name).get_tensor()) for p in main.all_parameters()})

test = read_pairs(os.path.join(args.data, "test.txt"))
infer, ids = infer_program(args.vocab)
got = exe.run(infer, feed={k: v for k, v in feed(test).items() if k in ("src", "src_len")}, fetch_list=[ids])[0]
print(f"{who} exact translations on the test set: {exact_matches(got, test):.3f}", flush=True)
if distributed:
    fleet.stop_worker()
