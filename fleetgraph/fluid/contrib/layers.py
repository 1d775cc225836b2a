"""`fluid.contrib.layers`: fused_embedding_seq_pool and ctr_metric_bundle (the other contrib layers,
search and tree-sampling ops, are not in fleetgraph: `fleetgraph.absent`)."""

from __future__ import annotations

from ... import absent
from ...layers import nn as _nn
from ...layers.helper import LayerHelper
from ...layers.math import abs as _abs
from ...layers.math import elementwise_add, elementwise_sub, reduce_sum, sigmoid, square
from ...layers.sequence import sequence_pool
from ...layers.tensor import assign, create_global_var
from ...layers.tensor_shape import ones_like

__all__ = ["ctr_metric_bundle", "fused_embedding_seq_pool", "tree_conv"]


def tree_conv(
    nodes_vector,
    edge_set,
    output_size,
    num_filters=1,
    max_depth=2,
    act="tanh",
    param_attr=None,
    bias_attr=None,
    name=None,
):
    """Tree-based convolution (TBCNN) over each tree's nodes [batch, nodes, features] and edges
    [batch, edges, 2]: one tree_conv op with filter [features, 3, output_size, num_filters], then a
    bias of the output's shape past the batch and `act`, as Paddle's."""
    helper = LayerHelper("tree_conv", name, inputs=[nodes_vector, edge_set])
    w = helper.create_parameter(param_attr, [nodes_vector.shape[2], 3, output_size, num_filters], nodes_vector.dtype)
    out = helper.create_variable_for_type_inference(nodes_vector.dtype)
    helper.append_op(
        "tree_conv",
        {"NodesVector": [nodes_vector], "EdgeSet": [edge_set], "Filter": [w]},
        {"Out": [out]},
        {"max_depth": max_depth},
    )
    return helper.append_activation(helper.append_bias_op(out, bias_attr), act)


def fused_embedding_seq_pool(
    input, size, is_sparse=False, padding_idx=None, combiner="sum", param_attr=None, dtype="float32"
):
    """The sum over each sequence of the embeddings of its ids: a lookup then a sequence sum pool
    (Paddle fuses the two into one op of the same values)."""
    if combiner != "sum":
        raise ValueError(f"fused_embedding_seq_pool: combiner; expected 'sum' (Paddle's only one), got {combiner!r}")
    emb = _nn.embedding(input, size, is_sparse=is_sparse, padding_idx=padding_idx, param_attr=param_attr, dtype=dtype)
    return sequence_pool(emb, "sum")


def ctr_metric_bundle(input, label):
    """Running sums over batches of a CTR model's squared and absolute error, predicted CTR, q value
    (the sum of sigmoid(input)), positives and instances, persistable from 0, as Paddle's:
    MAE = abserr / ins_num, RMSE = sqrt(sqrerr / ins_num), predicted CTR = prob / ins_num,
    q = q / ins_num. Returns (local_sqrerr, local_abserr, local_prob, local_q, local_pos_num,
    local_ins_num)."""
    if list(input.shape) != list(label.shape):
        raise ValueError(
            f"ctr_metric_bundle: input and label expected the same shape, got {list(input.shape)} and "
            f"{list(label.shape)}"
        )
    totals = [create_global_var([1], 0.0, "float32", persistable=True) for _ in range(6)]
    error = elementwise_sub(input, label)
    batch = [
        square(error),
        _abs(error),
        input,
        sigmoid(input),
        label,
        ones_like(input),
    ]
    for total, values in zip(totals, batch):
        assign(elementwise_add(reduce_sum(values), total), output=total)
    return tuple(totals)


__getattr__ = absent.getattr_for(__name__)
