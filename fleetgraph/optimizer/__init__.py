"""Optimizers: `minimize(loss)` = backward + regularization + one optimize op per parameter.
Paddle 2.x's names; `fluid.optimizer` adds Fluid's (`SGDOptimizer`, `FtrlOptimizer`, ...)."""

from . import lr
from .adamw import AdamW
from .optimizer import SGD, Adadelta, Adagrad, Adam, Adamax, Lamb, Momentum, Optimizer, RMSProp

SGDOptimizer, MomentumOptimizer, AdamOptimizer, AdagradOptimizer = SGD, Momentum, Adam, Adagrad

__all__ = [
    "SGD",
    "Adadelta",
    "Adagrad",
    "AdagradOptimizer",
    "Adam",
    "AdamOptimizer",
    "AdamW",
    "Adamax",
    "Lamb",
    "Momentum",
    "MomentumOptimizer",
    "lr",
    "Optimizer",
    "RMSProp",
    "SGDOptimizer",
]
