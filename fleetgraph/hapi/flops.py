"""`paddle.flops(net, input_size, custom_ops, print_detail)`: the multiply-adds of one forward pass,
counted per leaf layer by Paddle 2.0's rules (hapi/dynamic_flops.py), and the parameter count."""

from __future__ import annotations

import warnings

import numpy as np

from ..dygraph.mode import no_grad
from ..dygraph.tensor import to_tensor


def _numel(t) -> int:
    return int(np.prod(t.shape))


def _conv(layer, x, y) -> int:
    kernel = int(np.prod(layer.weight.shape[2:]))
    bias = 1 if getattr(layer, "bias", None) is not None else 0
    groups = getattr(layer, "_groups", 1) or 1
    return int(_numel(y) * (x[0].shape[1] / groups * kernel + bias))


def _adaptive_avg(layer, x, y) -> int:
    kernel = np.array(x[0].shape[2:]) // np.array(y.shape[2:])
    return int((int(np.prod(kernel)) + 1) * _numel(y))


_RULES = {
    **dict.fromkeys(["Conv1D", "Conv2D", "Conv3D", "Conv1DTranspose", "Conv2DTranspose", "Conv3DTranspose"], _conv),
    **dict.fromkeys(["BatchNorm", "BatchNorm1D", "BatchNorm2D", "BatchNorm3D"], lambda m, x, y: 2 * _numel(x[0])),
    **dict.fromkeys(["ReLU", "ReLU6", "Dropout"], lambda m, x, y: 0),
    "LeakyReLU": lambda m, x, y: _numel(x[0]),
    "Linear": lambda m, x, y: int(m.weight.shape[0]) * _numel(y),
    **dict.fromkeys(["AvgPool1D", "AvgPool2D", "AvgPool3D"], lambda m, x, y: _numel(y)),
    **dict.fromkeys(["AdaptiveAvgPool1D", "AdaptiveAvgPool2D", "AdaptiveAvgPool3D"], _adaptive_avg),
}


@no_grad()
def flops(net, input_size, custom_ops=None, print_detail=False) -> int:
    """Total FLOPs of net on one input of input_size (custom_ops: layer class -> f(layer, inputs,
    output) returning its count); a layer with no rule counts zero, as Paddle's, said once per type."""
    from ..ir import Program
    from ..nn.layer.layers import Layer

    if isinstance(net, Program):
        raise NotImplementedError("paddle.flops: counting a static Program is not built here; pass the nn.Layer")
    if not isinstance(net, Layer):
        warnings.warn("Your model must be an instance of paddle.nn.Layer or paddle.static.Program.", stacklevel=2)
        return -1
    custom_ops = custom_ops or {}
    counted, hooks, seen = [], [], set()
    for layer in net.sublayers(include_self=True):
        if layer.sublayers():
            continue
        kind = type(layer)
        rule = custom_ops.get(kind) or _RULES.get(kind.__name__)
        if kind not in seen:
            seen.add(kind)
            if rule is None:
                print(f"Cannot find suitable count function for {kind}. Treat it as zero FLOPs.")

        def hook(layer, ins, out, rule=rule):  # noqa: E306
            params = sum(_numel(p) for p in layer.parameters())
            counted.append(
                (layer, int(rule(layer, ins, out)) if rule else 0, params, list(ins[0].shape), list(out.shape))
            )

        hooks.append(layer.register_forward_post_hook(hook))
    was_training = net.training
    net.eval()
    try:
        net(to_tensor(np.random.default_rng(0).standard_normal(input_size).astype("float32")))
    finally:
        for h in hooks:
            h.remove()
        if was_training:
            net.train()
    total_ops = sum(c[1] for c in counted)
    total_params = sum(c[2] for c in counted)
    if print_detail:
        for layer, ops, params, ins, outs in counted:
            print(f"{type(layer).__name__:>20} {str(ins):>20} {str(outs):>20} {params:>10} {ops:>12}")
    print(f"Total Flops: {total_ops}     Total Params: {total_params}")
    return total_ops
