"""lars_momentum and dpsgd (ops/optimizer_scaled.py) update Param in place, which a single-op case
cannot bind (it writes each output to a fresh variable): like momentum, they are checked against
NumPy in tests/test_optimizers_dpsgd_lars.py, one op and several optimizer steps."""

from . import COVERED_ELSEWHERE, NOT_DIFFERENTIABLE, NOT_EXPORTED

_OPS = ("lars_momentum", "dpsgd")
_UPDATE = "an optimizer update: it runs after backward, on gradients"
NOT_DIFFERENTIABLE.update(dict.fromkeys(_OPS, _UPDATE))
NOT_EXPORTED.update(dict.fromkeys(_OPS, _UPDATE + "; export prunes the program to inference (ir/prune.py)"))
COVERED_ELSEWHERE.update(
    {
        "lars_momentum": "test_optimizers_dpsgd_lars.py::test_lars_momentum_op_matches_paddles_formula*",
        "dpsgd": "test_optimizers_dpsgd_lars.py::test_dpsgd_op_clips_the_gradient_as_paddles*",
    }
)
