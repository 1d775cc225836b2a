"""Shared test set-up: every program the executor prepares is verified, and under CI=true a test
that skips fails instead (GPU tests excepted), so no test silently stops running in CI."""

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))  # op_cases, helpers

import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _verify_every_program_the_executor_prepares(monkeypatch):
    """Every program a test runs must pass `verify` (checked once per program version)."""
    from fleetgraph.executor import plan
    from fleetgraph.ir import verify

    prepare = plan.Plan.__init__

    def verified(self, block):
        feeds = [n for n, v in block.vars.items() if v.is_data]
        verify(block.program, feed_names=feeds)
        prepare(self, block)

    monkeypatch.setattr(plan.Plan, "__init__", verified)


@pytest.fixture(autouse=True)
def _restore_the_mode():
    """A test that calls enable_static() or disable_static() leaves the mode (and the eager place)
    as it found them: the tests after it do not depend on the order they run in."""
    from fleetgraph.dygraph import mode

    saved = mode._mode, mode.eager_place.xp
    yield
    mode._mode, mode.eager_place.xp = saved


@pytest.fixture(autouse=True)
def _restore_the_default_dtype():
    """A test that calls set_default_dtype (and fails, or forgets to set it back) cannot leave its
    dtype to the tests after it."""
    import fleetgraph

    saved = fleetgraph.get_default_dtype()
    yield
    fleetgraph.set_default_dtype(saved)


# -- under CI=true, a skip is a failure --------------------------------------------------------------
# CI installs every tool a test needs (.ci/run), so a skip there means a tool went missing or a test
# was switched off. The exception is a test marked `gpu` (CI has no GPU); it skips per test, so a GPU
# test module must not skip at import.


def _in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def _fail_the_skip(report, where: str) -> None:
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    report.outcome = "failed"
    report.longrepr = (
        f"{where}: skipped under CI={os.environ['CI']}; expected every test to run (only tests marked "
        f"`gpu` may skip), got {reason}; hint: install what it needs in .ci/run"
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    report = (yield).get_result()
    # an xfail is reported as a skip carrying `wasxfail`: it ran
    if report.skipped and not hasattr(report, "wasxfail") and item.get_closest_marker("gpu") is None and _in_ci():
        _fail_the_skip(report, item.nodeid)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    report = (yield).get_result()
    if report.skipped and _in_ci():  # a module-level importorskip or pytest.skip(allow_module_level=True)
        _fail_the_skip(report, collector.nodeid)
