"""Sample inputs for every op, one module per op family; the harness in test_op_registry.py walks
the registry and fails for an op that has no case here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

CASES: dict[str, list[Case]] = {}


@dataclass
class Case:
    op_type: str
    inputs: dict[str, Any]  # slot -> array or LoDTensor, or a list of them for a duplicable slot
    attrs: dict[str, Any] = field(default_factory=dict)
    outputs: dict[str, int] = field(default_factory=lambda: {"Out": 1})  # slot -> number of variables
    # NumPy oracle: (**inputs, **attrs) -> {slot: array, or a LoDTensor whose LoD is checked too}
    reference: Callable[..., dict] | None = None
    no_grad: tuple[str, ...] = ()  # input slots not checked against finite differences
    loss_outputs: tuple[str, ...] | None = None  # output slots the gradient check sums (default: all float)
    atol: float = 1e-6
    rtol: float = 1e-5
    name: str = ""

    @property
    def id(self) -> str:
        return f"{self.op_type}-{self.name}" if self.name else self.op_type


def case(op_type: str, inputs: dict, **kw) -> Case:
    c = Case(op_type, inputs, **kw)
    CASES.setdefault(op_type, []).append(c)
    return c


def rand(*shape, low=-1.0, high=1.0, seed=0):
    return np.random.default_rng(seed + sum(shape)).uniform(low, high, size=shape)


def positive(*shape, seed=0):
    return rand(*shape, low=0.5, high=2.0, seed=seed)


# Why an op lacks a property (a gradient, an eager path, an ONNX rule), declared by its family
# module beside its cases; test_op_coverage.py merges these into its own lists.
NOT_DIFFERENTIABLE: dict[str, str] = {}
NOT_EAGER: dict[str, str] = {}
NOT_EXPORTED: dict[str, str] = {}
# Ops a single-op case cannot exercise (they run a sub-block), with the test that covers them.
COVERED_ELSEWHERE: dict[str, str] = {}

# the family modules register their cases on import
from . import (  # noqa: E402,F401
    beam_search,
    collective,
    control_flow,
    conv_nd,
    creation,
    crf,
    ctc,
    indexing,
    linalg_decomp,
    losses,
    manipulation,
    math,
    model_parallel,
    nn,
    normalization,
    optimizer_scaled,
    pointwise,
    products,
    projection,
    rearrange,
    recurrent,
    recurrent_op,
    resize,
    rnn,
    sampled,
    sequence,
    sequence_conv,
    sequence_edit,
    sequence_pad,
    sequence_rows,
    tensor,
    tensor_array,
    tensor_shape,
    tree_conv,
)
