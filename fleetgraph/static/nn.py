"""`paddle.static.nn`: the layer functions with their 2.x names (Paddle 2.0 re-exports these from
fluid.layers, signatures and all). Paddle's names fleetgraph lacks raise NotInFleetgraph."""

from .. import absent
from ..layers import (
    bilinear_tensor_product,
    conv2d_transpose,
    conv3d,
    conv3d_transpose,
    create_parameter,
    data_norm,
    group_norm,
    instance_norm,
    layer_norm,
    prelu,
    py_func,
    row_conv,
    spectral_norm,
)
from ..layers.control_flow import case, cond, switch_case, while_loop
from ..layers.crf import crf_decoding
from ..layers.nn import batch_norm, conv2d, pool2d, sparse_embedding
from ..layers.nn import embedding_v2 as embedding
from ..layers.nn import static_fc as fc
from ..layers.sampled import nce
from ..layers.sequence import (
    sequence_concat,
    sequence_expand,
    sequence_first_step,
    sequence_last_step,
    sequence_pool,
    sequence_reshape,
)

__all__ = [
    "batch_norm",
    "bilinear_tensor_product",
    "case",
    "cond",
    "conv2d",
    "conv2d_transpose",
    "conv3d",
    "conv3d_transpose",
    "create_parameter",
    "crf_decoding",
    "data_norm",
    "embedding",
    "fc",
    "group_norm",
    "instance_norm",
    "layer_norm",
    "nce",
    "pool2d",
    "prelu",
    "py_func",
    "row_conv",
    "sequence_concat",
    "sequence_expand",
    "sequence_first_step",
    "sequence_last_step",
    "sequence_pool",
    "sequence_reshape",
    "sparse_embedding",
    "spectral_norm",
    "switch_case",
    "while_loop",
]

__getattr__ = absent.getattr_for(__name__)
