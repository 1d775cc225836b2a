"""`fluid.install_check.run_check()`."""

from ..utils.install_check import run_check

__all__ = ["run_check"]
