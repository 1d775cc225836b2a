"""Neural-network layer functions: fc, embedding, conv2d, pool2d, batch_norm, dropout, accuracy."""

from __future__ import annotations

import math

from ..initializer import Constant
from ..ir import unique_name
from ..ir.errors import FleetgraphError
from ..ir.framework import default_main_program
from ..ir.program import VarType
from ..ops.metric import stat_shape
from ..param_attr import ParamAttr
from .conv_nd import conv_nd, pool_nd
from .helper import LayerHelper


def _pair(v, name):
    if isinstance(v, int):
        return [v, v]
    v = [int(a) for a in v]
    if len(v) not in (2, 4):
        raise FleetgraphError(f"{name}: expected an int or 2 ints, got {v}")
    return v


def fc(input, size, num_flatten_dims=1, param_attr=None, bias_attr=None, act=None, name=None):
    """y = act(sum_i input_i @ w_i + b): one `mul` per input, a `sum` when there are several, then
    `elementwise_add` and the activation."""
    inputs = input if isinstance(input, (list, tuple)) else [input]
    helper = LayerHelper("fc", name, inputs=inputs)
    attrs = param_attr if isinstance(param_attr, (list, tuple)) else [param_attr] * len(inputs)
    products = []
    for x, attr in zip(inputs, attrs):
        width = x.shape[num_flatten_dims:]
        if any(d < 0 for d in width):
            raise FleetgraphError(
                f"fc: input '{x.name}' shape {list(x.shape)} has unknown dims after "
                f"num_flatten_dims={num_flatten_dims}; expected them known"
            )
        w = helper.create_parameter(attr, [math.prod(width), size], x.dtype)
        out = helper.create_variable_for_type_inference(x.dtype)
        helper.append_op(
            "mul", {"X": [x], "Y": [w]}, {"Out": [out]}, {"x_num_col_dims": num_flatten_dims, "y_num_col_dims": 1}
        )
        products.append(out)
    pre_bias = products[0]
    if len(products) > 1:
        pre_bias = helper.create_variable_for_type_inference(inputs[0].dtype)
        helper.append_op("sum", {"X": products}, {"Out": [pre_bias]})
    pre_act = helper.append_bias_op(pre_bias, bias_attr, dim_start=num_flatten_dims)
    return helper.append_activation(pre_act, act)


def static_fc(x, size, num_flatten_dims=1, weight_attr=None, bias_attr=None, activation=None, name=None):
    """`paddle.static.nn.fc`: fc with the 2.x argument names."""
    return fc(x, size, num_flatten_dims, weight_attr, bias_attr, activation, name)


def _embedding(op_type, input, size, is_sparse, is_distributed, padding_idx, param_attr, dtype, table=False):
    helper = LayerHelper("embedding", inputs=input)
    kind = {"type": VarType.SELECTED_ROWS} if table else {}
    w = helper.create_parameter(param_attr, list(size), dtype, **kind)
    pad = -1 if padding_idx is None else (padding_idx if padding_idx >= 0 else size[0] + padding_idx)
    out = helper.create_variable_for_type_inference(dtype)
    helper.append_op(
        op_type,
        {"W": [w], "Ids": [input]},
        {"Out": [out]},
        {
            "is_sparse": is_sparse,
            "is_distributed": is_distributed,
            # Paddle's mark of a table that parameter-server training keeps on the pservers
            "remote_prefetch": table or (is_sparse and not is_distributed),
            "padding_idx": pad,
        },
    )
    return out


def embedding(input, size, is_sparse=False, is_distributed=False, padding_idx=None, param_attr=None, dtype="float32"):
    """`fluid.layers.embedding`: ids of shape [..., 1] -> [..., size[1]] (lookup_table)."""
    return _embedding("lookup_table", input, size, is_sparse, is_distributed, padding_idx, param_attr, dtype)


def embedding_v2(
    input, size, is_sparse=False, is_distributed=False, padding_idx=None, param_attr=None, dtype="float32"
):
    """`fluid.embedding` / `paddle.static.nn.embedding`: ids of any shape -> ids.shape + [size[1]]."""
    return _embedding("lookup_table_v2", input, size, is_sparse, is_distributed, padding_idx, param_attr, dtype)


