"""`paddle.nn` layer classes of Paddle 2.0's python/paddle/nn/layer/common.py: Linear, Bilinear,
Embedding, the dropouts, Flatten, the pads, the upsamplers and CosineSimilarity, each calling its
`paddle.nn.functional` function."""

from __future__ import annotations

from ...dygraph.tensor import Tensor
from ...initializer import XavierUniform
from ...ir import FleetgraphError, get_default_dtype
from .. import functional as F
from .layers import Layer


class Linear(Layer):
    """y = x @ weight + bias, weight [in_features, out_features] (Xavier), bias zero."""

    def __init__(self, in_features, out_features, weight_attr=None, bias_attr=None, name=None) -> None:
        super().__init__(dtype=get_default_dtype())  # as Paddle's Linear, Embedding and Bilinear
        self._in, self._out = int(in_features), int(out_features)
        self.weight = self.create_parameter([self._in, self._out], weight_attr, default_initializer=XavierUniform())
        self.bias = None if bias_attr is False else self.create_parameter([self._out], bias_attr, is_bias=True)
        self.name = name

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self) -> str:
        return f"in_features={self._in}, out_features={self._out}, dtype={self._dtype}"


class Embedding(Layer):
    """Rows of weight [num_embeddings, embedding_dim] picked by ids; sparse=True makes the gradient
    SelectedRows (only the rows looked up)."""

    def __init__(
        self, num_embeddings, embedding_dim, padding_idx=None, sparse=False, weight_attr=None, name=None
    ) -> None:
        super().__init__(dtype=get_default_dtype())
        self._num, self._dim = int(num_embeddings), int(embedding_dim)
        if padding_idx is not None and not -self._num <= padding_idx < self._num:
            raise FleetgraphError(f"Embedding: padding_idx expected in [-{self._num}, {self._num}), got {padding_idx}")
        self._padding_idx = padding_idx if padding_idx is None or padding_idx >= 0 else padding_idx + self._num
        self._sparse = bool(sparse)
        self.weight = self.create_parameter([self._num, self._dim], weight_attr, default_initializer=XavierUniform())
        if self._padding_idx is not None and isinstance(self.weight, Tensor):  # Paddle zeroes it in dynamic mode
            rows = self.weight.numpy()
            rows[self._padding_idx] = 0.0
            self.weight.set_value(rows)

    def forward(self, x):
        return F.embedding(x, self.weight, self._padding_idx, self._sparse)


class Dropout(Layer):
    def __init__(self, p=0.5, axis=None, mode="upscale_in_train", name=None) -> None:
        super().__init__()
        self.p, self.axis, self.mode = p, axis, mode

    def forward(self, x):
        return F.dropout(x, self.p, self.axis, self.training, self.mode)


class Flatten(Layer):
    def __init__(self, start_axis=1, stop_axis=-1) -> None:
        super().__init__()
        self.start_axis, self.stop_axis = start_axis, stop_axis

    def forward(self, x):
        return F.flatten(x, self.start_axis, self.stop_axis)


class Bilinear(Layer):
    """out[:, k] = x1 @ weight[k] @ x2^T + bias[0, k]: weight [out, in1, in2], bias [1, out]."""

    def __init__(self, in1_features, in2_features, out_features, weight_attr=None, bias_attr=None, name=None) -> None:
        super().__init__(dtype=get_default_dtype())
        self._in1, self._in2, self._out = int(in1_features), int(in2_features), int(out_features)
        self.weight = self.create_parameter([self._out, self._in1, self._in2], weight_attr)
        self.bias = None if bias_attr is False else self.create_parameter([1, self._out], bias_attr, is_bias=True)
        self._name = name

    def forward(self, x1, x2):
        return F.bilinear(x1, x2, self.weight, self.bias, self._name)


class Dropout2D(Layer):
    """Whole channels of a 4-D input dropped while training (`F.dropout2d`)."""

    def __init__(self, p=0.5, data_format="NCHW", name=None) -> None:
        super().__init__()
        self.p, self._data_format, self._name = p, data_format, name

    def forward(self, x):
        return F.dropout2d(x, self.p, self.training, self._data_format, self._name)


