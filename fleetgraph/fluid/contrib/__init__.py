"""`fluid.contrib`: the contrib tools fleetgraph has (memory and op-frequency statistics, the model
summary, decoupled weight decay, fused_embedding_seq_pool, ctr_metric_bundle); the others raise
`NotInFleetgraph` saying why (see `fleetgraph.absent`)."""

from ... import absent
from . import extend_optimizer, layers, memory_usage_calc, model_stat, op_frequence
from .extend_optimizer import extend_with_decoupled_weight_decay
from .layers import ctr_metric_bundle, fused_embedding_seq_pool, tree_conv
from .memory_usage_calc import memory_usage
from .op_frequence import op_freq_statistic

__getattr__ = absent.getattr_for(__name__)

__all__ = [
    "ctr_metric_bundle",
    "extend_optimizer",
    "extend_with_decoupled_weight_decay",
    "fused_embedding_seq_pool",
    "layers",
    "memory_usage",
    "memory_usage_calc",
    "model_stat",
    "op_freq_statistic",
    "op_frequence",
    "tree_conv",
]
