"""Paddle 2.0's weight_norm_hook: a layer's weight w re-parameterised as g * v / ||v||, the norm
taken over every axis but `dim`, recomputed from the parameters weight_g and weight_v by a forward
pre-hook, so that training moves g and v (Salimans and Kingma, 2016). Dynamic mode, as Paddle's;
a program takes fluid's WeightNormParamAttr instead."""

from __future__ import annotations

from ...dygraph import mode
from ...dygraph.dispatch import bind
from ...layers import math as _math
from ...layers import tensor as _tensor
from ...layers.normalization import l2_normalize

__all__ = ["weight_norm", "remove_weight_norm"]


def _rows_first(p, dim: int):
    """p as a matrix of one row per index of `dim` (its axes swapped with the first when needed),
    and the permutation used."""
    perm = list(range(len(p.shape)))
    perm[0], perm[dim] = dim, 0
    moved = _tensor.transpose(p, perm) if dim else p
    return _tensor.reshape(moved, [moved.shape[0], -1]), perm, moved.shape


def norm_except_dim(p, dim: int):
    """sqrt(sum of p^2 + 1e-12) over every axis but `dim` (over all of them for dim -1)."""
    if dim == -1:
        return bind("sqrt", {"X": [_math.reduce_sum(p * p) + 1e-12]})
    rows, _, _ = _rows_first(p, dim)
    return bind("sqrt", {"X": [_math.reduce_sum(rows * rows, dim=1) + 1e-12]})


def _weight_norm(v, g, dim: int):
    if dim == -1:
        return v / (bind("sqrt", {"X": [_math.reduce_sum(v * v)]}) + 1e-12) * g
    rows, perm, moved_shape = _rows_first(v, dim)
    normalized = _tensor.reshape(l2_normalize(rows, axis=1), list(moved_shape))
    if dim:
        normalized = _tensor.transpose(normalized, perm)
    return bind("elementwise_mul", {"X": [normalized], "Y": [g]}, {"axis": dim})


class WeightNorm:
    """The forward pre-hook: sets `name` from `name`_g and `name`_v before each forward."""

    def __init__(self, name: str, dim: int) -> None:
        self.name, self.dim = name, dim

    def compute_weight(self, layer):
        return _weight_norm(getattr(layer, f"{self.name}_v"), getattr(layer, f"{self.name}_g"), self.dim)

    @staticmethod
    def apply(layer, name: str, dim):
        if not mode.in_dynamic_mode():
            raise NotImplementedError(
                "weight_norm: dynamic mode only, as Paddle 2.0's; in a program use WeightNormParamAttr"
            )
        for hook in layer._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same parameter {name}")
        dim = -1 if dim is None else dim
        rank = len(layer._parameters[name].shape)
        if not -rank <= dim < rank:
            raise ValueError(f"weight_norm: dim expected in [{-rank}, {rank}), got {dim}")
        if dim != -1:
            dim = (dim + rank) % rank
        fn = WeightNorm(name, dim)
        w = getattr(layer, name)
        del layer._parameters[name]
        g_value = norm_except_dim(w, dim)
        v = layer.add_parameter(f"{name}_v", layer.create_parameter(list(w.shape), dtype=w.dtype))
        g = layer.add_parameter(f"{name}_g", layer.create_parameter(list(g_value.shape), dtype=w.dtype))
        v.set_value(w.numpy())
        g.set_value(g_value.numpy())
        setattr(layer, name, fn.compute_weight(layer))
        layer.register_forward_pre_hook(fn)
        return fn

    def remove(self, layer) -> None:
        w_value = self.compute_weight(layer)
        delattr(layer, self.name)
        del layer._parameters[f"{self.name}_g"]
        del layer._parameters[f"{self.name}_v"]
        w = layer.add_parameter(self.name, layer.create_parameter(list(w_value.shape), dtype=w_value.dtype))
        w.set_value(w_value.numpy())

    def __call__(self, layer, inputs) -> None:
        setattr(layer, self.name, self.compute_weight(layer))


def weight_norm(layer, name="weight", dim=0):
    """`layer` with its parameter `name` split into `name`_g (the norms over every axis but dim; one
    overall norm for dim None) and `name`_v (the direction), recombined before each forward."""
    WeightNorm.apply(layer, name, dim)
    return layer


def remove_weight_norm(layer, name="weight"):
    """`layer` with `name` a plain parameter again, of the value g * v / ||v|| had."""
    for key, hook in layer._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(layer)
            del layer._forward_pre_hooks[key]
            return layer
    raise ValueError(f"weight_norm of {name!r} not found in {layer}")
