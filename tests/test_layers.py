"""The layer rules of DESIGN.md that pyproject.toml states as import-linter contracts hold."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: import-linter brings tomli
    import tomli as tomllib

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


def _modules(package: str) -> set[str]:
    """The modules and subpackages of a package directory, by name."""
    return {
        n.removesuffix(".py")
        for n in os.listdir(package)
        if not n.startswith("_") and (n.endswith(".py") or os.path.isfile(os.path.join(package, n, "__init__.py")))
    }


def test_the_zmq_and_cupy_contracts_name_every_module_outside_their_one_home():
    """A forbidden contract only checks the modules it names: a new executor module missing from
    the list would be free to import ZeroMQ or CuPy, so every one must be there."""
    with open(os.path.join(ROOT, "pyproject.toml"), "rb") as f:
        contracts = {c["name"]: c for c in tomllib.load(f)["tool"]["importlinter"]["contracts"]}
    package = os.path.join(ROOT, "fleetgraph")
    top = _modules(package) - {"executor"}
    executor = _modules(os.path.join(package, "executor"))
    for name, home in (("zmq only in executor.comm", "comm"), ("cupy only in executor.place", "place")):
        named = set(contracts[name]["source_modules"])
        want = {f"fleetgraph.{n}" for n in top} | {f"fleetgraph.executor.{n}" for n in executor - {home}}
        assert want <= named, f"{name}: add {sorted(want - named)} to its source_modules"
