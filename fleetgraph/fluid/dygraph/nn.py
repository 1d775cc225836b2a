"""`fluid.dygraph.nn`: Paddle 1.8's layer classes, with 1.x's constructors and parameter names.

Each is a `paddle.nn.Layer` whose forward ends in the registered op through the one dispatch (the
2.x functional where it is the same op), so it runs eagerly on Tensors and builds a program when
called on static Variables, as Paddle 1.8's. Parameters are made with 1.x's shapes, defaults
(Xavier weights, zero biases, Normal(0, sqrt(2 / fan_in)) convolution filters) and `dtype`.

Each is a `fluid.dygraph.Layer`, so its parameters live where Fluid 1.x's mode rule puts them:
eager Tensors in imperative mode, else static Parameters of the default programs.
"""

from __future__ import annotations

import numpy as np

from ...dygraph.dispatch import bind
from ...dygraph.tensor import Tensor
from ...initializer import Constant, Normal, NumpyArrayInitializer
from ...layers import nn as _layers_nn
from ...layers.conv_nd import check_use_cudnn
from ...layers.recurrent import _unit_activation
from ...layers.sampled import _SAMPLERS, _alias_tables
from ...nn import functional as F
from ...nn.layer.norm import BatchNorm as _BatchNorm
from ...param_attr import ParamAttr
from ._helpers import activated, conv_filter_channels, run_op
from .layers import Layer
from .losses import BCELoss, L1Loss, MSELoss, NLLLoss
from .nn_conv import Conv2DTranspose, Conv3D, Conv3DTranspose, TreeConv
from .nn_norm import GroupNorm, InstanceNorm, LayerNorm, SpectralNorm

__all__ = [
    "Conv2D",
    "Conv3D",
    "Pool2D",
    "Linear",
    "BatchNorm",
    "Dropout",
    "Embedding",
    "GRUUnit",
    "InstanceNorm",
    "LayerNorm",
    "NCE",
    "MSELoss",
    "L1Loss",
    "NLLLoss",
    "BCELoss",
    "GroupNorm",
    "SpectralNorm",
    "TreeConv",
    "PRelu",
    "BilinearTensorProduct",
    "Conv2DTranspose",
    "Conv3DTranspose",
]


class Conv2D(Layer):
    """A 2-D convolution over NCHW input: filter [num_filters, num_channels / groups, kh, kw],
    Normal(0, sqrt(2 / (kh * kw * num_channels))); bias [num_filters] (none with bias_attr=False);
    then `act`."""

    def __init__(
        self,
        num_channels,
        num_filters,
        filter_size,
        stride=1,
        padding=0,
        dilation=1,
        groups=None,
        param_attr=None,
        bias_attr=None,
        use_cudnn=True,
        act=None,
        dtype="float32",
    ) -> None:
        if param_attr is False:
            raise ValueError("Conv2D: param_attr False; expected None or a ParamAttr (the filter is required)")
        check_use_cudnn("Conv2D", use_cudnn)
        super().__init__(dtype=dtype)
        kh, kw = _layers_nn._pair(filter_size, "Conv2D filter_size")[:2]
        channels = conv_filter_channels("Conv2D", num_channels, groups)
        self._stride, self._padding, self._dilation = stride, padding, dilation
        self._groups, self._act = groups or 1, act
        std = (2.0 / (kh * kw * num_channels)) ** 0.5
        self.weight = self.create_parameter(
            [num_filters, channels, kh, kw], param_attr, default_initializer=Normal(0.0, std), dtype=self._dtype
        )
        self.bias = (
            None
            if bias_attr is False
            else self.create_parameter([num_filters], bias_attr, is_bias=True, dtype=self._dtype)
        )

    def forward(self, input):
        out = F.conv2d(input, self.weight, self.bias, self._stride, self._padding, self._dilation, self._groups)
        return activated(out, self._act)


