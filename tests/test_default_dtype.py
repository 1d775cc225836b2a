"""paddle.set_default_dtype / get_default_dtype as Paddle 2.0.0's: the values and errors of its
test_default_dtype.py, and every place Paddle reads the default (parameters of paddle.nn layers,
Python floats given to to_tensor, the random draws without a dtype, paddle.static.data without a
dtype, the optimizer's learning rate), in dynamic and static mode. tests/conftest.py sets the
default back after every test."""

from __future__ import annotations

import numpy as np
import pytest

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import Program, program_guard, unique_name


@pytest.fixture
def float64():
    paddle.disable_static()
    paddle.set_default_dtype("float64")


# -- Paddle's test_default_dtype.py -------------------------------------------------------------------


def test_the_default_is_float32_and_takes_names_and_numpy_types():
    assert paddle.get_default_dtype() == "float32"
    for given, name in [
        ("float64", "float64"), ("float32", "float32"), ("float16", "float16"),
        (np.float64, "float64"), (np.float32, "float32"), (np.float16, "float16"),
        (np.dtype("float64"), "float64"), (paddle.float64, "float64"),
    ]:  # fmt: skip
        paddle.set_default_dtype(given)
        assert paddle.get_default_dtype() == name


@pytest.mark.parametrize(
    "given, received",
    [
        ("int32", "int32"),
        (np.int32, "int32"),
        ("int64", "int64"),
        (np.int64, "int64"),
        ("double", "double"),
        (float, "float"),
        (None, "None"),
    ],  # fmt: skip
)
def test_a_non_float_default_is_a_type_error_in_paddles_words(given, received):
    with pytest.raises(TypeError) as caught:
        paddle.set_default_dtype(given)
    assert str(caught.value) == f"set_default_dtype only supports [float16, float32, float64] , but received {received}"
    assert paddle.get_default_dtype() == "float32"


# -- dynamic mode ------------------------------------------------------------------------------------


def test_nn_layers_make_parameters_of_the_default_dtype(float64):
    layers = [
        paddle.nn.Linear(3, 2), paddle.nn.Conv2D(1, 2, 3), paddle.nn.Embedding(5, 3), paddle.nn.BatchNorm2D(2),
        paddle.nn.LayerNorm(3), paddle.nn.PReLU(), paddle.nn.SimpleRNNCell(2, 3), paddle.nn.Bilinear(2, 2, 3),
    ]  # fmt: skip
    assert {p.dtype for layer in layers for p in layer.parameters()} == {"float64"}
    assert "dtype=float64" in repr(layers[0])
    made = paddle.create_parameter([2], "float32")  # paddle.create_parameter's dtype is required: kept
    assert made.dtype == "float32"


def test_fluid_1x_layers_keep_their_dtype_argument(float64):
    with fluid.dygraph.guard():
        assert fluid.dygraph.Linear(2, 3).weight.dtype == "float32"
        assert fluid.dygraph.Linear(2, 3, dtype="float64").weight.dtype == "float64"
        norm = paddle.nn.BatchNorm(2, dtype="float64")
        assert {p.dtype for p in norm.parameters()} == {"float64"}
        assert fluid.dygraph.BatchNorm(2, dtype="float16").weight.dtype == "float32"  # as Paddle's


def test_to_tensor_gives_python_floats_the_default_dtype(float64):
    assert paddle.to_tensor(1.2).dtype == "float64"
    np.testing.assert_array_equal(paddle.to_tensor(1.2).numpy(), [1.2])
    assert paddle.to_tensor([[1.5, 2.0]]).dtype == "float64"
    assert paddle.to_tensor(1).dtype == "int64"  # ints and NumPy arrays keep theirs
    assert paddle.to_tensor(np.array([1.2], "float16")).dtype == "float16"
    assert paddle.to_tensor(np.array([1.2], "float32")).dtype == "float32"
    assert paddle.to_tensor(1, dtype="float32").dtype == "float32"
    paddle.set_default_dtype("float32")
    assert paddle.to_tensor(1.2).dtype == "float32"


