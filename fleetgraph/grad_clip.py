"""Gradient clipping, passed to an optimizer as `grad_clip=` (`fluid.clip.GradientClipByValue`, ...,
`paddle.nn.ClipGradByGlobalNorm`): ops appended before regularization and the updates, as Paddle's.

A parameter whose ParamAttr says `need_clip=False` keeps its gradient. Collective training clips
after the all-reduce (the averaged gradient, so every rank clips alike and equals one process). Sync
parameter-server training clips the trainers' averaged gradient on the pservers, a norm taken over
every block on every pserver (transpiler/ps_clip.py), so it too equals one process on the whole
batch; async and half-async trainers clip their own gradient before sending it, as Paddle's
transpiler leaves the clip ops on the trainer."""

from __future__ import annotations

import numbers
import warnings

from . import absent, layers  # noqa: F401  (Paddle's clip module re-exports fluid.layers)
from .dygraph.dispatch import bind
from .ir import FleetgraphError, FleetgraphTypeError, name_scope
from .ir.framework import default_main_program
from .ir.program import OpRole, Parameter, Variable
from .layers.math import elementwise_div, elementwise_max, elementwise_mul, reduce_sum, sqrt, square, sums
from .layers.tensor import fill_constant
from .transpiler.error_clip import error_clip_callback

__all__ = [
    "ErrorClipByValue",
    "append_gradient_clip_ops",
    "error_clip_callback",
    "set_gradient_clip",
    "ClipGradBase",
    "ClipGradByGlobalNorm",
    "ClipGradByNorm",
    "ClipGradByValue",
    "GradientClipByGlobalNorm",
    "GradientClipByNorm",
    "GradientClipByValue",
]


CLIP_SCOPE = "gradient_clip"  # the op_namescope of every clip op: '/gradient_clip/'


class ClipGradBase:
    """Subclasses append the clip ops of one parameter (`_clip_one`) or of all at once (`_clip`),
    all in the name scope '/gradient_clip/' (Paddle's)."""

    def __call__(self, params_grads: list[tuple[Variable, Variable]]) -> list[tuple[Variable, Variable]]:
        with name_scope(CLIP_SCOPE):
            return self._clip(params_grads)

    def _clip(self, params_grads):
        return _each_clipped(params_grads, self._clip_one)

    def _clip_one(self, grad: Variable) -> Variable:
        raise NotImplementedError


def _each_clipped(params_grads, clip_one) -> list[tuple[Variable, Variable]]:
    """(param, clip_one(grad)) for each gradient to clip, its ops tagged optimize ops of the pair;
    the others as they are."""
    out = []
    for param, grad in params_grads:
        if grad is None or not _needs_clip(param):
            out.append((param, grad))
            continue
        with param.block.program._optimized_guard([param, grad]):
            out.append((param, clip_one(grad)))
    return out


def _needs_clip(param) -> bool:
    return getattr(param, "need_clip", True) is not False


def _positive(what: str, value) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or value <= 0:
        raise FleetgraphError(f"{what} expected a positive float, got {value!r}")
    return float(value)


class ClipGradByValue(ClipGradBase):
    """Every element into [min, max] (min defaults to -max)."""

    def __init__(self, max, min=None) -> None:
        if not isinstance(max, numbers.Real) or (min is not None and not isinstance(min, numbers.Real)):
            raise FleetgraphTypeError(f"ClipGradByValue: max and min expected floats, got max={max!r} min={min!r}")
        self.max = float(max)
        self.min = -self.max if min is None else float(min)
        if self.min > self.max:
            raise FleetgraphError(f"ClipGradByValue: min {self.min} is above max {self.max}")

    def _clip_one(self, grad):
        return bind("clip", {"X": [grad]}, {"min": self.min, "max": self.max})

    def __repr__(self) -> str:
        return f"Clip Gradient By Value, min = {self.min:f}, max={self.max:f}"


class ClipGradByNorm(ClipGradBase):
    """Each gradient scaled to L2 norm clip_norm where its norm is larger."""

    def __init__(self, clip_norm) -> None:
        self.clip_norm = _positive("ClipGradByNorm: clip_norm", clip_norm)

    def _clip_one(self, grad):
        return bind("clip_by_norm", {"X": [grad]}, {"max_norm": self.clip_norm})

    def __repr__(self) -> str:
        return f"Gradient Clip By Norm, clip_norm={self.clip_norm:f}"


