"""`fluid.framework`: the program classes and the default programs, where Fluid scripts import them."""

from ..ir import (
    Operator,
    Parameter,
    Program,
    Variable,
    default_main_program,
    default_startup_program,
    name_scope,
    program_guard,
    switch_main_program,
    switch_startup_program,
)


def in_dygraph_mode() -> bool:
    """Fluid 1.x's default is static: True only after disable_static() or inside fluid.dygraph.guard()."""
    from ..dygraph.mode import in_dygraph_mode as _in_dygraph_mode

    return _in_dygraph_mode()


__all__ = [
    "Operator",
    "Parameter",
    "Program",
    "Variable",
    "default_main_program",
    "default_startup_program",
    "in_dygraph_mode",
    "name_scope",
    "program_guard",
    "switch_main_program",
    "switch_startup_program",
]