class Pool2D(Layer):
    """Max or average pooling (fluid.layers.pool2d's op and arguments)."""

    def __init__(
        self,
        pool_size=-1,
        pool_type="max",
        pool_stride=1,
        pool_padding=0,
        global_pooling=False,
        use_cudnn=True,
        ceil_mode=False,
        exclusive=True,
        data_format="NCHW",
    ) -> None:
        if pool_type not in ("max", "avg"):
            raise ValueError(f"Pool2D: pool_type {pool_type!r}; expected 'max' or 'avg'")
        if not global_pooling and pool_size == -1:
            raise ValueError("Pool2D: pool_size -1 without global_pooling; expected a pool size")
        if data_format not in ("NCHW", "NHWC"):
            raise ValueError(f"Pool2D: data_format {data_format!r}; expected 'NCHW' or 'NHWC'")
        check_use_cudnn("Pool2D", use_cudnn)
        super().__init__()
        self._args = (pool_size, pool_type, pool_stride, pool_padding, global_pooling, use_cudnn, ceil_mode)
        self._exclusive, self._data_format = exclusive, data_format

    def forward(self, input):
        return _layers_nn.pool2d(input, *self._args, exclusive=self._exclusive, data_format=self._data_format)


class Linear(Layer):
    """act(input @ weight + bias) over the last axis: weight [input_dim, output_dim] (Xavier), bias
    [output_dim] zero (none with bias_attr=False)."""

    def __init__(self, input_dim, output_dim, param_attr=None, bias_attr=None, act=None, dtype="float32") -> None:
        super().__init__(dtype=dtype)
        self._act = act
        self.weight = self.create_parameter([input_dim, output_dim], param_attr, dtype=self._dtype)
        self.bias = (
            None
            if bias_attr is False
            else self.create_parameter([output_dim], bias_attr, is_bias=True, dtype=self._dtype)
        )

    def forward(self, input):
        return activated(F.linear(input, self.weight, self.bias), self._act)


class BatchNorm(Layer, _BatchNorm):
    """paddle.nn.BatchNorm, which has 1.x's signature: parameters of `dtype` (float32 for float16)."""

    def __init__(self, num_channels, act=None, is_test=False, momentum=0.9, epsilon=1e-05, param_attr=None,
                 bias_attr=None, dtype="float32", data_layout="NCHW", in_place=False, moving_mean_name=None,
                 moving_variance_name=None, do_model_average_for_mean_and_var=True, use_global_stats=False,
                 trainable_statistics=False):  # fmt: skip
        if trainable_statistics:
            raise NotImplementedError("BatchNorm: trainable_statistics=True is not supported")
        super().__init__(num_channels, act, is_test, momentum, epsilon, param_attr, bias_attr, dtype, data_layout,
                         in_place, moving_mean_name, moving_variance_name, do_model_average_for_mean_and_var,
                         use_global_stats)  # fmt: skip


class Dropout(Layer):
    """Drops each element with probability p: in dygraph while training (train()/eval()), in a
    program unless is_test; 'downgrade_in_infer' scales by 1 - p at inference,
    'upscale_in_train' by 1 / (1 - p) in training."""

    def __init__(self, p=0.5, seed=None, dropout_implementation="downgrade_in_infer", is_test=False) -> None:
        if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
            raise ValueError(f"Dropout: p {p!r}; expected a number in [0, 1]")
        if seed is not None and not isinstance(seed, int):
            raise ValueError(f"Dropout: seed {seed!r}; expected None or an int")
        if dropout_implementation not in ("downgrade_in_infer", "upscale_in_train"):
            raise ValueError(
                f"Dropout: dropout_implementation {dropout_implementation!r}; expected 'downgrade_in_infer' or "
                "'upscale_in_train'"
            )
        super().__init__()
        self._p, self._seed, self._impl, self._is_test = p, seed, dropout_implementation, is_test

    def forward(self, input):
        is_test = not self.training if isinstance(input, Tensor) else self._is_test
        return _layers_nn.dropout(input, self._p, is_test, self._seed, dropout_implementation=self._impl)


