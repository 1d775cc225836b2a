"""Sampled loss layer functions over a large vocabulary: nce and hsigmoid (Paddle 1.8's
fluid.layers spellings)."""

from __future__ import annotations

from collections import deque

import numpy as np

from ..ir.errors import FleetgraphError
from ..ir.program import Variable
from ..ops.sampled import CUSTOM_DIST, LOG_UNIFORM, UNIFORM
from ..param_attr import ParamAttr
from .helper import LayerHelper
from .tensor import assign

_SAMPLERS = {"uniform": UNIFORM, "log_uniform": LOG_UNIFORM, "custom_dist": CUSTOM_DIST}


def _check(layer: str, what: str, var, dtypes: tuple[str, ...]) -> None:
    """Paddle's check_variable_and_dtype: a TypeError for a value that is no variable or of another dtype."""
    if not isinstance(var, Variable):
        raise TypeError(f"{layer}: {what} expected a Variable, got {type(var).__name__}")
    if var.dtype not in dtypes:
        raise TypeError(f"{layer}: {what} '{var.name}' is {var.dtype}; expected {' or '.join(dtypes)}")


def _alias_tables(dist, classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Walker's alias tables of `dist` as Paddle's nce layer builds them: column i keeps class i with
    probability alias_probs[i], else gives alias[i] (-1: always i)."""
    alias_probs, alias = [0.0] * classes, [0] * classes
    bigs, littles = deque(), deque()
    for i in range(classes):
        p = dist[i] * classes
        if p > 1.0:
            bigs.append((i, p))
        elif p < 1.0:
            littles.append((i, p))
        else:
            alias_probs[i], alias[i] = p, -1
    while bigs and littles:
        (big, big_p), (little, little_p) = bigs.popleft(), littles.popleft()
        alias_probs[little], alias[little] = little_p, big
        left = big_p + little_p - 1.0
        if left > 1.0:
            bigs.append((big, left))
        elif left < 1.0:
            littles.append((big, left))
        else:
            alias_probs[big], alias[big] = left, -1
    for rest in (bigs, littles):  # Paddle settles the first one left over of each kind
        if rest:
            alias_probs[rest[0][0]], alias[rest[0][0]] = 1.0, -1
    return np.array(alias, dtype=np.int32), np.array(alias_probs, dtype=np.float32)


def nce(
    input: Variable,
    label: Variable,
    num_total_classes: int,
    sample_weight: Variable | None = None,
    param_attr=None,
    bias_attr=None,
    num_neg_samples: int | None = None,
    name: str | None = None,
    sampler: str = "uniform",
    custom_dist=None,
    seed: int = 0,
    is_sparse: bool = False,
) -> Variable:
    """The noise-contrastive estimation loss of each row of `input` [N, D] for its classes `label`
    [N, true] against num_neg_samples (default 10) classes drawn by `sampler` ('uniform',
    'log_uniform', or 'custom_dist' from the probabilities `custom_dist`), divided by
    num_neg_samples + 1 as Paddle's. Weight [num_total_classes, D] and bias [num_total_classes, 1]
    are created from param_attr and bias_attr (False: no bias); `is_sparse` makes the weight's
    gradient SelectedRows of the sampled classes."""
    _check("nce", "input", input, ("float32", "float64"))
    _check("nce", "label", label, ("int64",))
    if sample_weight is not None and not isinstance(sample_weight, Variable):
        raise TypeError(f"nce: sample_weight expected a Variable or None, got {type(sample_weight).__name__}")
    if sampler not in _SAMPLERS:
        raise FleetgraphError(f"nce: sampler {sampler!r}; expected one of {', '.join(_SAMPLERS)}")
    helper = LayerHelper("nce", name, inputs=[input, label])
    weight = helper.create_parameter(param_attr, [num_total_classes, input.shape[1]], input.dtype)
    inputs = {"Input": [input], "Label": [label], "Weight": [weight]}
    if ParamAttr._to_attr(bias_attr) is not False:
        inputs["Bias"] = [helper.create_parameter(bias_attr, [num_total_classes, 1], input.dtype, is_bias=True)]
    if sample_weight is not None:
        inputs["SampleWeight"] = [sample_weight]
    if sampler == "custom_dist":
        if custom_dist is None or len(custom_dist) != num_total_classes:
            raise FleetgraphError(
                f"nce: sampler 'custom_dist' expected custom_dist with one probability per class "
                f"({num_total_classes}), got {None if custom_dist is None else len(custom_dist)}"
            )
        alias, alias_probs = _alias_tables(custom_dist, num_total_classes)
        inputs["CustomDistProbs"] = [assign(np.asarray(custom_dist, dtype=np.float32))]
        inputs["CustomDistAlias"] = [assign(alias)]
        inputs["CustomDistAliasProbs"] = [assign(alias_probs)]
    num_neg_samples = 10 if num_neg_samples is None else int(num_neg_samples)
    cost = helper.create_variable_for_type_inference(input.dtype)
    logits = helper.create_variable_for_type_inference(input.dtype, stop_gradient=True)
    labels = helper.create_variable_for_type_inference("int64", stop_gradient=True)
    attrs = {
        "num_total_classes": int(num_total_classes),
        "num_neg_samples": num_neg_samples,
        "seed": int(seed),
        "sampler": _SAMPLERS[sampler],
        "is_sparse": bool(is_sparse),
        "remote_prefetch": bool(is_sparse),
    }
    helper.append_op("nce", inputs, {"Cost": [cost], "SampleLogits": [logits], "SampleLabels": [labels]}, attrs)
    return cost / (num_neg_samples + 1)


def hsigmoid(
    input: Variable,
    label: Variable,
    num_classes: int,
    param_attr=None,
    bias_attr=None,
    name: str | None = None,
    path_table: Variable | None = None,
    path_code: Variable | None = None,
    is_custom: bool = False,
    is_sparse: bool = False,
) -> Variable:
    """The hierarchical sigmoid loss [N, 1] of each row of `input` [N, D] for its class `label`:
    the cross entropy of the binary decisions on the class's path through a complete binary tree of
    num_classes leaves (weights [num_classes - 1, D]), or with `is_custom` through the tree whose
    nodes and branches `path_table` and `path_code` give per row (weights [num_classes, D], where
    num_classes counts the tree's inner nodes). `is_sparse` (custom trees only, as Paddle's) makes
    the weight's gradient SelectedRows of the nodes on the paths."""
    _check("hsigmoid", "input", input, ("float32", "float64"))
    _check("hsigmoid", "label", label, ("int64",))
    if not is_custom:
        if num_classes is None or num_classes < 2:
            raise ValueError("hsigmoid: num_classes must not be less than 2 with the default tree")
        if path_table is not None or path_code is not None:
            raise ValueError("hsigmoid: only num_classes should be passed without a custom tree")
        is_sparse = False  # Paddle's sparse update needs the custom tree's paths
    elif path_table is None or path_code is None or num_classes is None:
        raise ValueError("hsigmoid: a custom tree expects path_table, path_code and num_classes")
    helper = LayerHelper("hierarchical_sigmoid", name, inputs=[input, label])
    nodes = num_classes if is_custom else num_classes - 1
    weight = helper.create_parameter(param_attr, [nodes, input.shape[1]], input.dtype)
    inputs = {"X": [input], "W": [weight], "Label": [label]}
    if is_custom:
        inputs.update(PathTable=[path_table], PathCode=[path_code])
    if ParamAttr._to_attr(bias_attr) is not False:
        inputs["Bias"] = [helper.create_parameter(bias_attr, [nodes, 1], input.dtype, is_bias=True)]
    out = helper.create_variable_for_type_inference(input.dtype)
    pre_out = helper.create_variable_for_type_inference(input.dtype, stop_gradient=True)
    attrs = {"num_classes": int(num_classes), "is_sparse": bool(is_sparse), "remote_prefetch": bool(is_sparse)}
    # Paddle's layer also names W as W_Out, an in-place alias for its remote prefetch; here an op
    # writing the parameter it reads would make the parameter an output of the forward pass (and
    # lose its gradient eagerly), so the optional slot stays unbound
    helper.append_op("hierarchical_sigmoid", inputs, {"Out": [out], "PreOut": [pre_out]}, attrs)
    return out
