"""`fluid.framework`: the program classes, the default programs, places, flags and version checks,
where Fluid scripts import them."""

from collections import defaultdict
from collections.abc import Iterable

from .. import absent
from .. import compat as cpt
from ..executor.place import cuda_pinned_places, cuda_places, is_compiled_with_cuda
from ..ir import (
    Operator,
    Parameter,
    Program,
    Variable,
    default_main_program,
    default_startup_program,
    device_guard,
    name_scope,
    program_guard,
    switch_main_program,
    switch_startup_program,
    unique_name,
)
from ..static import cpu_places
from ..utils.flags import get_flags, set_flags
from ..utils.version import require_version


def in_dygraph_mode() -> bool:
    """Fluid 1.x's default is static: True only after disable_static() or inside fluid.dygraph.guard()."""
    from ..dygraph.mode import in_dygraph_mode as _in_dygraph_mode

    return _in_dygraph_mode()


__getattr__ = absent.getattr_for(__name__)

__all__ = [
    "Iterable",
    "Operator",
    "Parameter",
    "Program",
    "Variable",
    "cpt",
    "cpu_places",
    "cuda_pinned_places",
    "cuda_places",
    "default_main_program",
    "default_startup_program",
    "defaultdict",
    "device_guard",
    "get_flags",
    "in_dygraph_mode",
    "is_compiled_with_cuda",
    "name_scope",
    "program_guard",
    "require_version",
    "set_flags",
    "switch_main_program",
    "switch_startup_program",
    "unique_name",
]
