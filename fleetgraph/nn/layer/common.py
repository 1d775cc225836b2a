"""Linear, Embedding, Dropout and Flatten layers."""

from __future__ import annotations

from ...initializer import XavierUniform
from ...ir import FleetgraphError
from .. import functional as F
from .layers import Layer


class Linear(Layer):
    """y = x @ weight + bias, weight [in_features, out_features] (Xavier), bias zero."""

    def __init__(self, in_features, out_features, weight_attr=None, bias_attr=None, name=None) -> None:
        super().__init__()
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
        super().__init__()
        self._num, self._dim = int(num_embeddings), int(embedding_dim)
        if padding_idx is not None and not -self._num <= padding_idx < self._num:
            raise FleetgraphError(f"Embedding: padding_idx expected in [-{self._num}, {self._num}), got {padding_idx}")
        self._padding_idx = padding_idx if padding_idx is None or padding_idx >= 0 else padding_idx + self._num
        self._sparse = bool(sparse)
        self.weight = self.create_parameter([self._num, self._dim], weight_attr, default_initializer=XavierUniform())

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


__all__ = ["Dropout", "Embedding", "Flatten", "Linear"]
