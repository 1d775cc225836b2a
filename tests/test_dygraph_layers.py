"""paddle.nn.Layer and the layer classes in dynamic mode: parameters and sublayers, train/eval,
state dicts, hooks, containers, sparse embeddings, and DataLoader batches as Tensors."""

from __future__ import annotations

import numpy as np
import pytest
from dygraph_helpers import fresh_mode_and_names  # noqa: F401  (autouse)

import fleetgraph as paddle
import fleetgraph.nn as nn


class Block(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 4)
        self.bn = nn.BatchNorm2D(4)
        self.scale = self.create_parameter([4], default_initializer=paddle.nn.initializer.Constant(2.0))
        self.register_buffer("steps", paddle.to_tensor(np.zeros([1], "int64")))

    def forward(self, x):
        return self.fc(x) * self.scale


class Net(nn.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.body = Block()
        self.heads = nn.LayerList([nn.Linear(4, 2), nn.Linear(4, 1)])

    def forward(self, x):
        h = self.body(x)
        return [head(h) for head in self.heads]


def test_parameters_and_sublayers_are_listed_by_structured_name():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == [
        "body.scale",
        "body.fc.weight",
        "body.fc.bias",
        "body.bn.weight",
        "body.bn.bias",
        "body.bn._mean",
        "body.bn._variance",
        "heads.0.weight",
        "heads.0.bias",
        "heads.1.weight",
        "heads.1.bias",
    ]
    assert [type(s).__name__ for s in net.sublayers()] == [
        "Block",
        "Linear",
        "BatchNorm2D",
        "LayerList",
        "Linear",
        "Linear",
    ]
    assert net.body.fc.weight.name == "linear_0.w_0" and net.body.fc.weight.shape == [3, 4]
    assert not net.body.bn._mean.trainable and net.body.bn._mean.stop_gradient
    np.testing.assert_array_equal(net.body.scale.numpy(), [2.0] * 4)


def test_state_dict_round_trips_into_a_fresh_model():
    paddle.seed(1)
    a = Net()
    paddle.seed(2)
    b = Net()
    state = a.state_dict()
    assert "body.steps" in state and "body.fc.weight" in state
    missing, unexpected = b.set_state_dict(state)
    assert missing == [] and unexpected == []
    x = paddle.to_tensor(np.ones((2, 3), "float32"))
    for ya, yb in zip(a(x), b(x)):
        np.testing.assert_array_equal(ya.numpy(), yb.numpy())


def test_set_state_dict_checks_shapes():
    net = Net()
    with pytest.raises(paddle.FleetgraphError, match="expected shape \\[3, 4\\], got \\[4, 3\\]"):
        net.set_state_dict({"body.fc.weight": np.zeros((4, 3), "float32")})


def test_eval_uses_running_statistics_and_train_updates_them():
    bn = nn.BatchNorm2D(2)
    x = paddle.to_tensor(np.arange(16, dtype="float32").reshape(2, 2, 2, 2))
    bn.train()
    y = bn(x).numpy()
    mean = x.numpy().mean(axis=(0, 2, 3))
    np.testing.assert_allclose(bn._mean.numpy(), 0.1 * mean, rtol=1e-6)  # momentum 0.9 from 0
    np.testing.assert_allclose(y.mean(axis=(0, 2, 3)), [0, 0], atol=1e-5)
    bn.eval()
    assert not bn.training
    running = bn._mean.numpy().copy()
    y_eval = bn(x).numpy()
    np.testing.assert_array_equal(bn._mean.numpy(), running)
    want = (x.numpy() - running[None, :, None, None]) / np.sqrt(bn._variance.numpy()[None, :, None, None] + 1e-5)
    np.testing.assert_allclose(y_eval, want, rtol=1e-5, atol=1e-5)


def test_dropout_drops_in_train_and_passes_through_in_eval():
    drop = nn.Dropout(0.5)
    x = paddle.to_tensor(np.ones((100, 100), "float32"))
    y = drop(x).numpy()
    assert set(np.unique(y)) <= {0.0, 2.0} and 0.4 < (y == 0).mean() < 0.6
    drop.eval()
    np.testing.assert_array_equal(drop(x).numpy(), x.numpy())


def test_forward_hooks_see_and_replace_inputs_and_outputs():
    fc = nn.Linear(2, 2, bias_attr=False)
    seen = []
    pre = fc.register_forward_pre_hook(lambda layer, inputs: (inputs[0] * 2.0,))
    post = fc.register_forward_post_hook(lambda layer, inputs, out: seen.append(out.numpy()) or out + 1.0)
    x = paddle.to_tensor(np.ones((1, 2), "float32"))
    y = fc(x).numpy()
    w = fc.weight.numpy()
    np.testing.assert_allclose(seen[0], 2 * np.ones((1, 2)) @ w, rtol=1e-6)
    np.testing.assert_allclose(y, seen[0] + 1.0, rtol=1e-6)
    pre.remove(), post.remove()
    np.testing.assert_allclose(fc(x).numpy(), np.ones((1, 2)) @ w, rtol=1e-6)


def test_sequential_runs_its_layers_in_order():
    seq = nn.Sequential(nn.Linear(3, 5), nn.ReLU(), nn.Linear(5, 2))
    x = paddle.to_tensor(np.ones((4, 3), "float32"))
    h = np.maximum(x.numpy() @ seq[0].weight.numpy() + seq[0].bias.numpy(), 0)
    want = h @ seq[2].weight.numpy() + seq[2].bias.numpy()
    np.testing.assert_allclose(seq(x).numpy(), want, rtol=1e-5)
    assert len(seq) == 3 and len(seq.parameters()) == 4


def test_sparse_embedding_gradient_holds_the_looked_up_rows_and_sgd_updates_only_them():
    emb = nn.Embedding(10, 3, sparse=True)
    before = emb.weight.numpy().copy()
    ids = paddle.to_tensor(np.array([[1], [4], [1]], "int64"))
    paddle.sum(emb(ids)).backward()
    grad = emb.weight._grad
    assert type(grad).__name__ == "SelectedRows"
    dense = emb.weight.grad.numpy()
    np.testing.assert_array_equal(dense[1], [2.0] * 3)
    np.testing.assert_array_equal(dense[4], [1.0] * 3)
    paddle.optimizer.SGD(learning_rate=0.5, parameters=emb.parameters()).step()
    after = emb.weight.numpy()
    changed = np.flatnonzero(np.any(after != before, axis=1)).tolist()
    assert changed == [1, 4]
    np.testing.assert_allclose(after[1], before[1] - 1.0, rtol=1e-6)


def test_optimizer_minimize_on_a_tensor_steps_and_clear_grad_empties():
    fc = nn.Linear(2, 1)
    opt = paddle.optimizer.SGD(learning_rate=0.1, parameters=fc.parameters())
    w0 = fc.weight.numpy().copy()
    x = paddle.to_tensor(np.array([[1.0, 2.0]], "float32"))
    loss = paddle.mean(fc(x))
    loss.backward()
    opt.minimize(loss)
    np.testing.assert_allclose(fc.weight.numpy(), w0 - 0.1 * np.array([[1.0], [2.0]]), rtol=1e-6)
    opt.clear_grad()
    assert fc.weight.grad is None


def test_optimizer_without_parameters_in_dynamic_mode_says_so():
    opt = paddle.optimizer.SGD(learning_rate=0.1)
    with pytest.raises(paddle.FleetgraphError, match="parameters=model.parameters"):
        opt.step()


def test_accuracy_runs_eagerly():
    out = paddle.to_tensor(np.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7]], "float32"))
    label = paddle.to_tensor(np.array([[1], [1], [1]], "int64"))
    np.testing.assert_allclose(float(paddle.metric.accuracy(input=out, label=label, k=1)), 2 / 3, rtol=1e-6)
    np.testing.assert_allclose(float(paddle.metric.accuracy(input=out, label=label, k=2)), 1.0)


