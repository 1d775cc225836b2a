"""`fluid.layers`."""

from ..layers import *  # noqa: F401,F403
from ..layers import __all__  # noqa: F401
