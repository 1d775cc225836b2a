"""Weight decay as ops appended to a gradient: L2 adds coeff * param, L1 adds coeff * sign(param)."""

from __future__ import annotations

from .dygraph.mode import in_dygraph_mode  # noqa: F401  (re-exported as Paddle's module does)
from .ir import unique_name
from .ir.program import Block, Parameter, Variable, VarType

NEW_GRAD_SUFFIX = "@NEWGRAD"  # Paddle's kNewGradSuffix: a sparse gradient made dense by regularization


class WeightDecayRegularizer:
    def __init__(self, coeff: float = 0.0) -> None:
        self.coeff = float(coeff)

    def append_regularization_ops(self, block: Block, param: Parameter, grad: Variable) -> Variable:
        """Append grad + decay(param) and return the regularized gradient: the gradient itself
        (updated in place, as Paddle does), or for a sparse gradient a new dense 'grad@NEWGRAD', as
        Paddle's: the decay reaches every row, so the sum is dense."""
        decay = block.create_var(unique_name.generate(f"{param.name}@decay"), param.shape, param.dtype)
        self._decay(block, param, decay)
        out = grad
        if grad.type == VarType.SELECTED_ROWS:
            out = block.create_var(grad.name + NEW_GRAD_SUFFIX, param.shape, param.dtype)
        block.append_op("sum", {"X": [grad, decay]}, {"Out": [out]})
        return out

    def _decay(self, block, param, out) -> None:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(coeff={self.coeff})"


class L2Decay(WeightDecayRegularizer):
    def _decay(self, block, param, out) -> None:
        block.append_op("scale", {"X": [param]}, {"Out": [out]}, {"scale": self.coeff})


class L1Decay(WeightDecayRegularizer):
    def _decay(self, block, param, out) -> None:
        sign = block.create_var(unique_name.generate(f"{param.name}@sign"), param.shape, param.dtype)
        block.append_op("sign", {"X": [param]}, {"Out": [sign]})
        block.append_op("scale", {"X": [sign]}, {"Out": [out]}, {"scale": self.coeff})


L2DecayRegularizer, L1DecayRegularizer = L2Decay, L1Decay


def append_regularization_ops(parameters_and_grads, regularization=None) -> list:
    """(param, regularized grad) for each pair, by the parameter's own regularizer or else
    `regularization`, its ops tagged optimize ops of the pair, as Paddle's; a pair with no gradient
    or no regularizer passes unchanged."""
    out = []
    for param, grad in parameters_and_grads:
        regularizer = getattr(param, "regularizer", None) or regularization
        if grad is None or regularizer is None:
            out.append((param, grad))
            continue
        with param.block.program._optimized_guard([param, grad]):
            out.append((param, regularizer.append_regularization_ops(grad.block, param, grad)))
    return out
