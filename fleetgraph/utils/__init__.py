"""`paddle.utils`: Paddle 2.0's helpers (install check, version requirement, deprecation notice,
optional imports, the profiler object). Paddle's names fleetgraph lacks raise NotInFleetgraph."""

from .. import absent
from ..ir import unique_name
from .deprecated import deprecated, try_import
from .install_check import run_check
from .profiler_api import Profiler, ProfilerOptions, get_profiler
from .version import require_version

__all__ = [
    "Profiler",
    "ProfilerOptions",
    "deprecated",
    "get_profiler",
    "require_version",
    "run_check",
    "try_import",
    "unique_name",
]

__getattr__ = absent.getattr_for(__name__)