class Embedding(Layer):
    """Rows of weight `size` = [vocabulary, width] (Xavier) picked by ids of any shape
    (lookup_table_v2); `padding_idx` gives zeros; `is_sparse` a SelectedRows gradient."""

    def __init__(
        self, size, is_sparse=False, is_distributed=False, padding_idx=None, param_attr=None, dtype="float32"
    ) -> None:
        super().__init__(dtype=dtype)
        rows = int(size[0])
        if padding_idx is not None and not -rows <= padding_idx < rows:
            raise ValueError(f"Embedding: padding_idx {padding_idx}; expected one in [-{rows}, {rows})")
        self._attrs = {
            "is_sparse": bool(is_sparse),
            "is_distributed": bool(is_distributed),
            "remote_prefetch": bool(is_sparse) and not is_distributed,
            "padding_idx": -1 if padding_idx is None else padding_idx % rows,
        }
        self.weight = self.create_parameter(list(size), param_attr, dtype=self._dtype)

    def forward(self, input):
        return bind("lookup_table_v2", {"W": [self.weight], "Ids": [input]}, self._attrs, dtype=self.weight.dtype)


class GRUUnit(Layer):
    """One GRU step (the gru_unit op): `input` [batch, size] (the projection, size = 3 * D) and the
    previous `hidden` [batch, D] give (updated hidden, reset hidden, gate). origin_mode reaches the
    op, as fluid.layers.gru_unit's does (Paddle 1.8's class dropped it)."""

    def __init__(self, size, param_attr=None, bias_attr=None, activation="tanh", gate_activation="sigmoid",
                 origin_mode=False, dtype="float32"):  # fmt: skip
        super().__init__(dtype=dtype)
        self._attrs = {
            "activation": _unit_activation(activation, "activation"),
            "gate_activation": _unit_activation(gate_activation, "gate_activation"),
            "origin_mode": bool(origin_mode),
        }
        d = size // 3
        self.weight = self.create_parameter([d, 3 * d], param_attr, dtype=self._dtype)
        self.bias = (
            None
            if bias_attr is False
            else self.create_parameter([1, 3 * d], bias_attr, is_bias=True, dtype=self._dtype)
        )

    def forward(self, input, hidden):
        inputs = {"Input": [input], "HiddenPrev": [hidden], "Weight": [self.weight]}
        if self.bias is not None:
            inputs["Bias"] = [self.bias]
        gate, reset_hidden, hidden = run_op(
            "gru_unit", inputs, self._attrs, input.dtype, ("Gate", "ResetHiddenPrev", "Hidden")
        )
        return hidden, reset_hidden, gate


def _custom_tables(custom_dist, classes: int) -> list:
    """(slot, array) of the nce op's custom-distribution inputs: the probabilities and their alias tables."""
    if len(custom_dist if custom_dist is not None else ()) != classes:
        raise ValueError(f"NCE: sampler 'custom_dist' needs {classes} probabilities (custom_dist), got {custom_dist!r}")
    alias, alias_probs = _alias_tables(custom_dist, classes)
    probs = np.asarray(custom_dist, np.float32)
    return [("CustomDistProbs", probs), ("CustomDistAlias", alias), ("CustomDistAliasProbs", alias_probs)]


