"""`fluid.param_attr`: ParamAttr and WeightNormParamAttr with the names Paddle's module re-exports."""

from ..initializer import Constant, Initializer, Xavier
from ..param_attr import ParamAttr, WeightNormParamAttr
from ..regularizer import WeightDecayRegularizer

__all__ = ["Constant", "Initializer", "ParamAttr", "WeightDecayRegularizer", "WeightNormParamAttr", "Xavier"]
