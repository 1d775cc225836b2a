"""Paddle's book chapter word2vec, its N-gram language model on `paddle.dataset.imikolov`, fluid 1.x.

    python train.py [--train_batches 400] [--test_batches 50] [--lr 0.1] [--save_dirname word2vec.inference.model]

Four context words, each through one shared embedding table (`shared_w`, `is_sparse=True`), are
concatenated into a sigmoid layer of 256 and a softmax over the dictionary that scores the fifth
word; the cost is the cross entropy, minimized by Adagrad with L2 decay. It trains on the first
batches of 100 of the training 5-grams, printing the test cost every 100 steps, then saves an
inference model, loads it into a fresh scope and predicts the next word of test 5-grams with it.
"""

import argparse
import itertools
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import fleetgraph as paddle  # noqa: E402
import fleetgraph.fluid as fluid  # noqa: E402

EMBED_SIZE = 32
HIDDEN_SIZE = 256
N = 5
BATCH_SIZE = 100

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--train_batches", type=int, default=400)
parser.add_argument("--test_batches", type=int, default=50)
parser.add_argument("--lr", type=float, default=0.1, help="the book's is 3e-3, for 100 passes over PTB")
parser.add_argument("--save_dirname", default="word2vec.inference.model")
args = parser.parse_args()

word_dict = paddle.dataset.imikolov.build_dict()
dict_size = len(word_dict)
feed_order = ["firstw", "secondw", "thirdw", "fourthw", "nextw"]


def inference_program(words, is_sparse):
    embeds = [
        fluid.layers.embedding(
            input=word, size=[dict_size, EMBED_SIZE], dtype="float32", is_sparse=is_sparse, param_attr="shared_w"
        )
        for word in words
    ]
    concat_embed = fluid.layers.concat(input=embeds, axis=1)
    hidden1 = fluid.layers.fc(input=concat_embed, size=HIDDEN_SIZE, act="sigmoid")
    return fluid.layers.fc(input=hidden1, size=dict_size, act="softmax")


def train(place, is_sparse=True):
    main_program, startup_program = fluid.default_main_program(), fluid.default_startup_program()
    main_program.random_seed = startup_program.random_seed = 90
    words = [fluid.data(name=name, shape=[None, 1], dtype="int64") for name in feed_order]
    predict_word = inference_program(words[:4], is_sparse)
    avg_cost = fluid.layers.mean(fluid.layers.cross_entropy(input=predict_word, label=words[4]))
    test_program = main_program.clone(for_test=True)
    fluid.optimizer.AdagradOptimizer(
        learning_rate=args.lr, regularization=fluid.regularizer.L2DecayRegularizer(8e-4)
    ).minimize(avg_cost)

    exe = fluid.Executor(place)
    feeder = fluid.DataFeeder(feed_list=words, place=place)
    train_reader = paddle.batch(paddle.dataset.imikolov.train(word_dict, N), BATCH_SIZE)
    test_reader = paddle.batch(paddle.dataset.imikolov.test(word_dict, N), BATCH_SIZE)

    def train_test():
        costs = [
            exe.run(test_program, feed=feeder.feed(data), fetch_list=[avg_cost])[0][0]
            for data in itertools.islice(test_reader(), args.test_batches)
        ]
        return float(np.mean(costs))

    exe.run(startup_program)
    for step, data in enumerate(itertools.islice(train_reader(), args.train_batches)):
        if step % 100 == 0:
            print(f"Step {step}: Average Cost {train_test():.4f}")
        exe.run(main_program, feed=feeder.feed(data), fetch_list=[avg_cost])
    print(f"Step {args.train_batches}: Average Cost {train_test():.4f}")
    fluid.io.save_inference_model(args.save_dirname, feed_order[:4], [predict_word], exe)


def infer(place):
    """The saved model, loaded into a scope of its own, names the next word of test 5-grams."""
    exe = fluid.Executor(place)
    id_to_word = {i: w for w, i in word_dict.items()}
    grams = np.array(list(itertools.islice(paddle.dataset.imikolov.test(word_dict, N)(), args.test_batches * 100)))
    with fluid.scope_guard(fluid.core.Scope()):
        program, feed_names, fetch_targets = fluid.io.load_inference_model(args.save_dirname, exe)
        first = [fluid.create_lod_tensor(grams[:1, i : i + 1], [[1]], place) for i in range(4)]
        (probs,) = exe.run(program, feed=dict(zip(feed_names, first)), fetch_list=fetch_targets, return_numpy=False)
        most_possible_word_index = int(np.argmax(np.array(probs)))
        context = " ".join(id_to_word[int(i)] for i in grams[0, :4])
        print(f"after '{context}' the most likely word is '{id_to_word[most_possible_word_index]}'")
        feed = {name: grams[:, i : i + 1] for i, name in enumerate(feed_names)}
        (probs,) = exe.run(program, feed=feed, fetch_list=fetch_targets)
    right = np.argmax(probs, axis=1) == grams[:, 4]
    print(f"loaded inference model: next-word accuracy {right.mean():.4f} on {len(grams)} test 5-grams")


place = fluid.CPUPlace()
train(place)
infer(place)
