"""`paddle.nn`: the Layer classes (eager by default, static after enable_static), `functional`,
`initializer` and the gradient clips."""

from ..clip import ClipGradByGlobalNorm, ClipGradByNorm, ClipGradByValue
from ..layers.decode import BeamSearchDecoder, dynamic_decode
from . import functional, initializer
from .layer.activation import CrossEntropyLoss, MSELoss, ReLU, Sigmoid, Softmax, Tanh
from .layer.common import Dropout, Embedding, Flatten, Linear
from .layer.container import LayerList, ParameterList, Sequential
from .layer.conv import Conv2D
from .layer.layers import Layer
from .layer.norm import BatchNorm, BatchNorm1D, BatchNorm2D
from .layer.pooling import AdaptiveAvgPool2D, AvgPool2D, MaxPool2D
from .layer.rnn import GRU, LSTM, RNN, BiRNN, GRUCell, LSTMCell, RNNCellBase, SimpleRNN, SimpleRNNCell  # noqa: F401

__all__ = [
    "BeamSearchDecoder",
    "dynamic_decode",
    "AdaptiveAvgPool2D",
    "AvgPool2D",
    "BatchNorm",
    "BatchNorm1D",
    "BatchNorm2D",
    "ClipGradByGlobalNorm",
    "ClipGradByNorm",
    "ClipGradByValue",
    "Conv2D",
    "CrossEntropyLoss",
    "Dropout",
    "Embedding",
    "Flatten",
    "Layer",
    "LayerList",
    "Linear",
    "MSELoss",
    "MaxPool2D",
    "ParameterList",
    "ReLU",
    "Sequential",
    "Sigmoid",
    "Softmax",
    "Tanh",
    "functional",
    "initializer",
]
