"""paddle.set_default_dtype / get_default_dtype as Paddle 2.0.0's: the values and errors of its
test_default_dtype.py, and the places Paddle reads the default to make parameters (paddle.nn layers,
recurrent states, the transformer mask, beam scores). tests/conftest.py sets the default back after
every test."""

from __future__ import annotations

import numpy as np
import pytest

import fleetgraph as paddle
import fleetgraph.fluid as fluid


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


def test_recurrent_states_and_the_transformer_mask_take_the_default(float64):
    cell = paddle.nn.GRUCell(2, 3)
    assert cell.get_initial_states(paddle.to_tensor(np.ones((4, 2)))).dtype == "float64"
    decoder = paddle.nn.BeamSearchDecoder(cell, 0, 1, 2, embedding_fn=paddle.nn.Embedding(5, 2))
    _, states, _ = decoder.initialize(paddle.to_tensor(np.ones((4, 3))))
    assert states.log_probs.dtype == "float64"  # Paddle's beam scores follow a float64 default
    mask = paddle.nn.Transformer(8, 2, 1, 1, 16).generate_square_subsequent_mask(3)
    assert mask.dtype == "float64"
