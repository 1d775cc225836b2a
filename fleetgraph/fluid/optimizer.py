"""`fluid.optimizer`: Fluid's class names (`AdamOptimizer`) and their short aliases (`Adam`)."""

from ..optimizer import SGD, Adadelta, Adagrad, Adam, Adamax, Lamb, Momentum, Optimizer, RMSProp
from ..optimizer.ema import ExponentialMovingAverage
from ..optimizer.lookahead import LookaheadOptimizer
from ..optimizer.model_average import ModelAverage
from ..optimizer.optimizer import DecayedAdagrad, Ftrl
from ..optimizer.recompute import RecomputeOptimizer

SGDOptimizer, MomentumOptimizer, AdagradOptimizer, AdamOptimizer = SGD, Momentum, Adagrad, Adam
AdamaxOptimizer, AdadeltaOptimizer, RMSPropOptimizer, LambOptimizer = Adamax, Adadelta, RMSProp, Lamb
DecayedAdagradOptimizer, FtrlOptimizer = DecayedAdagrad, Ftrl

__all__ = [
    "SGD",
    "Adadelta",
    "AdadeltaOptimizer",
    "Adagrad",
    "AdagradOptimizer",
    "Adam",
    "AdamOptimizer",
    "Adamax",
    "AdamaxOptimizer",
    "DecayedAdagrad",
    "DecayedAdagradOptimizer",
    "ExponentialMovingAverage",
    "Ftrl",
    "FtrlOptimizer",
    "Lamb",
    "LambOptimizer",
    "LookaheadOptimizer",
    "ModelAverage",
    "Momentum",
    "MomentumOptimizer",
    "Optimizer",
    "RMSProp",
    "RMSPropOptimizer",
    "RecomputeOptimizer",
    "SGDOptimizer",
]
