"""Cases for the product ops (dot, bmm, addmm, kron, cross, trace, dist, fsp), with NumPy oracles
after Paddle 1.8's unit tests (test_dot_op, test_bmm_op, test_addmm_op, test_kron_op, test_cross_op,
test_trace_op, test_dist_op, test_fsp_op)."""

import numpy as np

from . import case, positive, rand

case("dot", {"X": rand(6, seed=1), "Y": rand(6, seed=2)}, reference=lambda X, Y: {"Out": np.array([X @ Y])})
case(
    "dot",
    {"X": rand(3, 5, seed=3), "Y": rand(3, 5, seed=4)},
    name="rows",
    reference=lambda X, Y: {"Out": (X * Y).sum(-1, keepdims=True)},
)
case("bmm", {"X": rand(2, 3, 4, seed=5), "Y": rand(2, 4, 5, seed=6)}, reference=lambda X, Y: {"Out": X @ Y})
case(
    "addmm",
    {"Input": rand(3, 5, seed=7), "X": rand(3, 4, seed=8), "Y": rand(4, 5, seed=9)},
    attrs={"Alpha": 0.5, "Beta": 2.0},
    reference=lambda Input, X, Y, Alpha, Beta, **a: {"Out": Beta * Input + Alpha * X @ Y},
)
case(
    "addmm",
    {"Input": rand(1, 5, seed=10), "X": rand(3, 4, seed=11), "Y": rand(4, 5, seed=12)},
    name="broadcast_row",
    reference=lambda Input, X, Y, Alpha, Beta, **a: {"Out": Beta * Input + Alpha * X @ Y},
)
case("kron", {"X": rand(2, 3, seed=13), "Y": rand(3, 2, seed=14)}, reference=lambda X, Y: {"Out": np.kron(X, Y)})
case(
    "kron",
    {"X": rand(2, 2, 3, seed=15), "Y": rand(3, 2, seed=16)},
    name="ranks_differ",
    reference=lambda X, Y: {"Out": np.kron(X, Y)},
)
case(
    "cross",
    {"X": rand(3, 4, seed=17), "Y": rand(3, 4, seed=18)},
    reference=lambda X, Y, dim: {"Out": np.cross(X, Y, axis=0)},
)
case(
    "cross",
    {"X": rand(2, 3, seed=19), "Y": rand(2, 3, seed=20)},
    attrs={"dim": -1},
    name="last_dim",
    reference=lambda X, Y, dim: {"Out": np.cross(X, Y, axis=-1)},
)
case(
    "trace",
    {"Input": rand(4, 5, seed=21)},
    attrs={"offset": 1, "dim1": 0, "dim2": 1},
    reference=lambda Input, offset, dim1, dim2: {"Out": np.array([np.trace(Input, offset)])},
)
case(
    "trace",
    {"Input": rand(2, 3, 4, seed=22)},
    attrs={"offset": -1, "dim1": 2, "dim2": 0},
    name="batched",
    reference=lambda Input, offset, dim1, dim2: {"Out": np.trace(Input, offset, axis1=dim1, axis2=dim2)},
)


def _dist_ref(X, Y, p):
    d = np.abs(X - Y)
    if p == 0:
        return {"Out": np.array([np.count_nonzero(d)], X.dtype)}
    if np.isinf(p):
        return {"Out": np.array([d.max() if p > 0 else d.min()])}
    return {"Out": np.array([(d**p).sum() ** (1 / p)])}


for _p in (2.0, 3.5, float("inf"), float("-inf"), 0.0):
    case(
        "dist",
        {"X": rand(2, 3, 4, seed=23), "Y": rand(3, 1, seed=24)},
        attrs={"p": _p},
        name=f"p_{_p}",
        reference=_dist_ref,
    )


def _fsp_ref(X, Y):
    n, c1, h, w = X.shape
    return {"Out": np.einsum("nihw,njhw->nij", X, Y) / (h * w)}


case("fsp", {"X": positive(2, 3, 4, 5, seed=25), "Y": positive(2, 2, 4, 5, seed=26)}, reference=_fsp_ref)
