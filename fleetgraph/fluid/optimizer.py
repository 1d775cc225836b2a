"""`fluid.optimizer`: Fluid's class names (`AdamOptimizer`) and their short aliases (`Adam`), with the
names Paddle's module re-exports."""

from collections import defaultdict
from functools import reduce

from .. import absent
from .. import compat as cpt
from ..dygraph.mode import no_grad
from ..grad_clip import (
    ClipGradBase as GradientClipBase,
)
from ..grad_clip import (
    GradientClipByNorm,
    append_gradient_clip_ops,
    error_clip_callback,
)
from ..initializer import Constant
from ..ir import (
    Program,
    Variable,
    default_main_program,
    default_startup_program,
    device_guard,
    name_scope,
    program_guard,
    unique_name,
)
from ..optimizer import SGD, Adadelta, Adagrad, Adam, Adamax, Lamb, Momentum, Optimizer, RMSProp
from ..optimizer.ema import ExponentialMovingAverage
from ..optimizer.lookahead import LookaheadOptimizer
from ..optimizer.model_average import ModelAverage
from ..optimizer.optimizer import DecayedAdagrad, Dpsgd, Ftrl, LarsMomentum
from ..optimizer.recompute import RecomputeOptimizer
from ..regularizer import append_regularization_ops
from ..transpiler.backward import append_backward
from . import layers
from .distribute_lookup_table import find_distributed_lookup_table
from .dygraph import base as imperative_base
from .dygraph.learning_rate_scheduler import LearningRateDecay
from .layers import ops, tensor

SGDOptimizer, MomentumOptimizer, AdagradOptimizer, AdamOptimizer = SGD, Momentum, Adagrad, Adam
AdamaxOptimizer, AdadeltaOptimizer, RMSPropOptimizer, LambOptimizer = Adamax, Adadelta, RMSProp, Lamb
DecayedAdagradOptimizer, FtrlOptimizer = DecayedAdagrad, Ftrl
DpsgdOptimizer, LarsMomentumOptimizer = Dpsgd, LarsMomentum

__getattr__ = absent.getattr_for(__name__)

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
    "Constant",
    "DecayedAdagrad",
    "DecayedAdagradOptimizer",
    "Dpsgd",
    "DpsgdOptimizer",
    "ExponentialMovingAverage",
    "Ftrl",
    "FtrlOptimizer",
    "GradientClipBase",
    "GradientClipByNorm",
    "LearningRateDecay",
    "Lamb",
    "LambOptimizer",
    "LarsMomentum",
    "LarsMomentumOptimizer",
    "LookaheadOptimizer",
    "ModelAverage",
    "Momentum",
    "MomentumOptimizer",
    "Optimizer",
    "Program",
    "RMSProp",
    "RMSPropOptimizer",
    "RecomputeOptimizer",
    "SGDOptimizer",
    "Variable",
    "append_backward",
    "append_gradient_clip_ops",
    "append_regularization_ops",
    "cpt",
    "default_main_program",
    "default_startup_program",
    "defaultdict",
    "device_guard",
    "error_clip_callback",
    "find_distributed_lookup_table",
    "imperative_base",
    "layers",
    "name_scope",
    "no_grad",
    "ops",
    "program_guard",
    "reduce",
    "tensor",
    "unique_name",
]