class ClipGradByGlobalNorm(ClipGradBase):
    """Every gradient scaled by clip_norm / max(clip_norm, global_norm), the global norm being the L2
    norm of all the clipped gradients together: Paddle's ops (square, reduce_sum, sum, sqrt, ...)."""

    def __init__(self, clip_norm, group_name="default_group", auto_skip_clip=False) -> None:
        self.clip_norm = _positive("ClipGradByGlobalNorm: clip_norm", clip_norm)
        self.group_name = group_name

    def _clip(self, params_grads):
        clipped = [(p, g) for p, g in params_grads if g is not None and _needs_clip(p)]
        if not clipped:
            return list(params_grads)
        squares = []
        for param, grad in clipped:
            with param.block.program._optimized_guard([param, grad]):
                rows = grad
                if grad.type == "selected_rows":  # a sparse gradient's norm is that of its merged rows
                    rows = bind("get_tensor_from_selected_rows", {"X": [bind("merge_selected_rows", {"X": [grad]})]})
                squares.append(reduce_sum(square(rows)))
        param, grad = clipped[-1]
        with param.block.program._optimized_guard([param, grad]):
            global_norm = sqrt(sums(squares))
            max_norm = fill_constant([1], global_norm.dtype, self.clip_norm)
            scale = elementwise_div(max_norm, elementwise_max(max_norm, global_norm))
        return _each_clipped(params_grads, lambda grad: elementwise_mul(grad, scale))

    def __repr__(self) -> str:
        return f"Gradient Clip By GlobalNorm, global_norm={self.clip_norm:f}"


GradientClipByValue, GradientClipByNorm, GradientClipByGlobalNorm = (
    ClipGradByValue,
    ClipGradByNorm,
    ClipGradByGlobalNorm,
)


class ErrorClipByValue:
    """Clip the gradient flowing back through one variable into [min, max] (min defaults to -max),
    as Paddle's: set it with `var._set_error_clip(...)` before `append_backward`, which then clips
    after each gradient op that writes that variable's gradient (`error_clip_callback`)."""

    def __init__(self, max, min=None) -> None:
        self.max = float(max)
        self.min = -self.max if min is None else float(min)
        if self.min > self.max:
            raise FleetgraphError(f"ErrorClipByValue: expected min <= max, got min={self.min} max={self.max}")

    def __str__(self) -> str:
        return f"ByValue, min={self.min:f}, max={self.max:f}"


def set_gradient_clip(clip, param_list=None, program=None) -> None:
    """Clip the gradients of `param_list` (parameters or their names; default every parameter of
    `program`) with `clip` when an optimizer without its own `grad_clip` minimizes, as Paddle's
    (deprecated there too: prefer the optimizer's `grad_clip`, which wins where both are set)."""
    warnings.warn(
        "Caution! 'set_gradient_clip' is not recommended and may be deprecated in future! We recommend "
        "a new strategy: set 'grad_clip' when initializing the 'optimizer'.",
        stacklevel=2,
    )
    if not isinstance(clip, ClipGradBase):
        raise FleetgraphTypeError(f"set_gradient_clip: clip expected a GradientClipBy* instance, got {clip!r}")
    program = program or default_main_program()
    block = program.global_block()
    if any(op.attrs.get("op_role", 0) & OpRole.Optimize for op in block.ops):
        warnings.warn(
            "'minimize' has been invoked before, this will make 'set_gradient_clip' be ineffective! "
            "Please invoke 'set_gradient_clip' before 'minimize'.",
            stacklevel=2,
        )
    params = (
        program.all_parameters()
        if param_list is None
        else [block.var(p) if isinstance(p, str) else p for p in param_list]
    )
    for param in params:
        if not isinstance(param, Parameter):
            raise FleetgraphTypeError(
                f"set_gradient_clip: param_list expected parameters or their names, got {param!r}"
            )
        param.gradient_clip_attr = clip


def append_gradient_clip_ops(params_grads):
    """Clip each gradient by its parameter's `gradient_clip_attr` (set_gradient_clip): the parameters
    that share one clip are clipped together (one global norm), the others pass unchanged."""
    groups: dict[int, tuple[ClipGradBase, list[int]]] = {}
    for i, (param, grad) in enumerate(params_grads):
        clip = getattr(param, "gradient_clip_attr", None)
        if clip is not None and grad is not None:
            groups.setdefault(id(clip), (clip, []))[1].append(i)
    out = list(params_grads)
    for clip, indexes in groups.values():
        for i, pair in zip(indexes, clip([params_grads[i] for i in indexes])):
            out[i] = pair
    return out


__getattr__ = absent.getattr_for(__name__, "paddle.fluid.clip")
