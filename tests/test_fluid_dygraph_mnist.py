"""Paddle 1.8.5's test_imperative_mnist.py in small: the MNIST network of fluid.dygraph classes
(Conv2D + Pool2D twice, Linear with softmax) trained with SGD in imperative mode and, built from the
same classes, as a static program: same seed, same initial parameters, same losses and parameters
after every step; the traced layer gives the dygraph outputs."""

from __future__ import annotations

import numpy as np
from dygraph_helpers import fresh_mode_and_names  # noqa: F401  (autouse)

import fleetgraph.fluid as fluid
from fleetgraph.ir import unique_name

dygraph = fluid.dygraph
SEED, STEPS, BATCH = 90, 4, 8


class SimpleImgConvPool(dygraph.Layer):
    def __init__(self, num_channels, num_filters, filter_size, pool_size, pool_stride, act=None):
        super().__init__()
        self._conv2d = dygraph.Conv2D(num_channels, num_filters, filter_size, act=act)
        self._pool2d = dygraph.Pool2D(pool_size, "max", pool_stride)

    def forward(self, inputs):
        return self._pool2d(self._conv2d(inputs))


class MNIST(dygraph.Layer):
    def __init__(self):
        super().__init__()
        self._conv_pool_1 = SimpleImgConvPool(1, 4, 5, 2, 2, act="relu")
        self._conv_pool_2 = SimpleImgConvPool(4, 8, 5, 2, 2, act="relu")
        self.pool_2_shape = 8 * 4 * 4
        scale = (2.0 / (self.pool_2_shape**2 * 10)) ** 0.5
        init = fluid.ParamAttr(initializer=fluid.initializer.NormalInitializer(loc=0.0, scale=scale))
        self._fc = dygraph.Linear(self.pool_2_shape, 10, param_attr=init, act="softmax")

    def forward(self, inputs):
        x = self._conv_pool_2(self._conv_pool_1(inputs))
        return self._fc(fluid.layers.reshape(x, shape=[-1, self.pool_2_shape]))


def _batches():
    rng = np.random.default_rng(1)
    for _ in range(STEPS):
        yield rng.uniform(-1, 1, (BATCH, 1, 28, 28)).astype("float32"), rng.integers(0, 10, (BATCH, 1))


def _dygraph_run():
    losses, outs = [], []
    with dygraph.guard():
        fluid.default_startup_program().random_seed = SEED
        fluid.default_main_program().random_seed = SEED
        mnist = MNIST()
        sgd = fluid.optimizer.SGD(learning_rate=1e-3, parameter_list=mnist.parameters())
        init = {p.name: p.numpy() for p in mnist.parameters()}
        for x, y in _batches():
            img = dygraph.to_variable(x)
            cost, traced = dygraph.TracedLayer.trace(mnist, inputs=[img])
            outs.append((cost.numpy(), traced([x])[0]))
            avg_loss = fluid.layers.mean(fluid.layers.cross_entropy(cost, dygraph.to_variable(y)))
            losses.append(float(avg_loss))
            avg_loss.backward()
            sgd.minimize(avg_loss)
            mnist.clear_gradients()
        return init, losses, {p.name: p.numpy() for p in mnist.parameters()}, outs


def _static_run():
    main, startup = fluid.Program(), fluid.Program()
    main.random_seed = startup.random_seed = SEED
    with fluid.program_guard(main, startup), unique_name.guard():
        mnist = MNIST()
        img = fluid.data("pixel", [None, 1, 28, 28])
        label = fluid.data("label", [None, 1], "int64")
        avg_loss = fluid.layers.mean(fluid.layers.cross_entropy(mnist(img), label))
        fluid.optimizer.SGD(learning_rate=1e-3).minimize(avg_loss)
    names = [p.name for p in mnist.parameters()]
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        init = dict(zip(names, exe.run(startup, fetch_list=names)))
        losses = [float(exe.run(main, feed={"pixel": x, "label": y}, fetch_list=[avg_loss])[0]) for x, y in _batches()]
    return init, losses, {name: np.asarray(scope.vars[name]) for name in names}


def test_mnist_trains_alike_in_imperative_mode_and_as_a_static_program():
    dy_init, dy_losses, dy_final, outs = _dygraph_run()
    st_init, st_losses, st_final = _static_run()
    assert sorted(dy_init) == sorted(st_init)
    for name, value in dy_init.items():
        np.testing.assert_array_equal(value, st_init[name], err_msg=name)
    np.testing.assert_allclose(dy_losses, st_losses, rtol=1e-5)
    for eager, static in outs:
        np.testing.assert_allclose(static, eager, rtol=1e-5, atol=1e-6)
    for name, value in dy_final.items():
        np.testing.assert_allclose(value, st_final[name], rtol=1e-4, atol=1e-6, err_msg=name)
