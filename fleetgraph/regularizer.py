"""Weight decay as ops appended to a gradient: L2 adds coeff * param, L1 adds coeff * sign(param)."""

from __future__ import annotations

from .ir import unique_name
from .ir.program import Block, Parameter, Variable


class WeightDecayRegularizer:
    def __init__(self, coeff: float = 0.0) -> None:
        self.coeff = float(coeff)

    def append_regularization_ops(self, block: Block, param: Parameter, grad: Variable) -> Variable:
        """Append grad += decay(param) (in place, as Paddle does) and return the gradient."""
        decay = block.create_var(unique_name.generate(f"{param.name}@decay"), param.shape, param.dtype)
        self._decay(block, param, decay)
        block.append_op("sum", {"X": [grad, decay]}, {"Out": [grad]})
        return grad

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
