"""The layer rules of DESIGN.md that pyproject.toml states as import-linter contracts hold."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("importlinter")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINT_IMPORTS = os.path.join(os.path.dirname(sys.executable), "lint-imports")


def _lint_imports(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [LINT_IMPORTS, "--no-cache", *args], cwd=ROOT, capture_output=True, text=True, timeout=300, check=False
    )


def test_every_import_contract_in_pyproject_is_kept():
    result = _lint_imports()
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_lint_imports_fails_on_a_broken_contract(tmp_path):
    """The check above can fail: the executor does import the IR, so forbidding it is reported."""
    config = tmp_path / "broken.toml"
    config.write_text(
        '[tool.importlinter]\nroot_package = "fleetgraph"\n\n[[tool.importlinter.contracts]]\n'
        'name = "executor never imports ir"\ntype = "forbidden"\n'
        'source_modules = ["fleetgraph.executor"]\nforbidden_modules = ["fleetgraph.ir"]\n'
    )
    result = _lint_imports(str(config))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "executor never imports ir BROKEN" in result.stdout
