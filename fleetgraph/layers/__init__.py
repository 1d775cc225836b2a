"""Layer functions that append ops to the default programs (`fluid.layers`)."""

from .helper import LayerHelper
from .io import fluid_data as data
from .loss import cross_entropy, mse_loss, softmax_with_cross_entropy, square_error_cost
from .math import (abs, elementwise_add, elementwise_div, elementwise_mul, elementwise_sub, exp, log, matmul,
                   mean, monkey_patch_variable, mul, reduce_mean, reduce_sum, relu, scale, sigmoid, sign,
                   softmax, sqrt, square, sums, tanh)
from .nn import accuracy, batch_norm, conv2d, dropout, embedding, fc, pool2d, topk
from .tensor import (assign, cast, concat, create_global_var, create_parameter, fill_constant, flatten, ones,
                     reshape, split, transpose, zeros)

monkey_patch_variable()

__all__ = [
    "LayerHelper", "abs", "accuracy", "assign", "batch_norm", "cast", "concat", "conv2d", "create_global_var",
    "create_parameter", "cross_entropy", "data", "dropout", "elementwise_add", "elementwise_div",
    "elementwise_mul", "elementwise_sub", "embedding", "exp", "fc", "fill_constant", "flatten", "log",
    "matmul", "mean", "mse_loss", "mul", "ones", "pool2d", "reduce_mean", "reduce_sum", "relu", "reshape",
    "scale", "sigmoid", "sign", "softmax", "softmax_with_cross_entropy", "split", "sqrt", "square",
    "square_error_cost", "sums", "tanh", "topk", "transpose", "zeros",
]
