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
    """False: programs are built as static graphs."""
    from .. import in_dynamic_mode

    return in_dynamic_mode()


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
