"""bfloat16: the dtype (ml_dtypes', Paddle's VarType 22), its casts, and `paddle.amp.auto_cast(dtype=
'bfloat16')` on the CPU: white-list ops compute on bfloat16 inputs through the one dispatch, their
gradients reach float32 parameters in float32, and small nets train to the float32 loss."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from dygraph_helpers import fresh_mode_and_names  # noqa: F401  (autouse)

import fleetgraph as paddle
from fleetgraph.ir.dtypes import convert_dtype

_RNG = np.random.RandomState(0)
_X = _RNG.randn(64, 16).astype("float32")
_Y = (_X @ _RNG.randn(16, 4).astype("float32")).argmax(1).astype("int64").reshape(-1, 1)


def _round_bf16(a: np.ndarray) -> np.ndarray:
    """IEEE round-to-nearest-even of float32 to bfloat16, by its bits (no ml_dtypes): the float32
    values bfloat16 holds."""
    bits = np.ascontiguousarray(a, "float32").view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return rounded.astype(np.uint32).view(np.float32)


def _bf16(a) -> np.ndarray:
    return np.asarray(a, "float32").astype(ml_dtypes.bfloat16)


def test_bfloat16_is_paddles_var_type_22_under_its_names():
    assert paddle.bfloat16 == "bfloat16" == convert_dtype(22) == convert_dtype(ml_dtypes.bfloat16)
    assert convert_dtype("paddle.bfloat16") == "bfloat16"
    from fleetgraph.ir.dtypes import VAR_TYPE_CODES

    assert VAR_TYPE_CODES["bfloat16"] == 22 and VAR_TYPE_CODES["float32"] == 5
    with pytest.raises(Exception, match="unknown VarType code 23"):
        convert_dtype(23)


def test_cast_rounds_to_bfloat16_nearest_even_and_back_exactly():
    # ties: 1 + 2^-8 lies halfway between 1 and 1 + 2^-7 (to the even 1), 1 + 3 * 2^-8 halfway
    # between 1 + 2^-7 and 1 + 2^-6 (to the even 1 + 2^-6); and a spread of magnitudes and signs
    ties = np.array([1 + 2**-8, 1 + 3 * 2**-8, -(1 + 2**-8), 2**-8 * (1 + 2**-8)], "float32")
    values = np.concatenate([ties, _RNG.randn(200).astype("float32") * 10.0 ** _RNG.randint(-6, 6, 200)])
    x = paddle.to_tensor(values)
    low = paddle.cast(x, "bfloat16")
    assert low.dtype == paddle.bfloat16 and low.numpy().dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(low.numpy().astype("float32"), _round_bf16(values))
    np.testing.assert_array_equal(low.numpy()[:4].astype("float32"), [1.0, 1 + 2**-6, -1.0, 2**-8])
    back = paddle.cast(low, 5)  # Paddle's VarType code of float32
    assert back.dtype == paddle.float32
    np.testing.assert_array_equal(back.numpy(), _round_bf16(values))
    assert x.astype(paddle.bfloat16).dtype == "bfloat16"


def test_static_program_casts_to_bfloat16_and_back():
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [2, 3], "float32")
        low = paddle.cast(x, "bfloat16")
        back = paddle.cast(low, "float32")
    values = np.array([[1 + 2**-8, 3.14159, -1e-3], [65504.0, 0.0, 1 + 3 * 2**-8]], "float32")
    got_low, got_back = paddle.static.Executor(paddle.CPUPlace()).run(main, feed={"x": values}, fetch_list=[low, back])
    assert low.dtype == "bfloat16" and got_low.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(got_back, _round_bf16(values))
