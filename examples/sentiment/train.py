"""Paddle's book understand_sentiment, its LSTM network or its convolution network, trained with Adagrad:

    python train.py [--net lstm|conv] [--data data] [--epochs 5] [--batch 32] [--lr 0.05] [--epsilon 1e-6]
                    [--save PARAMS.npz]
    python -m fleetgraph.distributed.launch --server_num 2 --worker_num 2 train.py [--mode sync|async]

Each review is a LoD sequence of word ids; its words pass through an embedding table
(`is_sparse=True`), a fully connected layer, `fluid.layers.dynamic_lstm`, and a max
`sequence_pool` over time into a softmax over the two labels; with `--net conv` through
`fluid.nets.sequence_conv_pool` over windows of 3 and of 4 words (tanh, sqrt pooling) into the
softmax. In one process it prints each epoch's mean loss and accuracy, then saves the network
with `fluid.io.save_inference_model`, loads it back with `load_inference_model` and prints the
loaded model's accuracy on the test set and its prediction for the first test review. Under the launcher (the role comes from the environment)
each worker trains on its half of every batch, synchronously by default, and worker 0 saves and
loads the model the pservers trained.
"""

import argparse
import collections
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import fleetgraph.distributed.fleet as fleet  # noqa: E402
import fleetgraph.fluid as fluid  # noqa: E402

EMB_DIM = 32
HID_DIM = 32
CLASS_DIM = 2

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--data", default="data")
parser.add_argument("--epochs", type=int, default=5)
parser.add_argument("--batch", type=int, default=32)
parser.add_argument("--lr", type=float, default=0.05)
parser.add_argument("--epsilon", type=float, default=1e-6, help="Adagrad's, added to the root of the squares")
parser.add_argument("--net", choices=("lstm", "conv"), default="lstm")
parser.add_argument("--mode", choices=("sync", "async"), default="sync")
parser.add_argument("--seed", type=int, default=7)
parser.add_argument("--model_dir", default="sentiment.inference.model")
parser.add_argument("--save", default="", help="write the trained parameters to this .npz (worker 0 under a launcher)")
args = parser.parse_args()


def read(path: str) -> list[tuple[int, list[str]]]:
    with open(path) as f:
        return [(int(label), words.split()) for label, words in (line.rstrip("\n").split("\t") for line in f)]


def build_dict(reviews) -> dict[str, int]:
    """imdb's dictionary: the words by falling frequency (then by spelling), then <unk>."""
    counts = collections.Counter(w for _, words in reviews for w in words)
    words = sorted(counts, key=lambda w: (-counts[w], w))
    return {**{w: i for i, w in enumerate(words)}, "<unk>": len(words)}


def batch_feed(reviews, word_idx: dict[str, int], place) -> dict:
    """The reviews' word ids as one LoD tensor (a sequence a review) and their labels."""
    unk = word_idx["<unk>"]
    ids = [[word_idx.get(w, unk) for w in words] for _, words in reviews]
    flat = np.concatenate([np.array(r, dtype=np.int64) for r in ids]).reshape(-1, 1)
    labels = np.array([[label] for label, _ in reviews], dtype=np.int64)
    return {"words": fluid.create_lod_tensor(flat, [[len(r) for r in ids]], place), "label": labels}


train, test = (read(os.path.join(args.data, f)) for f in ("train.txt", "test.txt"))
word_idx = build_dict(train)
place = fluid.CPUPlace()

fluid.default_main_program().random_seed = fluid.default_startup_program().random_seed = args.seed
data = fluid.data(name="words", shape=[None, 1], dtype="int64", lod_level=1)
label = fluid.data(name="label", shape=[None, 1], dtype="int64")
emb = fluid.layers.embedding(input=data, size=[len(word_idx), EMB_DIM], is_sparse=True)
if args.net == "lstm":
    fc1 = fluid.layers.fc(input=emb, size=HID_DIM * 4)
    lstm1, _ = fluid.layers.dynamic_lstm(input=fc1, size=HID_DIM * 4)
    lstm_max = fluid.layers.sequence_pool(input=lstm1, pool_type="max")
    prediction = fluid.layers.fc(input=lstm_max, size=CLASS_DIM, act="softmax")
else:  # the book's convolution_net: windows of 3 and 4 words, each pooled over the review
    convs = [
        fluid.nets.sequence_conv_pool(input=emb, num_filters=HID_DIM, filter_size=size, act="tanh", pool_type="sqrt")
        for size in (3, 4)
    ]
    prediction = fluid.layers.fc(input=convs, size=CLASS_DIM, act="softmax")
loss = fluid.layers.mean(fluid.layers.cross_entropy(input=prediction, label=label))
accuracy = fluid.layers.accuracy(input=prediction, label=label)

distributed = any(os.environ.get(k) for k in ("TRAINING_ROLE", "PADDLE_TRAINING_ROLE"))
optimizer = fluid.optimizer.Adagrad(learning_rate=args.lr, epsilon=args.epsilon)
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

exe = fluid.Executor(place)
exe.run(fluid.default_startup_program())
worker, workers = (fleet.worker_index(), fleet.worker_num()) if distributed else (0, 1)
if distributed:
    fleet.init_worker()
trainer = fleet.main_program if distributed else fluid.default_main_program()
who = f"worker {worker}" if distributed else "local"
for epoch in range(args.epochs):
    losses, accuracies = [], []
    for start in range(0, len(train) - args.batch + 1, args.batch):
        batch = train[start : start + args.batch]
        mine = batch[worker * len(batch) // workers : (worker + 1) * len(batch) // workers]
        got = exe.run(trainer, feed=batch_feed(mine, word_idx, place), fetch_list=[loss, accuracy])
        losses.append(float(got[0]))
        accuracies.append(float(got[1]))
    print(f"{who} epoch {epoch}: mean loss {np.mean(losses):.4f}, accuracy {np.mean(accuracies):.3f}", flush=True)

if distributed:  # the table lives on the pservers: bring the whole model back into this worker
    fleet.barrier_worker()
    if worker == 0:
        fleet.save_persistables(exe, "model")
    fleet.barrier_worker()
    fluid.io.load_persistables(exe, "model", fluid.default_main_program())
if worker == 0:
    if args.save:
        scope = fluid.global_scope()
        params = fluid.default_main_program().all_parameters()
        np.savez(args.save, **{p.name: np.array(scope.find_var(p.name).get_tensor()) for p in params})
    fluid.io.save_inference_model(args.model_dir, ["words"], [prediction], exe, fluid.default_main_program())
    program, feed_names, fetch_targets = fluid.io.load_inference_model(args.model_dir, exe)
    probs = exe.run(
        program, feed={feed_names[0]: batch_feed(test, word_idx, place)["words"]}, fetch_list=fetch_targets
    )[0]
    right = np.mean(probs.argmax(axis=1) == np.array([label for label, _ in test]))
    print(f"{who} loaded inference model: test accuracy {right:.3f}", flush=True)
    print(f"{who} first test review (label {test[0][0]}): positive with probability {probs[0, 1]:.3f}", flush=True)
if distributed:
    fleet.stop_worker()
