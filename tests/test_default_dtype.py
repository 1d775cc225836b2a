"""paddle.set_default_dtype / get_default_dtype as Paddle 2.0.0's: the values and errors of its
test_default_dtype.py. tests/conftest.py sets the default back after every test."""

from __future__ import annotations

import numpy as np
import pytest

import fleetgraph as paddle

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
