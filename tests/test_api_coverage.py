"""How much of Paddle's public API fleetgraph has: the names of Paddle 1.8.5 and 2.0.0 (copied into
tests/data/api from Paddle's sources at those tags), each present, or absent with a stated reason.

`python tests/test_api_coverage.py` prints the per-package report.
"""

from __future__ import annotations

import collections
import importlib
import pathlib
import re
import sys

import pytest

from fleetgraph import absent

HERE = pathlib.Path(__file__).parent
README = HERE.parent / "README.md"
LISTS = {"fluid-1.8.5": 0.90, "paddle-2.0.0": 0.90}


def paddle_names(listing: str) -> list[str]:
    lines = (HERE / "data" / "api" / f"{listing}.txt").read_text().splitlines()
    return [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def touch(name: str):
    """Reach a qualified Paddle name in fleetgraph (the longest importable module, then attributes)."""
    parts = ["fleetgraph", *name.split(".")[1:]]
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise AttributeError(name)


def resolve(name: str) -> str:
    """'present', 'absent' (raises NotInFleetgraph) or 'missing' for one qualified Paddle name."""
    try:
        touch(name)
    except absent.NotInFleetgraph:
        return "absent"
    except AttributeError:
        return "missing"
    return "present"


def coverage(listing: str) -> dict[str, dict[str, list[str]]]:
    """package -> state -> the names of that package in that state."""
    report: dict[str, dict[str, list[str]]] = collections.defaultdict(lambda: collections.defaultdict(list))
    for name in paddle_names(listing):
        package, leaf = name.rsplit(".", 1)
        report[package][resolve(name)].append(leaf)
    return report


def print_report(listing: str) -> None:
    report = coverage(listing)
    totals = collections.Counter()
    for package, states in sorted(report.items()):
        counts = {state: len(names) for state, names in states.items()}
        totals.update(counts)
        line = f"{package}: {counts.get('present', 0)}/{sum(counts.values())}"
        if states.get("missing"):
            line += "  missing: " + " ".join(states["missing"])
        print(line)
    total = sum(totals.values())
    present = totals["present"]
    print(f"{listing}: {present}/{total} present ({present / total:.1%}), {totals['absent']} absent")


@pytest.fixture(scope="module", params=sorted(LISTS))
def listing(request):
    return request.param, coverage(request.param)


def test_enough_of_paddles_names_are_present(listing):
    name, report = listing
    present = sum(len(states["present"]) for states in report.values())
    total = sum(len(names) for states in report.values() for names in states.values())
    print_report(name)  # shown with pytest -rP, or run this file directly
    assert present / total >= LISTS[name], f"{name}: {present}/{total} present"


def test_every_name_is_present_or_absent_with_a_reason(listing):
    _, report = listing
    missing = {package: states["missing"] for package, states in report.items() if states["missing"]}
    assert not missing


def test_an_absent_name_raises_naming_itself_and_the_reason():
    for name, reason in absent.ABSENT.items():
        with pytest.raises(absent.NotInFleetgraph) as caught:
            touch(name)
        assert name in str(caught.value) and reason in str(caught.value)


def test_the_readme_tables_every_absent_name():
    assert absent.readme_table() in README.read_text(), "regenerate with `python -m fleetgraph.absent`"


def test_a_present_name_is_exercised_by_some_test(listing):
    """Each present name appears in a test (a re-export is covered by the tests of what it re-exports)."""
    _, report = listing
    text = "\n".join(p.read_text() for p in HERE.rglob("*.py") if p.name != pathlib.Path(__file__).name)
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
    untested = {p: [n for n in s["present"] if n not in words] for p, s in report.items()}
    assert not {p: names for p, names in untested.items() if names}


if __name__ == "__main__":
    for arg in sys.argv[1:] or sorted(LISTS):
        print_report(arg)
