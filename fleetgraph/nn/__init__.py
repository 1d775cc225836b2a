"""`paddle.nn`: the Layer classes (eager by default, static after enable_static), `functional`,
`initializer` and the gradient clips."""

from ..grad_clip import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue
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

# Paddle 2.0's paddle.nn also holds the functional forms (paddle.nn.relu, paddle.nn.conv2d ...) and
# the extension, rnn and weight_norm_hook modules
from . import utils  # noqa: E402,F401
from .functional import extension  # noqa: E402,F401
from .layer import rnn  # noqa: E402,F401
from .utils import weight_norm_hook  # noqa: E402,F401

globals().update(
    {
        name: getattr(functional, name)
        for name in functional.__all__
        if name not in globals() and not isinstance(getattr(functional, name), type(functional))
    }
)
