"""Every role's programs of one transpile, written out: each program as JSON, the plan (text and
JSON), a summary of op types and the HTML report; what `fleetgraph transpile --out` writes, and what
`DistributeTranspiler.transpile()` writes when FLEETGRAPH_DUMP_DIR names a directory.

The HTML page is drawn by the viewers' package, which sits above the transpiler: it is handed in
(`set_report_renderer`, by the user-facing package that imports both), so this module needs nothing
of it.

Steps of `transpile_roles(t)`, for a transpiler `t` that has run `transpile()`:
  1. each trainer's (or collective rank's) programs from a fresh transpiler over copies of the
     programs `t` was given, so no role sees another's rewrite (a trainer's startup is rewritten in
     place, as Paddle's);
  2. in pserver mode, each pserver's main and startup programs from `t` itself (they do not depend
     on the trainer).
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass

from ..ir import FleetgraphError, Program, op_summary, program_to_json
from .ps_plan import MODE_NAMES, DistPlan

DUMP_DIR_ENV = "FLEETGRAPH_DUMP_DIR"
_nested = threading.local()  # .active while transpile_roles runs its own transpiles: they must not dump again


@dataclass
class RoleView:
    """One process's programs as the report shows them: `kind` is "pserver" or "trainer"."""

    name: str
    kind: str
    endpoint: str
    main: Program
    startup: Program | None = None


ReportRenderer = Callable[..., str]  # (roles, plan view, title=...) -> the HTML page
_renderer: list[ReportRenderer] = []  # the one set_report_renderer gave


def set_report_renderer(render: ReportRenderer) -> None:
    """Draw the HTML report of `write_roles(html=...)` with `render(roles, plan_view, title=...)`."""
    _renderer[:] = [render]


def plan_view(plan) -> dict:
    """The plan as plain data for the report and plan.json: per pserver, its blocks (rows, shape,
    kind) and the bytes one trainer sends and receives per step (a distributed table's per distinct
    id of a batch, the rows it really moves); in collective mode the ranks and fused buckets."""
    if not isinstance(plan, DistPlan):
        buckets = [vars(b) | {"grads": list(b.grads)} for b in getattr(plan, "buckets", [])]
        return {"kind": "collective", "endpoints": list(plan.endpoints), "buckets": buckets, "text": str(plan)}
    servers = []
    for ep in plan.endpoints:
        sent, received = plan.bytes_per_step(ep)
        sent_per_id, received_per_id = plan.bytes_per_id(ep)
        blocks = []
        for p, b in plan.blocks_on(ep):
            kind = "table" if p.table else "sparse" if p.sparse else "dense"
            row = p.row_bytes()
            moved = (8 + 8 + row, row) if p.table else (row * b.rows, row * b.rows)
            blocks.append(
                {
                    "name": b.name,
                    "param": p.param,
                    "grad": p.grad,
                    "rows": [b.offset, b.offset + b.rows],
                    "param_shape": list(p.shape),
                    "shape": list(b.shape),
                    "dtype": p.dtype,
                    "kind": kind,
                    "bytes_sent": moved[0],
                    "bytes_received": moved[1],
                }
            )
        servers.append(
            {
                "endpoint": ep,
                "bytes_sent": sent,
                "bytes_received": received,
                "bytes_sent_per_id": sent_per_id,
                "bytes_received_per_id": received_per_id,
                "blocks": blocks,
            }
        )
    return {
        "kind": "pserver",
        "mode": MODE_NAMES[plan.mode],
        "trainers": plan.trainers,
        "k_steps": plan.k_steps,
        "pservers": servers,
        "text": str(plan),
    }


def transpile_roles(t, sync_mode: bool | None = None) -> list[RoleView]:
    """Every role's programs of the job `t` was transpiled for (`sync_mode` as given to transpile)."""
    plan = t.plan
    roles = []
    endpoints = plan.endpoints
    ranks = range(plan.trainers) if isinstance(plan, DistPlan) else range(len(endpoints))
    was, _nested.active = getattr(_nested, "active", False), True
    try:
        for rank in ranks:  # step 1
            other = type(t)(config=copy.copy(t.config))
            startup = t._origin_startup.clone()
            if isinstance(plan, DistPlan):
                other.transpile(
                    rank, program=t.origin_program, pservers=",".join(endpoints), trainers=plan.trainers,
                    sync_mode=sync_mode, startup_program=startup, current_endpoint="",
                )  # fmt: skip
            else:
                other.transpile(
                    rank, program=t.origin_program, trainers=",".join(endpoints), startup_program=startup,
                    current_endpoint=endpoints[rank],
                )  # fmt: skip
            ep = "" if isinstance(plan, DistPlan) else endpoints[rank]
            roles.append(RoleView(f"trainer {rank}", "trainer", ep, other.get_trainer_program(), startup))
    finally:
        _nested.active = was
    if isinstance(plan, DistPlan):  # step 2
        for ep in endpoints:
            main, startup = t.get_pserver_programs(ep)
            roles.append(RoleView(f"pserver {ep}", "pserver", ep, main, startup))
    return roles


def role_stem(role: RoleView) -> str:
    """The file name stem of a role's programs: 'trainer_0', 'pserver_127.0.0.1_6174'."""
    return role.name.replace(" ", "_").replace(":", "_")


def write_roles(directory: str, roles: list[RoleView], plan, html: str | None = None) -> list[str]:
    """Write each role's main and startup program, plan.txt, plan.json, summary.txt and (to `html`,
    a path) the report; returns the paths written, in that order. Each file is replaced whole, so
    processes writing the same dump side by side leave complete files."""
    os.makedirs(directory, exist_ok=True)
    written, summaries = [], []
    for role in roles:
        for kind, program in (("main", role.main), ("startup", role.startup)):
            if program is None:
                continue
            suffix = "_startup" if kind == "startup" else ""
            written.append(
                _replace(os.path.join(directory, role_stem(role) + suffix + ".json"), _program_text(program))
            )
            summaries += [f"{role.name} {kind}:", op_summary(program)]
    view = plan_view(plan)
    written.append(_replace(os.path.join(directory, "plan.txt"), view["text"].rstrip("\n") + "\n"))
    written.append(_replace(os.path.join(directory, "plan.json"), json.dumps(view, indent=1) + "\n"))
    written.append(_replace(os.path.join(directory, "summary.txt"), "\n".join(summaries) + "\n"))
    if html is not None:
        if not _renderer:
            raise FleetgraphError(f"write {html}: no report renderer; import fleetgraph, which sets it")
        written.append(_replace(html, _renderer[0](roles, view, title=_title(view))))
    return written


def dump_if_requested(t, sync_mode: bool | None) -> None:
    """After `t.transpile(...)`: with FLEETGRAPH_DUMP_DIR set, write every role's programs, the plan,
    the summary and report.html there (the same files from every process of a job)."""
    directory = os.environ.get(DUMP_DIR_ENV)
    if not directory or getattr(_nested, "active", False):
        return
    write_roles(directory, transpile_roles(t, sync_mode), t.plan, html=os.path.join(directory, "report.html"))


def _title(view: dict) -> str:
    if view["kind"] == "pserver":
        return f"{view['mode']} parameter server, {view['trainers']} trainers × {len(view['pservers'])} pservers"
    return f"collective, {len(view['endpoints'])} ranks"


def _program_text(program: Program) -> str:
    return program_to_json(program) + "\n"


def _replace(path: str, text: str) -> str:
    """Write `text` beside `path` under a name of this process and thread, then rename it into place."""
    tmp = f"{path}.{os.getpid()}.{threading.get_ident()}.tmp"
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return path