class NCE(Layer):
    """The noise-contrastive estimation loss (the nce op, as fluid.layers.nce) with its weight
    [num_total_classes, dim] and bias [num_total_classes, 1] (only with a bias_attr, as Paddle 1.8's
    class), divided by num_neg_samples + 1."""

    def __init__(self, num_total_classes, dim, sample_weight=None, param_attr=None, bias_attr=None,
                 num_neg_samples=None, sampler="uniform", custom_dist=None, seed=0, is_sparse=False,
                 dtype="float32"):  # fmt: skip
        if sampler not in _SAMPLERS:
            raise ValueError(f"NCE: sampler {sampler!r}; expected one of {', '.join(_SAMPLERS)}")
        super().__init__(dtype=dtype)
        self._sample_weight = sample_weight
        self._num_neg_samples = 10 if num_neg_samples is None else int(num_neg_samples)
        self._attrs = {
            "num_total_classes": int(num_total_classes),
            "num_neg_samples": self._num_neg_samples,
            "seed": int(seed),
            "sampler": _SAMPLERS[sampler],
            "is_sparse": bool(is_sparse),
            "remote_prefetch": bool(is_sparse),
        }
        self._tables = {}
        if sampler == "custom_dist":
            self._tables = {slot: self._constant(t) for slot, t in _custom_tables(custom_dist, num_total_classes)}
        self.weight = self.create_parameter([num_total_classes, dim], param_attr, dtype=self._dtype)
        has_bias = bias_attr is not None and bias_attr is not False  # Paddle 1.8's class: no bias by default
        self.bias = (
            self.create_parameter([num_total_classes, 1], bias_attr, is_bias=True, dtype=self._dtype)
            if has_bias
            else None
        )

    def _constant(self, table: np.ndarray):
        attr = ParamAttr(initializer=NumpyArrayInitializer(table), trainable=False)
        param = self.create_parameter(list(table.shape), attr, dtype=str(table.dtype))
        param.stop_gradient = True
        return param

    def forward(self, input, label, sample_weight=None):
        inputs = {
            "Input": [input],
            "Label": [label],
            "Weight": [self.weight],
            **{k: [v] for k, v in self._tables.items()},
        }
        if self.bias is not None:
            inputs["Bias"] = [self.bias]
        weight = sample_weight if sample_weight is not None else self._sample_weight
        if weight is not None:
            inputs["SampleWeight"] = [weight]
        cost = bind("nce", inputs, self._attrs, out_slot="Cost", extra_outputs=("SampleLogits", "SampleLabels"))
        return cost / (self._num_neg_samples + 1)


class PRelu(Layer):
    """max(0, x) + alpha * min(0, x), alpha (ones, float32 as Paddle's) one for all ('all'), one per
    channel ('channel': [1, channel, 1, 1]) or one per element of a sample ('element': [1] +
    input_shape[1:])."""

    def __init__(self, mode, channel=None, input_shape=None, param_attr=None, dtype="float32") -> None:
        if mode == "all":
            shape = [1]
        elif mode == "channel":
            if not isinstance(channel, int):
                raise ValueError(f"PRelu: mode 'channel' expected an int channel, got {channel!r}")
            shape = [1, channel, 1, 1]
        elif mode == "element":
            if not isinstance(input_shape, (list, tuple)):
                raise ValueError(f"PRelu: mode 'element' expected input_shape, a list or tuple, got {input_shape!r}")
            shape = [1, *list(input_shape)[1:]]
        else:
            raise ValueError(f"PRelu: mode {mode!r}; expected 'all', 'channel' or 'element'")
        super().__init__(name_scope="prelu", dtype=dtype)
        self._mode = mode
        self.weight = self.create_parameter(shape, param_attr, dtype="float32", default_initializer=Constant(1.0))

    def forward(self, input):
        return bind("prelu", {"X": [input], "Alpha": [self.weight]}, {"mode": self._mode})


class BilinearTensorProduct(Layer):
    """act(out[n, i] = x[n] W[i] y[n]^T + b[i]): weight [output_dim, input1_dim, input2_dim]
    (Xavier), bias [1, output_dim] (none with bias_attr=False); `name` names the output."""

    def __init__(self, input1_dim, input2_dim, output_dim, name=None, act=None, param_attr=None, bias_attr=None,
                 dtype="float32"):  # fmt: skip
        super().__init__(dtype=dtype)
        self._name, self._act = name, act
        self.weight = self.create_parameter([output_dim, input1_dim, input2_dim], param_attr, dtype=self._dtype)
        self.bias = (
            None
            if bias_attr is False
            else self.create_parameter([1, output_dim], bias_attr, is_bias=True, dtype=self._dtype)
        )

    def forward(self, x, y):
        inputs = {"X": [x], "Y": [y], "Weight": [self.weight]}
        if self.bias is not None:
            inputs["Bias"] = [self.bias]
        name = None if self._name is None else f"{self.full_name()}.{self._name}"
        return activated(bind("bilinear_tensor_product", inputs, name=name), self._act)
