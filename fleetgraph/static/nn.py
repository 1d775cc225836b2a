"""`paddle.static.nn`: the layer functions with their 2.x names."""

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
    "case",
    "cond",
    "crf_decoding",
    "conv2d",
    "embedding",
    "fc",
    "nce",
    "pool2d",
    "sequence_concat",
    "sequence_expand",
    "sequence_first_step",
    "sequence_last_step",
    "sequence_pool",
    "sequence_reshape",
    "sparse_embedding",
    "switch_case",
    "while_loop",
]
