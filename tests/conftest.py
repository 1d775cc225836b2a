import os
import sys

sys.path.insert(0, os.path.dirname(__file__))  # op_cases, helpers

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _verify_every_program_the_executor_prepares(monkeypatch):
    """Every program a test runs must pass `verify` (checked once per program version)."""
    from fleetgraph.executor import executor
    from fleetgraph.ir import verify

    prepare = executor._Plan.__init__

    def verified(self, block, xp):
        feeds = [n for n, v in block.vars.items() if v.is_data]
        verify(block.program, feed_names=feeds)
        prepare(self, block, xp)

    monkeypatch.setattr(executor._Plan, "__init__", verified)
