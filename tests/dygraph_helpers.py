"""What the dynamic-graph tests share: each starts with no mode chosen and fresh names."""

from __future__ import annotations

import pytest

from fleetgraph.dygraph import mode
from fleetgraph.ir import unique_name


@pytest.fixture(autouse=True)
def fresh_mode_and_names():
    """Each test starts with neither enable_static nor disable_static called, and fresh names."""
    old = mode._mode
    mode._mode = None
    with unique_name.guard():
        yield
    mode._mode = old
