"""`paddle.nn`: the Layer classes (eager by default, static after enable_static), `functional`,
`initializer` and the gradient clips."""

from ..clip import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue
from ..layers.decode import BeamSearchDecoder, dynamic_decode
from . import functional, initializer
from .layer import activation, common, container, conv, distance, loss, norm, pooling, transformer, vision
from .layer.activation import *  # noqa: F401,F403
from .layer.common import *  # noqa: F401,F403
from .layer.container import *  # noqa: F401,F403
from .layer.conv import *  # noqa: F401,F403
from .layer.distance import *  # noqa: F401,F403
from .layer.layers import Layer
from .layer.loss import *  # noqa: F401,F403
from .layer.norm import *  # noqa: F401,F403
from .layer.pooling import *  # noqa: F401,F403
from .layer.rnn import GRU, LSTM, RNN, BiRNN, GRUCell, LSTMCell, RNNCellBase, SimpleRNN, SimpleRNNCell  # noqa: F401
from .layer.transformer import *  # noqa: F401,F403
from .layer.vision import *  # noqa: F401,F403

__all__ = [
    "BeamSearchDecoder",
    "dynamic_decode",
    "ClipGradByGlobalNorm",
    "ClipGradByNorm",
    "ClipGradByValue",
    "Layer",
    "functional",
    "initializer",
]

# each layer module lists its classes
__all__ += [
    name
    for family in (activation, common, container, conv, distance, loss, norm, pooling, transformer, vision)
    for name in family.__all__
    if name not in __all__
]