def sparse_embedding(
    input,
    size,
    padding_idx=None,
    is_test=False,
    entry=None,
    table_class="MemorySparseTable",
    param_attr=None,
    dtype="float32",
    slot=None,
):
    """`paddle.static.nn.sparse_embedding`: an embedding whose table parameter-server training keeps on
    the pservers only, grown as ids touch it (lookup_table with a SELECTED_ROWS table, as Paddle's).
    In one process it is an ordinary embedding with sparse gradients."""
    if entry is not None:
        raise FleetgraphError(
            "sparse_embedding: entry (admission of new ids by count or probability) is not supported; "
            "expected None: every id gets a row"
        )
    if table_class not in ("CommonSparseTable", "SSDSparseTable", "MemorySparseTable"):
        raise FleetgraphError(
            f"sparse_embedding: table_class {table_class!r}; expected CommonSparseTable, SSDSparseTable or "
            "MemorySparseTable"
        )
    return _embedding("lookup_table", input, size, True, True, padding_idx, param_attr, dtype, table=True)


def conv2d(
    input,
    num_filters,
    filter_size,
    stride=1,
    padding=0,
    dilation=1,
    groups=None,
    param_attr=None,
    bias_attr=None,
    use_cudnn=True,
    act=None,
    name=None,
    data_format="NCHW",
):
    """`fluid.layers.conv2d`: padding as Paddle's (an int, pairs, 'SAME' or 'VALID'), NCHW or NHWC."""
    return conv_nd("conv2d", 2, **locals())


def pool2d(
    input,
    pool_size=-1,
    pool_type="max",
    pool_stride=1,
    pool_padding=0,
    global_pooling=False,
    use_cudnn=True,
    ceil_mode=False,
    name=None,
    exclusive=True,
    data_format="NCHW",
):
    """`fluid.layers.pool2d`: exclusive averages leave padding out of the divisor; NCHW or NHWC."""
    return pool_nd("pool2d", 2, **locals())


def adaptive_avg_pool2d(x, output_size, data_format="NCHW", name=None):
    helper = LayerHelper("pool2d", name, inputs=x)
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op(
        "pool2d",
        {"X": [x]},
        {"Out": [out]},
        {
            "pooling_type": "avg",
            "ksize": _pair(output_size, "output_size"),
            "adaptive": True,
            "data_format": data_format,
        },
    )
    return out


def batch_norm(
    input,
    act=None,
    is_test=False,
    momentum=0.9,
    epsilon=1e-05,
    param_attr=None,
    bias_attr=None,
    data_layout="NCHW",
    in_place=False,
    name=None,
    moving_mean_name=None,
    moving_variance_name=None,
    do_model_average_for_mean_and_var=True,
    use_global_stats=False,
):
    helper = LayerHelper("batch_norm", name, inputs=input)
    c = input.shape[1] if data_layout == "NCHW" else input.shape[-1]
    scale = helper.create_parameter(param_attr, [c], input.dtype, default_initializer=Constant(1.0))
    bias = helper.create_parameter(bias_attr, [c], input.dtype, is_bias=True)
    mean = helper.create_parameter(
        ParamAttr(
            name=moving_mean_name or unique_name.generate(f"{helper.name}.w"),
            initializer=Constant(0.0),
            trainable=False,
        ),
        [c],
        input.dtype,
    )
    var = helper.create_parameter(
        ParamAttr(
            name=moving_variance_name or unique_name.generate(f"{helper.name}.w"),
            initializer=Constant(1.0),
            trainable=False,
        ),
        [c],
        input.dtype,
    )
    saved_mean = helper.create_variable_for_type_inference(input.dtype, stop_gradient=True)
    saved_var = helper.create_variable_for_type_inference(input.dtype, stop_gradient=True)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op(
        "batch_norm",
        {"X": [input], "Scale": [scale], "Bias": [bias], "Mean": [mean], "Variance": [var]},
        {"Y": [out], "MeanOut": [mean], "VarianceOut": [var], "SavedMean": [saved_mean], "SavedVariance": [saved_var]},
        {
            "momentum": momentum,
            "epsilon": epsilon,
            "is_test": is_test,
            "data_layout": data_layout,
            "use_global_stats": use_global_stats,
        },
    )
    return helper.append_activation(out, act)