class Dropout3D(Layer):
    """Whole channels of a 5-D input dropped while training (`F.dropout3d`)."""

    def __init__(self, p=0.5, data_format="NCDHW", name=None) -> None:
        super().__init__()
        self.p, self._data_format, self._name = p, data_format, name

    def forward(self, x):
        return F.dropout3d(x, self.p, self.training, self._data_format, self._name)


class AlphaDropout(Layer):
    """SELU's dropout, keeping mean and variance, while training (`F.alpha_dropout`)."""

    def __init__(self, p=0.5, name=None) -> None:
        super().__init__()
        self.p, self._name = p, name

    def forward(self, x):
        return F.alpha_dropout(x, self.p, self.training, self._name)


class _Pad(Layer):
    """`F.pad` with the layer's padding: a list of 2 per spatial axis (last axis first), or one int for all."""

    _spatial = 0

    def __init__(self, padding, mode="constant", value=0.0, data_format=None, name=None) -> None:
        super().__init__()
        self._pad = [padding] * (2 * self._spatial) if isinstance(padding, int) else padding
        self._mode, self._value, self._data_format, self._name = mode, value, data_format, name

    def forward(self, x):
        return F.pad(x, self._pad, self._mode, self._value, self._data_format, self._name)


class Pad1D(_Pad):
    _spatial = 1

    def __init__(self, padding, mode="constant", value=0.0, data_format="NCL", name=None) -> None:
        super().__init__(padding, mode, value, data_format, name)


class Pad2D(_Pad):
    _spatial = 2

    def __init__(self, padding, mode="constant", value=0.0, data_format="NCHW", name=None) -> None:
        super().__init__(padding, mode, value, data_format, name)


class Pad3D(_Pad):
    _spatial = 3

    def __init__(self, padding, mode="constant", value=0.0, data_format="NCDHW", name=None) -> None:
        super().__init__(padding, mode, value, data_format, name)


class Upsample(Layer):
    """`F.interpolate` with the layer's size or scale_factor and mode."""

    def __init__(
        self,
        size=None,
        scale_factor=None,
        mode="nearest",
        align_corners=False,
        align_mode=0,
        data_format="NCHW",
        name=None,
    ) -> None:
        super().__init__()
        self.size, self.scale_factor, self.mode = size, scale_factor, mode.lower()
        self.align_corners, self.align_mode, self.data_format, self.name = align_corners, align_mode, data_format, name

    def forward(self, x):
        return F.interpolate(
            x, self.size, self.scale_factor, self.mode, self.align_corners, self.align_mode, self.data_format, self.name
        )


class UpsamplingNearest2D(Upsample):
    """Nearest-neighbour upsampling of a 4-D input."""

    def __init__(self, size=None, scale_factor=None, data_format="NCHW", name=None) -> None:
        super().__init__(size, scale_factor, "nearest", False, 0, data_format, name)


class UpsamplingBilinear2D(Upsample):
    """Bilinear upsampling of a 4-D input, corners aligned."""

    def __init__(self, size=None, scale_factor=None, data_format="NCHW", name=None) -> None:
        super().__init__(size, scale_factor, "bilinear", True, 0, data_format, name)


class CosineSimilarity(Layer):
    """`F.cosine_similarity` of two inputs along `axis`."""

    def __init__(self, axis=1, eps=1e-8) -> None:
        super().__init__()
        self._axis, self._eps = axis, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self._axis, self._eps)


__all__ = [
    "AlphaDropout",
    "Bilinear",
    "CosineSimilarity",
    "Dropout",
    "Dropout2D",
    "Dropout3D",
    "Embedding",
    "Flatten",
    "Linear",
    "Pad1D",
    "Pad2D",
    "Pad3D",
    "Upsample",
    "UpsamplingBilinear2D",
    "UpsamplingNearest2D",
]
