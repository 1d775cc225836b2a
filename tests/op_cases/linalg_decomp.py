"""Cases for the decomposition ops (cholesky, inverse), with NumPy oracles after Paddle 2.0's unit
tests (test_cholesky_op, test_inverse_op)."""

import numpy as np

from . import NOT_EXPORTED, case, rand


def _spd(*shape, seed=0):
    """Symmetric positive-definite matrices [*, M, M], as test_cholesky_op builds them."""
    a = rand(*shape, seed=seed)
    return a @ a.swapaxes(-1, -2) + 1e-2 * np.eye(shape[-1])


case("cholesky", {"X": _spd(3, 3, seed=1)}, reference=lambda X, upper: {"Out": np.linalg.cholesky(X)}, rtol=1e-4)
case(
    "cholesky",
    {"X": _spd(2, 4, 4, seed=2)},
    attrs={"upper": True},
    name="upper_batched",
    reference=lambda X, upper: {"Out": np.linalg.cholesky(X).swapaxes(-1, -2)},
    rtol=1e-4,
)
case(
    "inverse",
    {"Input": _spd(4, 4, seed=3)},
    outputs={"Output": 1},
    reference=lambda Input: {"Output": np.linalg.inv(Input)},
    rtol=1e-4,
)
case(
    "inverse",
    {"Input": _spd(2, 3, 3, seed=4)},
    outputs={"Output": 1},
    name="batched",
    reference=lambda Input: {"Output": np.linalg.inv(Input)},
    rtol=1e-4,
)

NOT_EXPORTED.update(
    dict.fromkeys(("cholesky", "inverse"), "no ONNX exporter: the default ONNX domain has no decomposition or inverse")
)
