"""BatchNorm (Fluid's dygraph spelling) and BatchNorm1D/2D (Paddle 2.x)."""

from __future__ import annotations

from ...dygraph.dispatch import bind
from ...initializer import Constant
from ...param_attr import ParamAttr
from .. import functional as F
from .layers import Layer


class _BatchNormBase(Layer):
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
    ) -> None:
        super().__init__()
        c = int(num_features)
        self._momentum, self._epsilon = momentum, epsilon
        self._data_format, self._use_global_stats = data_format, use_global_stats
        self.weight = self.create_parameter([c], weight_attr, default_initializer=Constant(1.0))
        self.bias = self.create_parameter([c], bias_attr, is_bias=True)
        mean = ParamAttr(name=moving_mean_name, initializer=Constant(0.0), trainable=False)
        variance = ParamAttr(name=moving_variance_name, initializer=Constant(1.0), trainable=False)
        self._mean = self.create_parameter([c], mean)
        self._variance = self.create_parameter([c], variance)

    def forward(self, x):
        return F.batch_norm(
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
        )
        self._act = act
        if is_test:  # as Paddle's: the layer starts in eval mode; train() still switches it back
            self.training = False

    def forward(self, x):
        out = super().forward(x)
        return out if self._act is None else bind(self._act, {"X": [out]})

__all__ = ["BatchNorm1D", "BatchNorm2D", "BatchNorm"]