@pytest.mark.parametrize("default", ["float32", "float64"])
def test_random_draws_and_empty_without_a_dtype_take_the_default(default):
    paddle.disable_static()
    paddle.set_default_dtype(default)
    draws = [
        paddle.rand([2, 3]), paddle.randn([2, 3]), paddle.uniform([2, 3]), paddle.normal(shape=[2, 3]),
        paddle.standard_normal([2, 3]), paddle.empty([2, 3]),
    ]  # fmt: skip
    assert [d.dtype for d in draws] == [default] * 6
    assert paddle.zeros([2]).dtype == paddle.ones([2]).dtype == paddle.full([2], 1.0).dtype == "float32"
    assert paddle.rand([2], dtype="float32").dtype == "float32"


def test_a_float16_default_is_refused_by_the_draws_in_paddles_words():
    paddle.disable_static()
    paddle.set_default_dtype("float16")
    gaussian = (
        "gaussian/standard_normal/randn/normal only supports [float32, float64], but the default dtype is float16"
    )
    uniform = "uniform/rand only supports [float32, float64], but the default dtype is float16"
    for draw, message in [(paddle.randn, gaussian), (paddle.standard_normal, gaussian), (paddle.rand, uniform),
                          (paddle.uniform, uniform)]:  # fmt: skip
        with pytest.raises(TypeError) as caught:
            draw([2, 3])
        assert str(caught.value) == message
    assert paddle.rand([2], dtype="float64").dtype == "float64"


def test_a_float16_default_makes_float16_parameters_that_numpy_computes():
    """Accepted, as Paddle accepts it: an op computes in float16 where NumPy does; BatchNorm keeps
    float32 statistics, as Paddle's (which sets the default to float32 to get them; here the default
    stays float16)."""
    paddle.disable_static()
    paddle.set_default_dtype("float16")
    linear = paddle.nn.Linear(3, 2, bias_attr=False)
    x = paddle.to_tensor([[1.0, 2.0, 3.0]])
    out = linear(x)
    assert linear.weight.dtype == x.dtype == out.dtype == "float16"
    np.testing.assert_allclose(out.numpy(), np.array([[1, 2, 3]], "float16") @ linear.weight.numpy(), rtol=1e-3)
    assert paddle.nn.BatchNorm1D(2).weight.dtype == "float32"
    assert paddle.get_default_dtype() == "float16"


def _mlp_reference(x, y, w1, b1, w2, b2, lr, steps):
    """NumPy float64: the losses and final weights of SGD on mean((tanh(x w1 + b1) w2 + b2 - y)^2)."""
    losses = []
    for _ in range(steps):
        h = np.tanh(x @ w1 + b1)
        err = h @ w2 + b2 - y
        losses.append(np.mean(err**2))
        d_out = 2 * err / err.size
        d_h = d_out @ w2.T * (1 - h**2)
        w2, b2 = w2 - lr * h.T @ d_out, b2 - lr * d_out.sum(0)
        w1, b1 = w1 - lr * x.T @ d_h, b1 - lr * d_h.sum(0)
    return losses, (w1, b1, w2, b2)


DATA = np.random.default_rng(0).normal(size=(8, 4)), np.random.default_rng(1).normal(size=(8, 1))


def test_a_small_model_trains_in_float64_as_numpy(float64):
    model = paddle.nn.Sequential(paddle.nn.Linear(4, 3), paddle.nn.Tanh(), paddle.nn.Linear(3, 1))
    start = [p.numpy() for p in model.parameters()]
    opt = paddle.optimizer.SGD(0.1, parameters=model.parameters())
    x, y = paddle.to_tensor(DATA[0].tolist()), paddle.to_tensor(DATA[1].tolist())
    losses = []
    for _ in range(3):
        loss = paddle.mean((model(x) - y) ** 2)
        loss.backward()
        opt.step()
        opt.clear_grad()
        losses.append(loss.numpy().item())
    assert loss.dtype == "float64" and {p.dtype for p in model.parameters()} == {"float64"}
    want_losses, want = _mlp_reference(*DATA, *start, 0.1, 3)
    np.testing.assert_allclose(losses, want_losses, rtol=1e-12)
    for got, expected in zip(model.parameters(), want):
        np.testing.assert_allclose(got.numpy(), expected, rtol=1e-12, atol=1e-15)


