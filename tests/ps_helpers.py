"""Shared helpers for the parameter-server transpiler tests: transpile every role, dump op types."""

from __future__ import annotations

import os

from fleetgraph.ir import Program, op_summary
from fleetgraph.transpiler import DistributeTranspiler, DistributeTranspilerConfig

GOLDEN = os.path.join(os.path.dirname(__file__), "golden")
TWO_PSERVERS = "127.0.0.1:6174,127.0.0.1:6175"


def config(**kw) -> DistributeTranspilerConfig:
    cfg = DistributeTranspilerConfig()
    for key, value in kw.items():
        setattr(cfg, key, value)
    return cfg


def transpile(build, trainer_id=0, pservers=TWO_PSERVERS, trainers=2, sync_mode=None, **cfg):
    """Build a fresh model with `build()` and transpile it for `trainer_id`; returns the transpiler."""
    main, startup = build()[:2]
    t = DistributeTranspiler(config(**cfg))
    t.transpile(
        trainer_id, program=main, pservers=pservers, trainers=trainers, sync_mode=sync_mode, startup_program=startup
    )
    return t


def role_dump(build, pservers=TWO_PSERVERS, trainers=2, **kw) -> str:
    """Every role's programs as op-type lines, in the reference files' layout."""
    lines = []
    for trainer_id in range(trainers):
        t = transpile(build, trainer_id, pservers, trainers, **kw)
        lines += [
            f"trainer{trainer_id} main:",
            op_summary(t.get_trainer_program()),
            f"trainer{trainer_id} startup:",
            op_summary(t.get_trainer_startup_program()),
        ]
    for ep in pservers.split(","):
        main, startup = t.get_pserver_programs(ep)
        lines += [f"pserver {ep} main:", op_summary(main), f"pserver {ep} startup:", op_summary(startup)]
    return "\n".join(lines) + "\n"


def check_golden(name: str, text: str) -> None:
    """Compare with tests/golden/<name>.txt; FLEETGRAPH_UPDATE_GOLDEN=1 rewrites it instead."""
    path = os.path.join(GOLDEN, name + ".txt")
    if os.environ.get("FLEETGRAPH_UPDATE_GOLDEN"):
        with open(path, "w") as f:
            f.write(text)
    with open(path) as f:
        assert text == f.read(), f"{name}: transpiled programs differ from {path}"


def var_names(program: Program) -> set[str]:
    return {v.name for v in program.list_vars()}
