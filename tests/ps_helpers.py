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
    if sync_mode is False and cfg.get("runtime_split_send_recv"):
        cfg = {"sync_mode": False, **cfg}  # Paddle's config takes runtime_split_send_recv after sync_mode=False
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
        mode = main.global_block().ops[0].attrs["distributed_mode"]  # async and half-async differ only here
        lines += [f"pserver {ep} main (distributed_mode {mode}):", op_summary(main)]
        lines += [f"pserver {ep} startup:", op_summary(startup)]
    return "\n".join(lines) + "\n"


def paddle_reference_dump(build, label: str, pservers=TWO_PSERVERS, trainers=2, **kw) -> str:
    """Every role's programs and trainer 0's var mappings in the layout of the files PaddlePaddle
    3.3.1 wrote for seed 001's model (tests/golden/paddle/fit_a_line_{sync,async}.txt are those files)."""

    def shaped(vs):
        return [f"{v.name}{list(v.shape)}" for v in vs]

    main, startup = build()[:2]
    lines = [f"==== {label} (pservers={pservers}, trainers={trainers}, config={{}}) ====", "origin main:"]
    lines += [op_summary(main), "origin startup:", op_summary(startup)]
    for trainer_id in range(trainers):
        t = transpile(build, trainer_id, pservers, trainers, **kw)
        lines += [f"trainer{trainer_id} main:", op_summary(t.get_trainer_program())]
        lines += [f"trainer{trainer_id} startup:", op_summary(t.get_trainer_startup_program())]
        if trainer_id == 0:
            eps = {ep: {k: [v.name for v in vs] for k, vs in d.items()} for ep, d in t.param_grad_ep_mapping.items()}
            lines += [
                f"param_var_mapping: { {k: shaped(vs) for k, vs in t.param_var_mapping.items()} }",
                f"grad_var_mapping: { {k: shaped(vs) for k, vs in t.grad_var_mapping.items()} }",
                f"param_grad_ep_mapping: {eps}",
            ]
    for ep in pservers.split(","):
        server_main, server_startup = t.get_pserver_programs(ep)
        lines += [f"pserver {ep} main:", op_summary(server_main), f"pserver {ep} startup:"]
        lines.append(_without_whole_draws(op_summary(server_startup)))
    return "\n".join(lines) + "\n"


def _without_whole_draws(startup_ops: str) -> str:
    """A pserver startup's op types less the `slice` after each whole draw: the one difference from
    Paddle we keep on purpose (a pserver draws a sliced parameter whole and keeps its rows, so that a
    distributed run starts where a single-process run does; README, compatibility). Paddle draws the
    block's shape with one initializer op, so dropping the slice leaves Paddle's sequence."""
    return startup_ops.replace(" slice", "")


def check_paddle_golden(name: str, text: str) -> None:
    """Compare with tests/golden/paddle/<name>.txt, a file PaddlePaddle wrote (never rewritten here)."""
    path = os.path.join(GOLDEN, "paddle", name + ".txt")
    with open(path) as f:
        assert text == f.read(), f"{name}: transpiled programs differ from PaddlePaddle's {path}"


def check_golden(name: str, text: str) -> None:
    """Compare with the regression snapshot tests/golden/snapshots/<name>.txt, our own earlier output
    (no PaddlePaddle file to compare with); FLEETGRAPH_UPDATE_GOLDEN=1 rewrites it instead."""
    path = os.path.join(GOLDEN, "snapshots", name + ".txt")
    if os.environ.get("FLEETGRAPH_UPDATE_GOLDEN"):
        with open(path, "w") as f:
            f.write(text)
    with open(path) as f:
        assert text == f.read(), f"{name}: transpiled programs differ from the snapshot {path}"


def var_names(program: Program) -> set[str]:
    return {v.name for v in program.list_vars()}
