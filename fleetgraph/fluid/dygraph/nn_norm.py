"""Paddle 1.8's normalization layer classes (`fluid.dygraph.LayerNorm`, GroupNorm, InstanceNorm,
SpectralNorm) over the layer_norm, group_norm, instance_norm and spectral_norm ops, with 1.x's
constructors and parameters."""

from __future__ import annotations

import math
import numbers
import warnings

from ...dygraph.dispatch import bind
from ...initializer import Constant, Normal
from ...param_attr import ParamAttr
from ._helpers import activated, run_op
from .layers import Layer

__all__ = ["GroupNorm", "InstanceNorm", "LayerNorm", "SpectralNorm"]


class LayerNorm(Layer):
    """Normalizes over the trailing dims `normalized_shape`, then scales by weight (ones, with
    `scale`) and shifts by bias (zeros, with `shift`), both of their product's size; then `act`."""

    def __init__(self, normalized_shape, scale=True, shift=True, epsilon=1e-05, param_attr=None, bias_attr=None,
                 act=None, dtype="float32"):  # fmt: skip
        super().__init__(dtype=dtype)
        shape = [normalized_shape] if isinstance(normalized_shape, numbers.Integral) else list(normalized_shape)
        self._normalized_shape, self._epsilon, self._act = shape, float(epsilon), act
        size = [math.prod(shape)]
        if param_attr and not scale:
            warnings.warn("LayerNorm: param_attr is used only with scale=True", stacklevel=2)
        if bias_attr and not shift:
            warnings.warn("LayerNorm: bias_attr is used only with shift=True", stacklevel=2)
        if shift and bias_attr is False:
            raise ValueError("LayerNorm: bias_attr False with shift=True; expected None or a ParamAttr")
        self.weight = (
            self.create_parameter(size, param_attr, default_initializer=Constant(1.0), dtype=self._dtype)
            if scale
            else None
        )
        self.bias = self.create_parameter(size, bias_attr, is_bias=True, dtype=self._dtype) if shift else None

    def forward(self, input):
        shape, rank = list(input.shape), len(self._normalized_shape)
        if len(shape) < rank or shape[len(shape) - rank :] != self._normalized_shape:
            raise ValueError(
                f"LayerNorm: input shape {shape}; expected [*, {str(self._normalized_shape)[1:]} (normalized_shape "
                f"{self._normalized_shape})"
            )
        inputs = {"X": [input]}
        if self.weight is not None:
            inputs["Scale"] = [self.weight]
        if self.bias is not None:
            inputs["Bias"] = [self.bias]
        attrs = {"epsilon": self._epsilon, "begin_norm_axis": len(shape) - rank}
        out, _, _ = run_op("layer_norm", inputs, attrs, input.dtype, ("Y",), ("Mean", "Variance"))
        return activated(out, self._act)


class GroupNorm(Layer):
    """Normalizes each of `groups` groups of channels of each sample; scaled by weight and shifted
    by bias only where param_attr / bias_attr are given, as Paddle 1.8's (unscaled by default)."""

    def __init__(self, channels, groups, epsilon=1e-05, param_attr=None, bias_attr=None, act=None,
                 data_layout="NCHW", dtype="float32"):  # fmt: skip
        if data_layout != "NCHW":
            raise ValueError(f"GroupNorm: data_layout {data_layout!r}; expected 'NCHW' (Paddle 1.8's only layout)")
        super().__init__(dtype=dtype)
        self._attrs = {"epsilon": float(epsilon), "groups": int(groups)}
        self._act = act
        one = Constant(1.0)
        self.weight = (
            self.create_parameter([channels], param_attr, default_initializer=one, dtype=self._dtype)
            if param_attr
            else None
        )
        self.bias = self.create_parameter([channels], bias_attr, is_bias=True, dtype=self._dtype) if bias_attr else None

    def forward(self, input):
        inputs = {"X": [input]}
        if self.bias is not None:
            inputs["Bias"] = [self.bias]
        if self.weight is not None:
            inputs["Scale"] = [self.weight]
        out, _, _ = run_op("group_norm", inputs, self._attrs, input.dtype, ("Y",), ("Mean", "Variance"))
        return activated(out, self._act)


class InstanceNorm(Layer):
    """Normalizes each channel of each sample over its spatial dims, then scale (ones) and bias
    (zeros) per channel."""

    def __init__(self, num_channels, epsilon=1e-5, param_attr=None, bias_attr=None, dtype="float32") -> None:
        if bias_attr is False:
            raise ValueError("InstanceNorm: bias_attr False; expected None or a ParamAttr")
        super().__init__(dtype=dtype)
        self._epsilon = float(epsilon)
        self.scale = self.create_parameter(
            [num_channels], param_attr, default_initializer=Constant(1.0), dtype=self._dtype
        )
        self.bias = self.create_parameter(
            [num_channels], bias_attr, is_bias=True, default_initializer=Constant(0.0), dtype=self._dtype
        )

    def forward(self, input):
        inputs = {"X": [input], "Scale": [self.scale], "Bias": [self.bias]}
        stats = ("SavedMean", "SavedVariance")
        out, _, _ = run_op("instance_norm", inputs, {"epsilon": self._epsilon}, input.dtype, ("Y",), stats)
        return out


class SpectralNorm(Layer):
    """A weight of shape `weight_shape` divided by its largest singular value (seen as a matrix of
    rows along `dim`), estimated by `power_iters` power iterations from the vectors weight_u [h] and
    weight_v [w] (Normal(0, 1), not trained)."""

    def __init__(self, weight_shape, dim=0, power_iters=1, eps=1e-12, dtype="float32") -> None:
        super().__init__(dtype=dtype)
        shape = list(weight_shape)
        h = shape[dim]
        self._attrs = {"dim": int(dim), "power_iters": int(power_iters), "eps": float(eps)}
        normal = Normal(0.0, 1.0)
        self.weight_u = self.create_parameter([h], ParamAttr(), default_initializer=normal, dtype=self._dtype)
        self.weight_v = self.create_parameter(
            [math.prod(shape) // h], ParamAttr(), default_initializer=normal, dtype=self._dtype
        )
        self.weight_u.stop_gradient = self.weight_v.stop_gradient = True

    def forward(self, weight):
        return bind("spectral_norm", {"Weight": [weight], "U": [self.weight_u], "V": [self.weight_v]}, self._attrs)
