"""Paddle 1.8's dygraph MNIST: a LeNet-style `fluid.dygraph.Layer` trained eagerly, saved and loaded.

    python train.py [--steps 200] [--batch_size 64] [--lr 0.003] [--save_path mnist_dygraph]

Two convolution-and-pooling blocks (`fluid.dygraph.Conv2D` of 20 and then 50 filters of 5x5,
relu, `fluid.dygraph.Pool2D` 2x2 max) with a `fluid.dygraph.BatchNorm` between them and a softmax
`fluid.dygraph.Linear` of 10, trained by Adam inside `fluid.dygraph.guard()` on
`paddle.dataset.mnist` (synthetic digits when the real files are absent) through a
`fluid.io.DataLoader`. It prints the test accuracy, saves the model's and the optimizer's state
dicts with `fluid.dygraph.save_dygraph`, loads them with `load_dygraph` into a fresh model and
optimizer, prints the fresh model's test accuracy, which is the same, and how far apart one more
Adam step of each leaves the two models' parameters: not at all.
"""

import argparse
import itertools
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import fleetgraph as paddle  # noqa: E402
import fleetgraph.fluid as fluid  # noqa: E402
from fleetgraph.fluid.dygraph import BatchNorm, Conv2D, Linear, Pool2D  # noqa: E402
from fleetgraph.fluid.optimizer import AdamOptimizer  # noqa: E402

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--steps", type=int, default=200)
parser.add_argument("--batch_size", type=int, default=64)
parser.add_argument("--lr", type=float, default=0.003, help="Paddle's example uses 0.001")
parser.add_argument("--save_path", default="mnist_dygraph")
args = parser.parse_args()


class SimpleImgConvPool(fluid.dygraph.Layer):
    def __init__(self, num_channels, num_filters, filter_size, pool_size, pool_stride, act=None):
        super().__init__()
        self._conv2d = Conv2D(num_channels=num_channels, num_filters=num_filters, filter_size=filter_size, act=act)
        self._pool2d = Pool2D(pool_size=pool_size, pool_type="max", pool_stride=pool_stride)

    def forward(self, inputs):
        return self._pool2d(self._conv2d(inputs))


class MNIST(fluid.dygraph.Layer):
    def __init__(self):
        super().__init__()
        self._simple_img_conv_pool_1 = SimpleImgConvPool(1, 20, 5, 2, 2, act="relu")
        self._batch_norm = BatchNorm(20)
        self._simple_img_conv_pool_2 = SimpleImgConvPool(20, 50, 5, 2, 2, act="relu")
        self.pool_2_shape = 50 * 4 * 4
        scale = (2.0 / (self.pool_2_shape**2 * 10)) ** 0.5
        self._fc = Linear(
            self.pool_2_shape,
            10,
            param_attr=fluid.param_attr.ParamAttr(
                initializer=fluid.initializer.NormalInitializer(loc=0.0, scale=scale)
            ),
            act="softmax",
        )

    def forward(self, inputs, label=None):
        x = self._batch_norm(self._simple_img_conv_pool_1(inputs))
        x = self._simple_img_conv_pool_2(x)
        x = self._fc(fluid.layers.reshape(x, shape=[-1, self.pool_2_shape]))
        if label is not None:
            return x, fluid.layers.accuracy(input=x, label=label)
        return x


def reader_decorator(reader):
    def __reader__():
        for image, label in reader():
            yield np.array(image).astype("float32").reshape(1, 28, 28), np.array(label).astype("int64").reshape(1)

    return __reader__


def loader(reader, place):
    data_loader = fluid.io.DataLoader.from_generator(capacity=10, return_list=True)
    data_loader.set_sample_list_generator(
        paddle.batch(reader_decorator(reader), batch_size=args.batch_size), places=place
    )
    return data_loader


def test_mnist(test_loader, model):
    """The accuracy over the whole test set (the last batch weighed by its size)."""
    accs, sizes = [], []
    for img, label in test_loader():
        _, acc = model(img, label)
        accs.append(float(acc.numpy()))
        sizes.append(label.shape[0])
    return np.average(accs, weights=sizes)


place = fluid.CPUPlace()
with fluid.dygraph.guard(place):
    fluid.default_startup_program().random_seed = fluid.default_main_program().random_seed = 33
    mnist = MNIST()
    adam = AdamOptimizer(learning_rate=args.lr, parameter_list=mnist.parameters())
    train_loader = loader(paddle.dataset.mnist.train(), place)
    test_loader = loader(paddle.dataset.mnist.test(), place)
    batches = itertools.chain.from_iterable(train_loader() for _ in itertools.count())
    for batch_id, (img, label) in enumerate(itertools.islice(batches, args.steps)):
        label.stop_gradient = True
        cost, acc = mnist(img, label)
        avg_loss = fluid.layers.mean(fluid.layers.cross_entropy(cost, label))
        avg_loss.backward()
        adam.minimize(avg_loss)
        mnist.clear_gradients()
        if batch_id % 50 == 0:
            print(f"step {batch_id}: loss {float(avg_loss.numpy()):.4f}, acc {float(acc.numpy()):.3f}")
    mnist.eval()
    print(f"trained model: test accuracy {test_mnist(test_loader, mnist):.4f}")
    fluid.dygraph.save_dygraph(mnist.state_dict(), args.save_path)
    fluid.dygraph.save_dygraph(adam.state_dict(), args.save_path)

    model_dict, opti_dict = fluid.dygraph.load_dygraph(args.save_path)
    # a new process's names, which the optimizer's state goes by (its accumulators, made at the
    # first step, are named after the parameters)
    with fluid.unique_name.guard():
        loaded = MNIST()
        loaded.set_dict(model_dict)
        loaded_adam = AdamOptimizer(learning_rate=args.lr, parameter_list=loaded.parameters())
        loaded_adam.set_dict(opti_dict)
        loaded.eval()
        print(f"loaded model: test accuracy {test_mnist(test_loader, loaded):.4f}")

        img, label = next(iter(train_loader()))
        for model, optimizer in ((mnist, adam), (loaded, loaded_adam)):
            model.train()
            avg_loss = fluid.layers.mean(fluid.layers.cross_entropy(model(img), label))
            avg_loss.backward()
            optimizer.minimize(avg_loss)
    gap = max(np.abs(a.numpy() - b.numpy()).max() for a, b in zip(mnist.parameters(), loaded.parameters()))
    print(f"one more Adam step from the saved and from the loaded state: parameters apart by at most {gap:.3g}")
