"""Optimizers: `minimize(loss)` = backward + regularization + one optimize op per parameter."""

from .optimizer import SGD, Adagrad, Adam, Momentum, Optimizer

SGDOptimizer, MomentumOptimizer, AdamOptimizer, AdagradOptimizer = SGD, Momentum, Adam, Adagrad

__all__ = [
    "SGD",
    "Adagrad",
    "AdagradOptimizer",
    "Adam",
    "AdamOptimizer",
    "Momentum",
    "MomentumOptimizer",
    "Optimizer",
    "SGDOptimizer",
]
