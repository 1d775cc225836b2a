"""Which mode a call runs in: ops on eager Tensors run at once, ops on static Variables build a program.

The rule serves Paddle 2.x scripts (dynamic by default, never calling `disable_static`) and Fluid
1.x scripts (static by default, never calling `enable_static`) unchanged:
  1. a layer function or op called on a Tensor runs eagerly; called on a static Variable it appends
     to the program (whatever the mode);
  2. what has no input to go by follows the mode: `nn.Layer` parameters and `paddle.to_tensor` are
     eager unless `enable_static()` was called (Paddle 2.x's default); input-less Fluid layer
     functions (`fluid.layers.fill_constant`, ...) build a program unless `disable_static()` was called
     (Fluid 1.x's default).
"""

from __future__ import annotations

import contextlib
import functools
import threading

import numpy as np

_mode: str | None = None  # "static" after enable_static(), "dynamic" after disable_static(), else None


class _ThreadState(threading.local):
    """Per thread: whether ops record for backward (no_grad) and whether input-less calls run eagerly.
    Class defaults, so a read never misses (getattr with a default on a local raises and catches an
    AttributeError inside, which cost an eager op 0.4 us)."""

    grad = True
    eager = False


_state = _ThreadState()


class _Place:
    """The array module eager kernels run on, the current place's: one for the process, as Paddle's
    device is (set_device, disable_static(place), guard(place)). A slot, read on every eager call."""

    __slots__ = ("xp",)

    def __init__(self) -> None:
        self.xp = np


eager_place = _Place()


class _AmpRegion:
    """The mixed-precision policy eager ops follow (autocast.AmpPolicy), None outside an auto_cast
    region: one for the process, as Paddle's tracer holds it. A slot, read on every eager call (a
    thread-local's class default costs ten times as much)."""

    __slots__ = ("policy",)

    def __init__(self) -> None:
        self.policy = None


amp_region = _AmpRegion()


def enable_static() -> None:
    """Static mode: nn.Layer parameters and input-less calls build programs."""
    global _mode
    _mode = "static"


def disable_static(place=None) -> None:
    """Dynamic mode: nn.Layer parameters and input-less calls (`fill_constant`, ...) run eagerly, on
    `place` when given (a Place: its array module serves every eager kernel from here on)."""
    global _mode
    _mode = "dynamic"
    if place is not None:
        use_place(place)


def use_place(place) -> None:
    """Eager kernels run on `place` (a Place, e.g. CPUPlace()) from here on: with its array module."""
    module = getattr(place, "array_module", None)
    if module is None:
        raise TypeError(f"expected a Place such as fleetgraph.CPUPlace(), got {type(place).__name__} {place!r}")
    eager_place.xp = module()


def array_module():
    """The array module eager kernels run on (the current place's)."""
    return eager_place.xp


def in_dynamic_mode() -> bool:
    """Paddle 2.x's question: True unless enable_static() was called."""
    return _mode != "static"


def in_dygraph_mode() -> bool:
    """Fluid 1.x's question (`fluid.in_dygraph_mode()`): True only after disable_static() or inside
    `fluid.dygraph.guard()`."""
    return _mode == "dynamic"


@contextlib.contextmanager
def guard(place=None):
    """`fluid.dygraph.guard(place)`: dynamic mode inside, on `place` when given (its array module
    serves the eager kernels); the previous mode and place after."""
    global _mode
    old, old_xp, _mode = _mode, eager_place.xp, "dynamic"
    try:
        if place is not None:
            use_place(place)
        yield
    finally:
        _mode, eager_place.xp = old, old_xp


def eager_by_default() -> bool:
    """Whether a call with nothing to go by (no input, a Layer's parameter) runs eagerly: in dynamic
    mode, and inside `eager_guard()` (a dynamic Layer's forward, an optimizer's eager step)."""
    return _mode == "dynamic" or _state.eager


@contextlib.contextmanager
def eager_guard():
    old = _state.eager
    _state.eager = True
    try:
        yield
    finally:
        _state.eager = old


@contextlib.contextmanager
def static_guard():
    """Static mode inside (jit tracing), whatever encloses it: not even a dynamic Layer's forward,
    whose eager_guard is on in this thread, makes input-less calls eager."""
    global _mode
    old_mode, old_eager = _mode, _state.eager
    _mode, _state.eager = "static", False
    try:
        yield
    finally:
        _mode, _state.eager = old_mode, old_eager


def grad_enabled() -> bool:
    return _state.grad


class no_grad:  # noqa: N801  (Paddle's spelling)
    """`with paddle.no_grad():` or `@paddle.no_grad()`: ops inside record nothing for backward."""

    def __enter__(self):
        self._old = grad_enabled()
        _state.grad = False
        return self

    def __exit__(self, *exc) -> None:
        _state.grad = self._old

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with no_grad():
                return fn(*args, **kwargs)

        return wrapper