def test_data_loader_from_generator_yields_tensors_in_dynamic_mode():
    def samples():
        for i in range(5):
            yield [(np.full(3, i, "float32"), np.array([i], "int64")), (np.full(3, -i, "float32"), np.array([0]))]

    loader = paddle.io.DataLoader.from_generator(capacity=4, return_list=True)
    loader.set_sample_list_generator(samples)
    batches = list(loader())
    assert len(batches) == 5
    img, label = batches[2]
    assert isinstance(img, paddle.Tensor) and img.shape == [2, 3] and label.shape == [2, 1]
    np.testing.assert_array_equal(img.numpy(), [[2, 2, 2], [-2, -2, -2]])
    assert img.stop_gradient


def test_layers_built_after_enable_static_build_a_program():
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        fc = nn.Linear(3, 2)
        x = paddle.static.data("x", [None, 3], "float32")
        y = fc(x)
    assert not isinstance(fc.weight, paddle.Tensor) and fc.weight.name in main.global_block().vars
    assert [op.type for op in main.global_block().ops] == ["matmul", "elementwise_add"]
    assert y.shape == (-1, 2)


@pytest.mark.parametrize(("layers", "params"), [(18, 11_689_512), (50, 25_557_032)])
def test_the_dygraph_resnet_example_has_the_published_size(layers, params):
    """examples/resnet/resnet_dygraph.py: trainable parameters of ResNet-18 and -50 at 1000 classes."""
    import importlib.util
    import os

    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", "resnet")
    spec = importlib.util.spec_from_file_location("resnet_dygraph_example", os.path.join(path, "resnet_dygraph.py"))
    resnet = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(resnet)
    model = resnet.ResNet(layers=layers, class_dim=1000)
    assert sum(int(np.prod(p.shape)) for p in model.parameters() if p.trainable) == params


