"""Under CI=true a skipped test fails with its reason, unless it is marked `gpu` (tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

CONFTEST = Path(__file__).with_name("conftest.py")

SKIPPING = """
import pytest

@pytest.fixture
def tool():
    pytest.skip("needs the tool")

@pytest.mark.skipif(True, reason="needs Graphviz's dot")
def test_marked():
    pass

def test_in_body():
    pytest.skip("needs mpirun")

def test_in_fixture(tool):
    pass

@pytest.mark.gpu
def test_on_gpu():
    pytest.skip("needs an NVIDIA GPU")

@pytest.mark.xfail(strict=True, raises=ZeroDivisionError)
def test_expected_failure():
    1 / 0

def test_runs():
    pass
"""


@pytest.fixture
def suite(pytester):
    pytester.makeconftest(CONFTEST.read_text())
    pytester.makeini("[pytest]\nmarkers =\n    gpu: needs a GPU\n")
    pytester.makepyfile(test_skipping=SKIPPING)
    return pytester


def test_a_skip_under_ci_fails_with_its_reason_except_on_gpu(suite, monkeypatch):
    monkeypatch.setenv("CI", "1")
    suite.makepyfile(test_import="import pytest\npytest.importorskip('no_such_module_here')\n")
    result = suite.runpytest("-p", "no:cacheprovider", "--continue-on-collection-errors")
    # skips at collection or setup (a mark, a fixture) are reported as errors, in the body as failures
    result.assert_outcomes(passed=1, failed=1, errors=3, skipped=1, xfailed=1)
    result.stdout.fnmatch_lines(
        [
            "*test_skipping.py::test_marked: skipped under CI=1; expected every test to run (only tests "
            "marked `gpu` may skip), got Skipped: needs Graphviz's dot; hint: install what it needs in .ci/run",
        ]
    )
    for reason in ("needs mpirun", "needs the tool", "could not import 'no_such_module_here'*"):
        result.stdout.fnmatch_lines([f"*skipped under CI=1; *got Skipped: {reason}; hint:*"])


def test_outside_ci_a_skip_stays_a_skip(suite, monkeypatch):
    monkeypatch.setenv("CI", "false")
    suite.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1, skipped=4, xfailed=1)
