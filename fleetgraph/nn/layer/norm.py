"""The normalization layers of Paddle 2.0's python/paddle/nn/layer/norm.py: BatchNorm (Fluid's
dygraph spelling), BatchNorm1D/2D/3D, SyncBatchNorm, LayerNorm, GroupNorm, InstanceNorm1D/2D/3D,
LocalResponseNorm and SpectralNorm."""

from __future__ import annotations

import math

from ...dygraph.dispatch import bind
from ...dygraph.parallel import get_world_size, ring_started
from ...dygraph.tensor import Tensor
from ...initializer import Constant, Normal
from ...ir import FleetgraphError, convert_dtype, get_default_dtype
from ...param_attr import ParamAttr
from .. import functional as F
from ..functional.norm import append_batch_norm
from .layers import Layer


class _BatchNormBase(Layer):
    _op_type = "batch_norm"

    def __init__(
        self,
        num_features,
        momentum=0.9,
        epsilon=1e-05,
        weight_attr=None,
        bias_attr=None,
        data_format="NCHW",
        use_global_stats=None,
        name=None,
        moving_mean_name=None,
        moving_variance_name=None,
        dtype=None,
    ) -> None:
        """`dtype`: of the parameters and statistics (1.x's BatchNorm passes its own), else the default
        dtype; float32 for float16, as Paddle's (which sets the default to float32 to get it)."""
        dtype = get_default_dtype() if dtype is None else convert_dtype(dtype)
        super().__init__(dtype="float32" if dtype == "float16" else dtype)
        c = int(num_features)
        self._momentum, self._epsilon = momentum, epsilon
        self._data_format, self._use_global_stats = data_format, use_global_stats
        self.weight = self.create_parameter([c], weight_attr, self._dtype, default_initializer=Constant(1.0))
        self.bias = self.create_parameter([c], bias_attr, self._dtype, is_bias=True)
        mean = ParamAttr(name=moving_mean_name, initializer=Constant(0.0), trainable=False)
        variance = ParamAttr(name=moving_variance_name, initializer=Constant(1.0), trainable=False)
        self._mean = self.create_parameter([c], mean, self._dtype)
        self._variance = self.create_parameter([c], variance, self._dtype)

    def forward(self, x):
        return append_batch_norm(
            self._op_type,
            x,
            self._mean,
            self._variance,
            self.weight,
            self.bias,
            self.training,
            self._momentum,
            self._epsilon,
            self._data_format,
            self._use_global_stats,
        )


class BatchNorm1D(_BatchNormBase):
    pass


class BatchNorm2D(_BatchNormBase):
    pass


class BatchNorm3D(_BatchNormBase):
    def __init__(
        self, num_features, momentum=0.9, epsilon=1e-05, weight_attr=None, bias_attr=None, data_format="NCDHW",
        use_global_stats=None, name=None,
    ):  # fmt: skip
        super().__init__(num_features, momentum, epsilon, weight_attr, bias_attr, data_format, use_global_stats, name)


class SyncBatchNorm(_BatchNormBase):
    """BatchNorm whose training statistics are those of the job's whole batch: its sync_batch_norm
    op all-reduces them over the trainers' ring (and its gradient the sums it needs); on one
    process it is exactly BatchNorm. Eval mode normalizes by the running statistics."""

    _op_type = "sync_batch_norm"

    def __init__(
        self, num_features, momentum=0.9, epsilon=1e-05, weight_attr=None, bias_attr=None, data_format="NCHW",
        name=None,
    ):  # fmt: skip
        super().__init__(num_features, momentum, epsilon, weight_attr, bias_attr, data_format, None, name)

    def forward(self, x):
        if self.training and isinstance(x, Tensor) and get_world_size() > 1 and not ring_started():
            raise FleetgraphError(
                f"SyncBatchNorm: training under {get_world_size()} ranks all-reduces the batch statistics over "
                "the trainers' ring, which is not started; call paddle.distributed.init_parallel_env() first"
            )
        return super().forward(x)

    @classmethod
    def convert_sync_batchnorm(cls, layer):
        """`layer` with each BatchNorm1D/2D/3D in it (itself included) replaced by a SyncBatchNorm
        holding the same parameters and running statistics."""
        converted = layer
        if type(layer) in (BatchNorm1D, BatchNorm2D, BatchNorm3D):
            converted = cls(layer.weight.shape[0], layer._momentum, layer._epsilon, data_format=layer._data_format)
            converted.weight, converted.bias = layer.weight, layer.bias
            converted._mean, converted._variance = layer._mean, layer._variance
        for name, sublayer in layer._sub_layers.items():
            converted._sub_layers[name] = cls.convert_sync_batchnorm(sublayer)
        return converted


class BatchNorm(_BatchNormBase):
    """`paddle.nn.BatchNorm(num_channels, act=None, is_test=False, momentum=0.9, epsilon=1e-05,
    param_attr=None, bias_attr=None, dtype='float32', data_layout='NCHW', ...)`: with an activation."""

    def __init__(
        self,
        num_channels,
        act=None,
        is_test=False,
        momentum=0.9,
        epsilon=1e-05,
        param_attr=None,
        bias_attr=None,
        dtype="float32",
        data_layout="NCHW",
        in_place=False,
        moving_mean_name=None,
        moving_variance_name=None,
        do_model_average_for_mean_and_var=True,
        use_global_stats=False,
        trainable_statistics=False,
    ) -> None:
        super().__init__(
            num_channels,
            momentum,
            epsilon,
            param_attr,
            bias_attr,
            data_layout,
            use_global_stats,
            moving_mean_name=moving_mean_name,
            moving_variance_name=moving_variance_name,
            dtype=dtype,
        )
        self._act = act
        if is_test:  # as Paddle's: the layer starts in eval mode; train() still switches it back
            self.training = False

    def forward(self, x):
        out = super().forward(x)
        return out if self._act is None else bind(self._act, {"X": [out]})


