"""Eager parameters, initialized by the same initializer ops and random streams as the startup program's."""

from __future__ import annotations

from ..ir.framework import default_startup_program
from .dispatch import EagerProgram
from .tensor import ParamBase, Tensor


def create_parameter(
    name: str,
    shape,
    dtype: str,
    initializer,
    *,
    trainable: bool = True,
    regularizer=None,
    optimize_attr=None,
    need_clip: bool = True,
) -> ParamBase:
    """A parameter whose value is what the startup program's init op for `name` would draw: the op
    runs now with the startup program's random_seed, and a seeded op's stream is keyed by the
    variable's name, so dynamic and static training of one model with one seed start equal."""
    param = ParamBase(
        None,
        name,
        trainable=trainable,
        regularizer=regularizer,
        optimize_attr=optimize_attr,
        need_clip=need_clip,
        initializer=initializer,
    )
    param._shape, param._dtype = tuple(int(d) for d in shape), dtype
    initialize(param, initializer)
    return param


def initialize(var: Tensor, initializer) -> None:
    stop = var.stop_gradient
    initializer(var, EagerProgram(default_startup_program().random_seed).global_block())
    var.stop_gradient = stop
