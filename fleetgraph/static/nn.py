"""`paddle.static.nn`: the layer functions with their 2.x names."""

from ..layers.nn import batch_norm, conv2d, pool2d
from ..layers.nn import embedding_v2 as embedding
from ..layers.nn import static_fc as fc

__all__ = ["batch_norm", "conv2d", "embedding", "fc", "pool2d"]