def dropout(x, dropout_prob, is_test=False, seed=None, name=None, dropout_implementation="downgrade_in_infer"):
    helper = LayerHelper("dropout", name, inputs=x)
    if not seed and default_main_program().random_seed:
        seed = default_main_program().random_seed
    out = helper.create_variable_for_type_inference(x.dtype)
    mask = helper.create_variable_for_type_inference("uint8", stop_gradient=True)
    helper.append_op(
        "dropout",
        {"X": [x]},
        {"Out": [out], "Mask": [mask]},
        {
            "dropout_prob": float(dropout_prob),
            "is_test": is_test,
            "fix_seed": seed is not None,
            "seed": int(seed or 0),
            "dropout_implementation": dropout_implementation,
        },
    )
    return out


def topk(input, k, name=None):
    """Fluid's top_k over the last axis (Paddle 2.x's paddle.topk is `topk_v2`)."""
    helper = LayerHelper("top_k", name, inputs=input)
    values = helper.create_variable_for_type_inference(input.dtype)
    indices = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    helper.append_op("top_k", {"X": [input]}, {"Out": [values], "Indices": [indices]}, {"k": int(k)})
    return values, indices


def topk_v2(x, k, axis=None, largest=True, sorted=True, name=None):
    """paddle.topk: the top_k_v2 op, along `axis` (default the last), largest or smallest first."""
    helper = LayerHelper("top_k_v2", name, inputs=x)
    values = helper.create_variable_for_type_inference(x.dtype)
    indices = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    attrs = {"k": int(k), "axis": -1 if axis is None else int(axis), "largest": bool(largest), "sorted": bool(sorted)}
    helper.append_op("top_k_v2", {"X": [x]}, {"Out": [values], "Indices": [indices]}, attrs)
    return values, indices


def accuracy(input, label, k=1, correct=None, total=None, name=None):
    """Fluid's accuracy: fraction of samples whose label is among the top-k scores (top_k, accuracy)."""
    return _accuracy(topk(input, k), label, correct, total, name)


def accuracy_v2(input, label, k=1, correct=None, total=None, name=None):
    """paddle.metric.accuracy: as Fluid's, with Paddle 2.x's top_k_v2 op."""
    return _accuracy(topk_v2(input, k), label, correct, total, name)


def _accuracy(top, label, correct, total, name):
    values, indices = top
    helper = LayerHelper("accuracy", name, inputs=[values, indices, label])
    acc = helper.create_variable_for_type_inference("float32", stop_gradient=True)
    correct = correct or helper.create_variable_for_type_inference("int32", stop_gradient=True)
    total = total or helper.create_variable_for_type_inference("int32", stop_gradient=True)
    helper.append_op(
        "accuracy",
        {"Out": [values], "Indices": [indices], "Label": [label]},
        {"Accuracy": [acc], "Correct": [correct], "Total": [total]},
    )
    return acc


def auc(input, label, curve="ROC", num_thresholds=2**12 - 1, topk=1, slide_steps=1, name=None):
    """ROC AUC of the positive-class probabilities `input[:, -1]`: over the last `slide_steps` batches
    and over all batches so far, as two auc ops (window first, as Paddle). Returns (auc, batch_auc,
    [batch_stat_pos, batch_stat_neg, stat_pos, stat_neg]): persistable int64 histograms started at
    zero, in Paddle's layout (ops/metric.py `stat_shape`), named as Paddle names a global variable
    made without a name (`_generated_var_N`, in that order), which scripts reset by name."""
    if curve != "ROC":
        raise FleetgraphError(f"auc: curve expected 'ROC', got {curve!r}")
    helper = LayerHelper("auc", name, inputs=[input, label])
    auc_out, batch_auc = (helper.create_variable_for_type_inference("float64", stop_gradient=True) for _ in range(2))
    stats = []
    for out, steps in ((batch_auc, slide_steps), (auc_out, 0)):
        shape = list(stat_shape(num_thresholds, steps))
        pos, neg = (
            helper.create_global_variable(shape, "int64", persistable=True, name=unique_name.generate("_generated_var"))
            for _ in range(2)
        )
        for stat in (pos, neg):
            helper.set_variable_initializer(stat, Constant(0.0))
        helper.append_op(
            "auc",
            {"Predict": [input], "Label": [label], "StatPos": [pos], "StatNeg": [neg]},
            {"AUC": [out], "StatPosOut": [pos], "StatNegOut": [neg]},
            {"curve": curve, "num_thresholds": num_thresholds, "slide_steps": steps},
        )
        stats += [pos, neg]
    return auc_out, batch_auc, stats
