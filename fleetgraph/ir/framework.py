"""The defaults layer functions build with: the main and startup programs (`program_guard`) and the
floating dtype (`set_default_dtype`)."""

from __future__ import annotations

import contextlib

import numpy as np

from .errors import FleetgraphTypeError
from .program import Program

_main_program = Program()
_startup_program = Program()


_DEFAULT_DTYPES = ("float16", "float32", "float64")
_default_dtype = "float32"


def set_default_dtype(d) -> None:
    """Paddle's `paddle.set_default_dtype`: the dtype of parameters made without one, of Python floats
    given to `to_tensor`, and of the random draws without a dtype (float16, float32 or float64, as a
    name or a NumPy type; float32 until set)."""
    global _default_dtype
    if isinstance(d, type):
        name, ok = d.__name__, d in (np.float16, np.float32, np.float64)
    else:
        name = str(d)
        ok = isinstance(d, (str, np.dtype)) and name in _DEFAULT_DTYPES
    if not ok:  # Paddle's words, stray space included
        raise FleetgraphTypeError(f"set_default_dtype only supports [float16, float32, float64] , but received {name}")
    _default_dtype = name


def get_default_dtype() -> str:
    """The dtype `set_default_dtype` set: 'float32' unless changed."""
    return _default_dtype


def default_main_program() -> Program:
    return _main_program


def default_startup_program() -> Program:
    return _startup_program


def switch_main_program(program: Program) -> Program:
    global _main_program
    old, _main_program = _main_program, program
    return old


def switch_startup_program(program: Program) -> Program:
    global _startup_program
    old, _startup_program = _startup_program, program
    return old


@contextlib.contextmanager
def program_guard(main_program: Program, startup_program: Program | None = None):
    """Layer functions inside append to these programs instead of the defaults."""
    if not isinstance(main_program, Program):
        raise TypeError(f"program_guard: main_program must be a Program, got {type(main_program).__name__}")
    old_main = switch_main_program(main_program)
    old_startup = switch_startup_program(startup_program) if startup_program is not None else None
    try:
        yield
    finally:
        switch_main_program(old_main)
        if old_startup is not None:
            switch_startup_program(old_startup)


@contextlib.contextmanager
def name_scope(prefix: str | None = None):
    """Ops appended inside carry op_namescope '/prefix/' (nested scopes join: '/outer/inner/'), as
    Paddle's `fluid.name_scope`; passes find ops by it (the parameter-server transpiler keeps the
    ops of '/gradient_clip/' on the trainers)."""
    program = default_main_program()
    saved = program._op_namescope
    program._op_namescope = f"{saved}{prefix or ''}/"
    try:
        yield
    finally:
        program._op_namescope = saved


@contextlib.contextmanager
def device_guard(device: str | None = None):
    """Ops appended inside carry op_device `device` ('cpu', 'gpu' or 'gpu:N'), as Paddle's
    `fluid.device_guard`. As in Paddle's CPU build, an op marked 'gpu' runs on the program's place
    when no GPU kernels can run; the attr is kept so passes and dumps see the intended placement."""
    if device not in ("cpu", "gpu", "", None) and not (
        isinstance(device, str) and device.startswith("gpu:") and device[4:].isdigit()
    ):
        raise ValueError(f"device_guard: device; expected 'cpu', 'gpu', 'gpu:N', '' or None, got {device!r}")
    program = default_main_program()
    saved = program._op_device
    program._op_device = device or ""
    try:
        yield
    finally:
        program._op_device = saved
