"""Which registered ops export at each ONNX opset 9..18: every op case of tests/op_cases whose op has
an export rule and that exports at the rules' opset (18) is exported again at each opset, checked by
onnx.checker (full) and run by onnxruntime against the executor's outputs. Prints per opset how many
ops export (all their cases), are refused (the error names the opset needed) or go wrong, and each
op's lowest opset.

    PYTHONPATH=$PWD .venv/bin/python bench/onnx_opsets.py
"""

from __future__ import annotations

import collections
import dataclasses
import os
import re
import sys

import numpy as np
import onnx
import onnxruntime as ort

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))
from op_cases import CASES  # noqa: E402
from test_op_registry import _build, _rows  # noqa: E402

from fleetgraph.ir import FleetgraphError  # noqa: E402
from fleetgraph.onnx import export  # noqa: E402
from fleetgraph.onnx.emitter import EXPORTERS, OPSET  # noqa: E402
from fleetgraph.onnx.opsets import MIN_OPSET  # noqa: E402


def _float32(case):
    inputs = {
        k: v.astype("float32") if isinstance(v, np.ndarray) and v.dtype == np.float64 else v
        for k, v in case.inputs.items()
    }
    return dataclasses.replace(case, inputs=inputs)


def _outcome(prog, feed, fetches, want, opset) -> str:
    """'ok', 'needs N' (refused) or what went wrong."""
    try:
        model = export(prog, list(feed), fetches, {}, opset=opset)
    except FleetgraphError as err:
        needs = re.search(r"needs opset (\d+)|before opset (\d+)", str(err))
        return f"needs {needs.group(1) or needs.group(2)}" if needs else f"refused: {err}"
    try:
        onnx.checker.check_model(model, full_check=True)
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        names = {i.name for i in model.graph.input}
        got = session.run(None, {k: np.asarray(v) for k, v in feed.items() if k in names})
    except Exception as err:  # noqa: BLE001  (any failure is what is measured)
        return f"fails: {type(err).__name__}: {str(err)[:160]}"
    for g, w in zip(got, want):
        if g.shape != w.shape or not np.allclose(g, w, rtol=1e-4, atol=1e-5, equal_nan=True):
            return "wrong values"
    return "ok"


def main() -> None:
    ort.set_default_logger_severity(3)
    opsets = range(MIN_OPSET, OPSET + 1)
    per_op: dict[str, dict[int, list[str]]] = collections.defaultdict(lambda: collections.defaultdict(list))
    for op_type in sorted(set(CASES) & set(EXPORTERS)):
        for case in CASES[op_type]:
            case = _float32(case)
            try:
                prog, _, _, feed, outs = _build(case)
                fetches = [n for names in outs.values() for n in names]
                if any(not isinstance(v, np.ndarray) for v in feed.values()):
                    continue  # a LoD feed: the models' tests cover those
                want = _rows(prog, feed, fetches)
            except Exception:  # noqa: BLE001  (a case the single-op harness cannot build here)
                continue
            if _outcome(prog, feed, fetches, want, OPSET) != "ok":  # the first output alone (not XShape, SavedMean)
                fetches, want = fetches[:1], want[:1]
                if _outcome(prog, feed, fetches, want, OPSET) != "ok":
                    continue  # not exportable as a single op at all (an attr the rule refuses)
            for opset in opsets:
                per_op[op_type][opset].append(_outcome(prog, feed, fetches, want, opset))
    lowest = {}
    for op_type, results in sorted(per_op.items()):
        fine = [v for v in opsets if all(r == "ok" for r in results[v])]
        lowest[op_type] = fine[0] if fine else None
        for v in opsets:
            bad = [r for r in results[v] if r != "ok" and not r.startswith("needs")]
            if bad:
                print(f"{op_type} at {v}: {bad[0]}")
    print(f"{len(per_op)} exported ops with single-op cases")
    for v in opsets:
        ok = sum(1 for op in per_op if lowest[op] is not None and lowest[op] <= v)
        print(f"opset {v}: {ok} ops export")
    by_min = collections.defaultdict(list)
    for op_type, v in lowest.items():
        by_min[v].append(op_type)
    for v in sorted(by_min, key=lambda x: (x is None, x)):
        print(f"lowest opset {v}: {' '.join(sorted(by_min[v]))}")


if __name__ == "__main__":
    main()
