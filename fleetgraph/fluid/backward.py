"""`fluid.backward`."""

from .. import absent
from .. import compat as cpt
from ..ir import unique_name
from ..transpiler.backward import append_backward, gradients
from . import log_helper

__getattr__ = absent.getattr_for(__name__)

__all__ = ["append_backward", "cpt", "gradients", "log_helper", "unique_name"]
