"""Paddle's book chapter recognize_digits: the LeNet-style convolutional network on MNIST, fluid 1.x.

    python train.py [--epochs 1] [--batch_size 64] [--lr 0.003] [--save_dirname recognize_digits.inference.model]

Two `fluid.nets.simple_img_conv_pool` blocks (20 then 50 filters of 5x5, each max-pooled 2x2,
batch norm between them) and a softmax layer of 10, trained with Adam on `paddle.dataset.mnist`
(synthetic digits when the real files are absent) through a `fluid.DataFeeder`. After each epoch
it prints the test set's loss and accuracy and saves an inference model; then it loads that model
into a fresh scope and classifies the test set with it.
"""

import argparse
import os
import random
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import fleetgraph as paddle  # noqa: E402
import fleetgraph.fluid as fluid  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--epochs", type=int, default=1)
parser.add_argument("--batch_size", type=int, default=64)
parser.add_argument("--lr", type=float, default=0.003, help="the book's is 0.001")
parser.add_argument("--save_dirname", default="recognize_digits.inference.model")
args = parser.parse_args()


def convolutional_neural_network(img):
    conv_pool_1 = fluid.nets.simple_img_conv_pool(
        input=img, filter_size=5, num_filters=20, pool_size=2, pool_stride=2, act="relu"
    )
    conv_pool_1 = fluid.layers.batch_norm(conv_pool_1)
    conv_pool_2 = fluid.nets.simple_img_conv_pool(
        input=conv_pool_1, filter_size=5, num_filters=50, pool_size=2, pool_stride=2, act="relu"
    )
    return fluid.layers.fc(input=conv_pool_2, size=10, act="softmax")


def train(place):
    main_program, startup_program = fluid.default_main_program(), fluid.default_startup_program()
    main_program.random_seed = startup_program.random_seed = 90
    random.seed(90)  # paddle.reader.shuffle's order
    img = fluid.data(name="img", shape=[None, 1, 28, 28], dtype="float32")
    label = fluid.data(name="label", shape=[None, 1], dtype="int64")
    prediction = convolutional_neural_network(img)
    avg_loss = fluid.layers.mean(fluid.layers.cross_entropy(input=prediction, label=label))
    acc = fluid.layers.accuracy(input=prediction, label=label)
    test_program = main_program.clone(for_test=True)
    fluid.optimizer.Adam(learning_rate=args.lr).minimize(avg_loss)

    exe = fluid.Executor(place)
    feeder = fluid.DataFeeder(feed_list=[img, label], place=place)
    train_reader = paddle.batch(paddle.reader.shuffle(paddle.dataset.mnist.train(), buf_size=500), args.batch_size)
    test_reader = paddle.batch(paddle.dataset.mnist.test(), batch_size=args.batch_size)
    exe.run(startup_program)
    for epoch_id in range(args.epochs):
        for step_id, data in enumerate(train_reader()):
            loss_v, acc_v = exe.run(main_program, feed=feeder.feed(data), fetch_list=[avg_loss, acc])
            if step_id % 20 == 0:
                print(f"Pass {epoch_id}, Batch {step_id}, Cost {float(loss_v[0]):.4f}, Acc {float(acc_v[0]):.3f}")
        losses, accs, sizes = [], [], []
        for data in test_reader():
            loss_v, acc_v = exe.run(test_program, feed=feeder.feed(data), fetch_list=[avg_loss, acc])
            losses.append(float(loss_v[0]))
            accs.append(float(acc_v[0]))
            sizes.append(len(data))
        test_loss, test_acc = np.average(losses, weights=sizes), np.average(accs, weights=sizes)
        print(f"Test with Epoch {epoch_id}, avg_cost: {test_loss:.4f}, acc: {test_acc:.4f}")
        fluid.io.save_inference_model(args.save_dirname, ["img"], [prediction], exe)


def infer(place):
    """The saved model, loaded into a scope of its own, classifies every test digit."""
    exe = fluid.Executor(place)
    with fluid.scope_guard(fluid.core.Scope()):
        program, feed_names, fetch_targets = fluid.io.load_inference_model(args.save_dirname, exe)
        images, labels = zip(*paddle.dataset.mnist.test()())
        tensor_img = np.stack(images).reshape(-1, 1, 28, 28).astype("float32")
        (probs,) = exe.run(program, feed={feed_names[0]: tensor_img}, fetch_list=fetch_targets)
    print(f"Inference result of the first test image: {int(np.argmax(probs[0]))} (label {labels[0]})")
    print(f"loaded inference model: test accuracy {np.mean(np.argmax(probs, axis=1) == np.array(labels)):.4f}")


place = fluid.CPUPlace()
train(place)
infer(place)