class LayerNorm(Layer):
    """layer_norm over the trailing dims `normalized_shape`: weight (ones) and bias (zeros) of their
    product's size, none where weight_attr / bias_attr is False."""

    def __init__(self, normalized_shape, epsilon=1e-05, weight_attr=None, bias_attr=None, name=None) -> None:
        super().__init__()
        shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
        self._normalized_shape, self._epsilon = shape, epsilon
        size = [math.prod(shape)]
        one = Constant(1.0)
        self.weight = (
            None if weight_attr is False else self.create_parameter(size, weight_attr, default_initializer=one)
        )
        self.bias = None if bias_attr is False else self.create_parameter(size, bias_attr, is_bias=True)

    def forward(self, x):
        return F.layer_norm(x, self._normalized_shape, self.weight, self.bias, self._epsilon)


class GroupNorm(Layer):
    """Normalize each of num_groups groups of channels of each sample, then weight (ones) and bias
    (zeros) per channel, none where weight_attr / bias_attr is False; NCHW only, as Paddle 2.0's."""

    def __init__(
        self, num_groups, num_channels, epsilon=1e-05, weight_attr=None, bias_attr=None, data_format="NCHW", name=None
    ) -> None:
        super().__init__()
        if data_format != "NCHW":
            raise ValueError(f"GroupNorm: unsupported data layout {data_format!r}; expected 'NCHW'")
        self._groups, self._epsilon = int(num_groups), float(epsilon)
        one, c = Constant(1.0), [num_channels]
        self.weight = None if weight_attr is False else self.create_parameter(c, weight_attr, default_initializer=one)
        self.bias = None if bias_attr is False else self.create_parameter(c, bias_attr, is_bias=True)

    def forward(self, x):
        inputs = {"X": [x]}
        if self.weight is not None:
            inputs["Scale"] = [self.weight]
        if self.bias is not None:
            inputs["Bias"] = [self.bias]
        attrs = {"epsilon": self._epsilon, "groups": self._groups, "data_layout": "NCHW"}
        return bind("group_norm", inputs, attrs, out_slot="Y", extra_outputs=("Mean", "Variance"))


class _InstanceNormBase(Layer):
    """instance_norm with parameters `scale` (ones) and `bias` (zeros) per channel, both or neither
    (weight_attr and bias_attr False together), as Paddle 2.0's."""

    def __init__(
        self, num_features, epsilon=1e-05, momentum=0.9, weight_attr=None, bias_attr=None, data_format="NCHW",
        name=None,
    ) -> None:  # fmt: skip
        super().__init__()
        layer = type(self).__name__
        if (weight_attr is False) != (bias_attr is False):
            raise ValueError(f"{layer}: weight_attr and bias_attr must be set to False at the same time")
        if momentum != 0.9:
            raise NotImplementedError(f"{layer}: momentum={momentum!r}; instance norm keeps no running statistics")
        self._epsilon, self._data_format = epsilon, data_format
        affine, c = weight_attr is not False, [num_features]
        self.scale = self.create_parameter(c, weight_attr, default_initializer=Constant(1.0)) if affine else None
        self.bias = self.create_parameter(c, bias_attr, is_bias=True) if affine else None

    def forward(self, x):
        return F.instance_norm(x, weight=self.scale, bias=self.bias, eps=self._epsilon, data_format=self._data_format)


class InstanceNorm1D(_InstanceNormBase):
    pass


class InstanceNorm2D(_InstanceNormBase):
    pass


class InstanceNorm3D(_InstanceNormBase):
    pass


class LocalResponseNorm(Layer):
    def __init__(self, size, alpha=0.0001, beta=0.75, k=1.0, data_format="NCHW", name=None) -> None:
        super().__init__()
        self._args = (size, alpha, beta, k, data_format)

    def forward(self, x):
        return F.local_response_norm(x, *self._args)


class SpectralNorm(Layer):
    """forward(weight): weight divided by its largest singular value (weight as a [shape[dim], rest]
    matrix), estimated by power_iters power iterations from the vectors weight_u and weight_v:
    N(0, 1) draws that no gradient reaches, as Paddle's."""

    def __init__(self, weight_shape, dim=0, power_iters=1, eps=1e-12, dtype="float32") -> None:
        super().__init__(dtype=dtype)
        self._attrs = {"dim": int(dim), "power_iters": int(power_iters), "eps": float(eps)}
        h = weight_shape[dim]
        vectors = []
        for size in (h, math.prod(weight_shape) // h):
            vector = self.create_parameter([size], ParamAttr(), self._dtype, default_initializer=Normal(0.0, 1.0))
            vector.stop_gradient = True
            vectors.append(vector)
        self.weight_u, self.weight_v = vectors

    def forward(self, weight):
        inputs = {"Weight": [weight], "U": [self.weight_u], "V": [self.weight_v]}
        return bind("spectral_norm", inputs, self._attrs)


__all__ = [
    "BatchNorm",
    "BatchNorm1D",
    "BatchNorm2D",
    "BatchNorm3D",
    "GroupNorm",
    "InstanceNorm1D",
    "InstanceNorm2D",
    "InstanceNorm3D",
    "LayerNorm",
    "LocalResponseNorm",
    "SpectralNorm",
    "SyncBatchNorm",
]