def test_recurrent_states_and_the_transformer_mask_take_the_default(float64):
    cell = paddle.nn.GRUCell(2, 3)
    assert cell.get_initial_states(paddle.to_tensor(np.ones((4, 2)))).dtype == "float64"
    decoder = paddle.nn.BeamSearchDecoder(cell, 0, 1, 2, embedding_fn=paddle.nn.Embedding(5, 2))
    _, states, _ = decoder.initialize(paddle.to_tensor(np.ones((4, 3))))
    assert states.log_probs.dtype == "float64"  # Paddle's beam scores follow a float64 default
    mask = paddle.nn.Transformer(8, 2, 1, 1, 16).generate_square_subsequent_mask(3)
    assert mask.dtype == "float64"


def test_datasets_made_under_a_default_serve_it(float64):
    """Paddle's datasets take the default dtype when made (here from the synthetic stand-ins)."""
    features, price = paddle.text.UCIHousing(mode="test")[0]
    image, _ = paddle.vision.datasets.MNIST(mode="test", backend="cv2")[0]
    assert features.dtype == price.dtype == image.dtype == np.float64


# -- static mode -------------------------------------------------------------------------------------


def test_static_data_takes_the_default_only_without_a_dtype():
    """Paddle's test_data.py TestApiStaticDataError.test_fluid_dtype."""
    paddle.enable_static()
    with program_guard(Program(), Program()):
        assert paddle.static.data(name="x1", shape=[2, 25]).dtype == "float32"
        assert paddle.static.data(name="x2", shape=[2, 25], dtype="bool").dtype == "bool"
        paddle.set_default_dtype("float64")
        assert paddle.static.data(name="x3", shape=[2, 25]).dtype == "float64"
        assert paddle.static.data(name="x4", shape=[2, 25], dtype="float32").dtype == "float32"


def test_a_static_program_trains_in_float64_as_numpy(float64):
    """paddle.nn layers follow the default, static.nn.fc its input (as Paddle's), the learning rate
    the default; three SGD steps equal NumPy's float64 run."""
    paddle.enable_static()
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = paddle.static.data("x", [None, 4])
        y = paddle.static.data("y", [None, 1])
        hidden = paddle.nn.Linear(4, 3)
        out = paddle.static.nn.fc(paddle.tanh(hidden(x)), size=1)
        loss = paddle.mean(paddle.square(out - y))
        opt = paddle.optimizer.SGD(0.1)
        opt.minimize(loss)
        other = paddle.static.nn.fc(paddle.static.data("z", [None, 2], "float32"), size=1)
    params = main.global_block().all_parameters()
    assert {p.name: p.dtype for p in params if p.name.startswith("fc_1")} == {
        "fc_1.w_0": "float32",
        "fc_1.b_0": "float32",
    }
    assert other.dtype == "float32"
    assert {p.dtype for p in params if not p.name.startswith("fc_1")} == {"float64"}
    assert {v.dtype for v in main.global_block().vars.values() if v.name.startswith("learning_rate")} == {"float64"}
    exe = paddle.static.Executor(paddle.CPUPlace())
    scope = paddle.static.Scope()
    with paddle.static.scope_guard(scope):
        exe.run(startup)
        start = [
            np.array(scope.find_var(n).get_tensor()) for n in ("linear_0.w_0", "linear_0.b_0", "fc_0.w_0", "fc_0.b_0")
        ]
        feed = {"x": DATA[0], "y": DATA[1], "z": np.zeros((8, 2), "float32")}
        losses = [exe.run(main, feed=feed, fetch_list=[loss])[0].item() for _ in range(3)]
    want_losses, _ = _mlp_reference(*DATA, *start, 0.1, 3)
    np.testing.assert_allclose(losses, want_losses, rtol=1e-12)