def test_data_parallel_is_a_layer_that_passes_calls_and_state_through():
    fc = nn.Linear(2, 3)
    dp = paddle.DataParallel(fc)  # one trainer: no ring, nothing to average
    assert isinstance(dp, nn.Layer)
    x = paddle.to_tensor(np.ones((1, 2), "float32"))
    np.testing.assert_array_equal(dp(x).numpy(), fc(x).numpy())
    assert [n for n, _ in dp.named_parameters()] == ["weight", "bias"]
    assert list(dp.state_dict()) == ["weight", "bias"]
    dp.eval()
    assert not fc.training
    assert dp.weight is fc.weight


def test_batchnorm_is_test_starts_in_eval_mode_and_train_still_switches_it():
    """Paddle's BatchNorm(is_test=True) starts with training False (running statistics used, not
    updated); train() makes it train, and a call no longer switches training off again (before,
    forward overwrote self.training on every call)."""
    x = paddle.to_tensor(np.arange(12, dtype="float32").reshape(4, 3))
    bn = nn.BatchNorm(3, is_test=True)
    assert not bn.training
    np.testing.assert_allclose(bn(x).numpy(), x.numpy() / np.sqrt(1 + 1e-5), rtol=1e-6)
    np.testing.assert_array_equal(bn._mean.numpy(), [0, 0, 0])
    bn.train()
    out = bn(x)
    assert bn.training
    np.testing.assert_allclose(out.numpy()[0], [-1.3416402] * 3, rtol=1e-5)  # Paddle 3.3.1's output
    np.testing.assert_allclose(bn._mean.numpy(), [0.45, 0.55, 0.65], rtol=1e-5)


def test_batchnorm_names_its_running_statistics_as_asked():
    bn = nn.BatchNorm(3, moving_mean_name="my_mean", moving_variance_name="my_var")
    assert (bn._mean.name, bn._variance.name) == ("my_mean", "my_var")
    plain = nn.BatchNorm(3)
    assert plain._mean.name.endswith(".w_1") and plain._variance.name.endswith(".w_2")  # Paddle's names
