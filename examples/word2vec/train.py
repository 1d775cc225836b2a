"""Paddle's book word2vec (an N-gram language model), trained with SGD:

    python train.py [--data data] [--epochs 10] [--batch 100] [--lr 20] [--loss nce|hsigmoid] [--save PARAMS.npz]
    python -m fleetgraph.distributed.launch --server_num 2 --worker_num 2 train.py [--mode sync|async]

Four context words, each through one shared embedding table (`is_sparse=True`), are concatenated
into a sigmoid layer whose output scores the fifth word: by noise-contrastive estimation against
sampled words (`fluid.layers.nce`, as PaddleRec's word2vec) or by the hierarchical sigmoid over a
binary tree of the vocabulary (`--loss hsigmoid`). In one process it prints each epoch's mean loss,
and with nce the share of the test set's fifth words that the model ranks first among the whole
vocabulary. Under the launcher (the role comes from the environment) each worker trains on its
half of every batch, synchronously by default.
"""

import argparse
import collections
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import fleetgraph as paddle  # noqa: E402
import fleetgraph.distributed.fleet as fleet  # noqa: E402
import fleetgraph.fluid as fluid  # noqa: E402

N = 5  # four context words and the word to predict
EMBED_SIZE = 32
HIDDEN_SIZE = 256

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--data", default="data")
parser.add_argument("--epochs", type=int, default=10)
parser.add_argument("--batch", type=int, default=100)
parser.add_argument("--lr", type=float, default=20.0)
parser.add_argument("--loss", choices=("nce", "hsigmoid"), default="nce")
parser.add_argument("--neg", type=int, default=10, help="nce's negative samples per word")
parser.add_argument("--mode", choices=("sync", "async"), default="sync")
parser.add_argument("--seed", type=int, default=7)
parser.add_argument("--save", default="", help="write the trained parameters to this .npz (worker 0 under a launcher)")
args = parser.parse_args()


def build_dict(path: str, min_word_freq: int = 0) -> dict[str, int]:
    """imikolov's dictionary: words by falling frequency (then by spelling), then <unk>."""
    counts = collections.Counter(w for line in open(path) for w in ["<s>", *line.split(), "<e>"])
    words = sorted((w for w, c in counts.items() if c > min_word_freq), key=lambda w: (-counts[w], w))
    return {**{w: i for i, w in enumerate(words)}, "<unk>": len(words)}


def ngrams(path: str, word_idx: dict[str, int]) -> np.ndarray:
    """imikolov's NGRAM samples: every N consecutive ids of each sentence framed by <s> and <e>."""
    unk = word_idx["<unk>"]
    rows = []
    for line in open(path):
        ids = [word_idx.get(w, unk) for w in ["<s>", *line.split(), "<e>"]]
        rows.extend(ids[i : i + N] for i in range(len(ids) - N + 1))
    return np.array(rows, dtype=np.int64)


word_idx = build_dict(os.path.join(args.data, "train.txt"))
dict_size = len(word_idx)
train, test = (ngrams(os.path.join(args.data, f), word_idx) for f in ("train.txt", "test.txt"))

fluid.default_main_program().random_seed = fluid.default_startup_program().random_seed = args.seed
names = ["firstw", "secondw", "thirdw", "fourthw", "nextw"]
words = [fluid.data(name=name, shape=[None, 1], dtype="int64") for name in names]
embeds = [
    fluid.layers.embedding(input=w, size=[dict_size, EMBED_SIZE], is_sparse=True, param_attr="shared_w")
    for w in words[:-1]
]
hidden = fluid.layers.fc(input=fluid.layers.concat(embeds, axis=1), size=HIDDEN_SIZE, act="sigmoid")
if args.loss == "nce":
    cost = fluid.layers.nce(
        hidden, words[-1], dict_size, param_attr="nce_w", bias_attr="nce_b", num_neg_samples=args.neg
    )
else:
    cost = fluid.layers.hsigmoid(hidden, words[-1], dict_size, param_attr="hs_w", bias_attr="hs_b")
loss = fluid.layers.mean(cost)
test_program = fluid.default_main_program().clone(for_test=True)
if args.loss == "nce":  # the scores nce estimates, of every word: hidden · nce_w + nce_b
    with fluid.program_guard(test_program):
        block = test_program.global_block()
        bias = fluid.layers.transpose(block.var("nce_b"), [1, 0])
        scores = fluid.layers.elementwise_add(
            fluid.layers.matmul(block.var(hidden.name), block.var("nce_w"), transpose_y=True), bias
        )

distributed = any(os.environ.get(k) for k in ("TRAINING_ROLE", "PADDLE_TRAINING_ROLE"))
optimizer = fluid.optimizer.SGD(learning_rate=args.lr)
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

exe = fluid.Executor(fluid.CPUPlace())
exe.run(fluid.default_startup_program())
worker, workers = (fleet.worker_index(), fleet.worker_num()) if distributed else (0, 1)
if distributed:
    fleet.init_worker()
trainer = fleet.main_program if distributed else fluid.default_main_program()
who = f"worker {worker}" if distributed else "local"
paddle.seed(args.seed + worker)  # nce's negatives: the same each run, other on each worker


def feed(rows: np.ndarray) -> dict[str, np.ndarray]:
    return {name: rows[:, i : i + 1] for i, name in enumerate(names)}


print(f"{who}: {len(train)} training and {len(test)} test 5-grams, {dict_size} words", flush=True)
for epoch in range(args.epochs):
    losses = []
    for start in range(0, len(train) - args.batch + 1, args.batch):
        batch = train[start : start + args.batch]
        mine = batch[worker * len(batch) // workers : (worker + 1) * len(batch) // workers]
        losses.append(float(exe.run(trainer, feed=feed(mine), fetch_list=[loss])[0]))
    print(f"{who} epoch {epoch}: mean loss {np.mean(losses):.4f}", flush=True)

if distributed:  # the table lives on the pservers: bring the whole model back into this worker
    fleet.barrier_worker()
    if worker == 0:
        fleet.save_persistables(exe, "model")
    fleet.barrier_worker()
    fluid.io.load_persistables(exe, "model", fluid.default_main_program())
if args.save and worker == 0:
    scope = fluid.global_scope()
    params = fluid.default_main_program().all_parameters()
    np.savez(args.save, **{p.name: np.array(scope.find_var(p.name).get_tensor()) for p in params})
if args.loss == "nce":
    got = exe.run(test_program, feed=feed(test), fetch_list=[scores])[0]
    print(f"{who} next-word accuracy on the test set: {np.mean(got.argmax(axis=1) == test[:, -1]):.3f}", flush=True)
if distributed:
    fleet.stop_worker()
