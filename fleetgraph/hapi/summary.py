"""`paddle.summary(net, input_size, dtypes)`: each leaf layer's input and output shapes and parameters,
from one forward pass on zeros, and the totals, printed as Paddle 2.0's table.

In static mode (as Paddle's, which builds the forward over its inputs instead of running it) the pass
appends the forward to a scratch copy of the program that holds the network's parameters, over placeholders of the same
shapes (a batch of 1): nothing runs, and the user's programs are left as they were."""

from __future__ import annotations

import contextlib

import numpy as np

from ..dygraph.mode import in_dynamic_mode, no_grad
from ..dygraph.tensor import Tensor, to_tensor
from ..ir import Program, program_guard, unique_name
from ..ir.clone import clone_program
from ..ir.program import Variable
from ..layers.io import data


def _shapes(value) -> list:
    if isinstance(value, (list, tuple)):
        return [_shapes(v) for v in value]
    return list(value.shape) if isinstance(value, (Tensor, Variable)) else []


def _zeros(size, dtype):
    """Zeros of each shape (None or -1 made 1); in static mode, placeholders of those shapes."""
    if isinstance(size, list) and size and isinstance(size[0], (list, tuple)):
        return [_zeros(s, dtype) for s in size]
    shape = [1 if d is None or d < 0 else int(d) for d in size]
    if not in_dynamic_mode():
        return data(unique_name.generate("summary_input"), shape, dtype or "float32")
    return to_tensor(np.zeros(shape, dtype=dtype or "float32"))


def _forward_scope(net):
    """Static mode: a scratch copy of the program that holds the network's parameters."""
    if in_dynamic_mode():
        return contextlib.nullcontext()
    params = net.parameters()
    return program_guard(clone_program(params[0].block.program) if params else Program(), Program())


@no_grad()
def summary(net, input_size, dtypes=None) -> dict:
    """Print the table; {'total_params': n, 'trainable_params': m}."""
    if input_size is None:
        raise ValueError("paddle.summary: expected input_size, a shape or a list of shapes")
    size = [list(input_size)] if isinstance(input_size, tuple) else input_size
    dtype = dtypes[0] if isinstance(dtypes, (list, tuple)) else dtypes
    with _forward_scope(net):
        inputs = _zeros(size, dtype)
        rows = _rows(net, inputs if isinstance(inputs, list) else [inputs])
    line = "-" * 75
    print(line)
    print(f"{'Layer (type)':>15}{'Input Shape':>25}{'Output Shape':>20}{'Param #':>15}")
    print("=" * 75)
    total = trainable = 0
    for name, ins, outs, own in rows:
        n = sum(int(np.prod(p.shape)) for p in own)
        total += n
        trainable += sum(int(np.prod(p.shape)) for p in own if not p.stop_gradient)
        print(f"{name:>15}{str(ins):>25}{str(outs):>20}{n:>15,}")
    print("=" * 75)
    print(f"Total params: {total:,}")
    print(f"Trainable params: {trainable:,}")
    print(f"Non-trainable params: {total - trainable:,}")
    print(line)
    return {"total_params": total, "trainable_params": trainable}


def _rows(net, inputs: list) -> list:
    """(name, input shapes, output shapes, own parameters) of each leaf layer, in the order they ran."""
    rows, hooks, counts = [], [], {}

    def record(layer, ins, outs):
        kind = type(layer).__name__
        counts[kind] = counts.get(kind, 0) + 1
        own = layer.parameters(include_sublayers=False)
        rows.append((f"{kind}-{counts[kind]}", _shapes(list(ins)), _shapes(outs), own))

    for layer in net.sublayers(include_self=True):
        if not layer.sublayers():
            hooks.append(layer.register_forward_post_hook(record))
    was_training = net.training
    net.eval()
    try:
        net(*inputs)
    finally:
        for hook in hooks:
            hook.remove()
        if was_training:
            net.train()
    return rows
