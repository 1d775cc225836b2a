"""One self-contained HTML page of a transpile: every role's program side by side, each send and recv
linked to the pserver block that serves it, each all-reduce bucket with its gradients, the plan's
table, and every op's inputs, outputs and attributes a click away.

The page needs no network: its CSS, script and drawing are inline (`report_assets`). The links are
computed here, from the programs alone (a send's `send_varnames` and `epmap` against each pserver's
`listen_and_serv` `grad_to_block_id` and optimize blocks), and written into the page as data; the
page's script only draws them. The plan arrives as plain data (`plan_view` in the transpiler makes
it), so this module reads programs and data and runs nothing.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..ir.errors import fmt_shape
from ..ir.program import Block, Operator, OpRole, Program
from ..transpiler.dump import RoleView
from .report_assets import CSS, SCRIPT

ALLREDUCE_OPS = ("c_allreduce_sum", "c_allreduce_max", "c_allreduce_min", "c_allreduce_prod", "allreduce")
_TRAINER_COPY = re.compile(r"\.trainer_\d+$")


@dataclass(frozen=True)
class Link:
    """An arrow of the drawing: from an op's element to a block's element (or to another op's, for
    the all-reduce of one bucket on the next rank); `var` is what travels."""

    source: str
    target: str
    kind: str  # "send", "recv", "prefetch" or "allreduce"
    var: str
    label: str  # where it goes, for people: '127.0.0.1:6175 block 2', 'trainer 1'


@dataclass
class Bucket:
    """Gradients all-reduced together: `fused` is the variable reduced (the gradient itself when alone)."""

    fused: str
    grads: list[str]
    numel: int
    nbytes: int
    dtype: str
    ops: list[str] = field(default_factory=list)  # the element ids of its all-reduce, one per rank


def element_id(role: int, program: str, block: int, op: int | None = None) -> str:
    """The page's id of a block ('r1-main-b0') or of an op in it ('r1-main-b0-o3')."""
    return f"r{role}-{program}-b{block}" + ("" if op is None else f"-o{op}")


# -- links --------------------------------------------------------------------------------------


class _Pserver:
    """What a pserver program serves: gradient -> optimize block, and which block writes a variable."""

    def __init__(self, role: int, program: Program) -> None:
        self.role = role
        self.grad_block: dict[str, int] = {}
        self.writer: dict[str, int] = {}
        for op in program.global_block().ops:
            if op.type == "listen_and_serv":
                for entry in op.attrs.get("grad_to_block_id", []):
                    name, _, idx = str(entry).rpartition(":")
                    self.grad_block[name] = int(idx)
        for block in program.blocks[1:]:
            for op in block.ops:
                for name in op.output_arg_names:
                    self.writer.setdefault(name, block.idx)

    def block_for(self, name: str, kind: str) -> int:
        """The block that serves `name`: a gradient's optimize block, the block updating a parameter
        (or table block), else block 0 (listen_and_serv itself)."""
        for candidate in (name, _TRAINER_COPY.sub("", name)):
            if kind == "send" and candidate in self.grad_block:
                return self.grad_block[candidate]
            if candidate in self.writer:
                return self.writer[candidate]
        return 0


def _remote_names(op: Operator) -> list[tuple[str, str, str]]:
    """(kind, variable, endpoint) for each variable a trainer op sends to, receives from or looks
    up on a pserver; empty for other ops (barriers included: they carry no variable)."""
    attrs = op.attrs
    if op.type == "distributed_lookup_table":
        return [("prefetch", n, ep) for n, ep in zip(attrs.get("table_names", []), attrs.get("endpoints", []))]
    epmap = list(attrs.get("epmap") or [])
    if not epmap:
        return []
    if "send_varnames" in attrs or op.type == "send":
        names = list(attrs.get("send_varnames") or op.input_arg_names)
        kind = "send"
    else:
        names = list(attrs.get("recv_varnames") or op.output_arg_names)
        kind = "recv"
    if len(epmap) == 1 and len(names) > 1:
        epmap = epmap * len(names)
    return [(kind, n, ep) for n, ep in zip(names, epmap)]


def compute_links(roles: list[RoleView]) -> tuple[list[Link], list[str]]:
    """The arrows of the page, and the ops that talk to an endpoint no pserver of `roles` has
    (listed by element id, drawn in red: a job built this way would wait forever)."""
    pservers = {r.endpoint: _Pserver(i, r.main) for i, r in enumerate(roles) if r.kind == "pserver"}
    links, dangling = [], []
    for i, role in enumerate(roles):
        if role.kind != "trainer":
            continue
        for program_name, program in _programs(role):
            for block in program.blocks:
                for index, op in enumerate(block.ops):
                    source = element_id(i, program_name, block.idx, index)
                    for kind, name, endpoint in _remote_names(op):
                        server = pservers.get(endpoint)
                        if server is None:
                            dangling.append(source)
                            continue
                        served = server.block_for(name, kind)
                        target = element_id(server.role, "main", served)
                        links.append(Link(source, target, kind, name, f"{endpoint} block {served}"))
    names = {element_id(i, "main", 0): r.name for i, r in enumerate(roles)}
    for bucket in allreduce_buckets(roles):
        for a, b in zip(bucket.ops, bucket.ops[1:]):
            links.append(Link(a, b, "allreduce", bucket.fused, names[b.rsplit("-o", 1)[0]]))
    return links, sorted(set(dangling))


def _programs(role: RoleView) -> list[tuple[str, Program]]:
    return [("main", role.main)] + ([("startup", role.startup)] if role.startup is not None else [])


def allreduce_buckets(roles: list[RoleView]) -> list[Bucket]:
    """The all-reduces of the trainers' main block 0 in program order, one Bucket per all-reduce of
    the first trainer; the k-th all-reduce of every rank is the same bucket's (`ops`)."""
    trainers = [(i, r) for i, r in enumerate(roles) if r.kind == "trainer"]
    if not trainers:
        return []
    per_rank = [
        [(k, op) for k, op in enumerate(r.main.global_block().ops) if op.type in ALLREDUCE_OPS] for _, r in trainers
    ]
    block = trainers[0][1].main.global_block()
    buckets = [_bucket(block, op) for _, op in per_rank[0]]
    for (i, _), reduces in zip(trainers, per_rank):
        for bucket, (k, _) in zip(buckets, reduces):
            bucket.ops.append(element_id(i, "main", 0, k))
    return buckets


def _bucket(block: Block, reduce: Operator) -> Bucket:
    fused = reduce.input("X")[0]
    grads = [fused]
    for op in block.ops:
        if op.type == "coalesce_tensor" and fused in op.output("FusedOutput"):
            grads = list(op.input("Input"))
    numel, dtype = 0, ""
    for name in grads:
        var = block._find_var_recursive(name)
        if var is not None:
            size = 1
            for d in var.shape:
                size *= max(int(d), 0)
            numel, dtype = numel + size, var.dtype
    return Bucket(fused, grads, numel, numel * _ITEMSIZE.get(dtype, 4), dtype)


_ITEMSIZE = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "int32": 4, "int64": 8}


# -- the page -----------------------------------------------------------------------------------


def build_report(roles: list[RoleView], plan: dict | None = None, title: str = "transpiled programs") -> str:
    """The HTML page of `roles` (pservers and trainers, or collective ranks) and the `plan` (the
    transpiler's `plan_view`; None leaves the plan's table out)."""
    links, dangling = compute_links(roles)
    buckets = allreduce_buckets(roles)
    page = _Page(dangling=set(dangling))
    for link in links:
        page.links_from.setdefault(link.source, []).append(link)
    for k, bucket in enumerate(buckets):
        for oid in bucket.ops:
            page.bucket_of[oid] = f"bucket {k}: {', '.join(bucket.grads)} ({_fmt_bytes(bucket.nbytes)})"
    columns = [_role_column(i, r, page) for i, r in _ordered(roles)]
    data = {"ops": page.details, "links": [vars(link) for link in links], "dangling": dangling}
    body = [
        f"<header><h1>fleetgraph · {_e(title)}</h1>{_legend()}</header>",
        _plan_section(plan, roles, buckets),
        '<main id="lanes"><svg id="links" aria-hidden="true"></svg>' + "".join(columns) + "</main>",
        '<aside id="panel" hidden><button id="close" title="close">×</button><div id="panel-body"></div></aside>',
        f'<script type="application/json" id="fg-data">{_json_for_script(data)}</script>',
        f"<script>{SCRIPT}</script>",
    ]
    head = f'<meta charset="utf-8"><title>fleetgraph · {_e(title)}</title><style>{CSS}</style>'
    return f'<!DOCTYPE html>\n<html lang="en"><head>{head}</head><body>{"".join(body)}</body></html>\n'


@dataclass
class _Page:
    """What the blocks of the page read (links by source op, ops talking to no pserver, each
    all-reduce's bucket) and fill (each op's details, for the panel)."""

    dangling: set[str]
    links_from: dict[str, list[Link]] = field(default_factory=dict)
    bucket_of: dict[str, str] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)


def _ordered(roles: list[RoleView]) -> list[tuple[int, RoleView]]:
    """Trainers around the pservers (half on each side), so arrows stay short; ranks in order."""
    indexed = list(enumerate(roles))
    servers = [x for x in indexed if x[1].kind == "pserver"]
    trainers = [x for x in indexed if x[1].kind != "pserver"]
    if not servers:
        return trainers
    half = (len(trainers) + 1) // 2
    return trainers[:half] + servers + trainers[half:]


def _legend() -> str:
    items = [("fwd", "forward"), ("bwd", "backward"), ("opt", "optimize"), ("rpc", "communication")]
    arrows = [("send", "send"), ("recv", "recv"), ("prefetch", "table lookup"), ("allreduce", "all-reduce")]
    return (
        '<p class="legend">'
        + "".join(f'<span class="op {c}">{label}</span>' for c, label in items)
        + "".join(f'<span class="arrow {c}">{label}</span>' for c, label in arrows)
        + " · click an op for its inputs, outputs and attributes</p>"
    )


def _role_column(index: int, role: RoleView, page: _Page) -> str:
    parts = [
        f'<section class="role {role.kind}" id="r{index}" data-role="{_e(role.name)}" data-kind="{role.kind}" '
        f'data-endpoint="{_e(role.endpoint)}"><h2>{_e(role.name)}</h2>'
    ]
    parts += [_block(index, role, "main", b, page) for b in _top_blocks(role.main)]
    if role.startup is not None:
        count = sum(len(b.ops) for b in role.startup.blocks)
        parts.append(f'<details class="startup"><summary>startup program · {count} ops</summary>')
        parts += [_block(index, role, "startup", b, page) for b in role.startup.blocks]
        parts.append("</details>")
    return "".join(parts) + "</section>"


def _block(index: int, role: RoleView, program_name: str, block: Block, page: _Page) -> str:
    bid = element_id(index, program_name, block.idx)
    title = f"block {block.idx}" + _block_note(role, block)
    items = []
    for k, op in enumerate(block.ops):
        oid = element_id(index, program_name, block.idx, k)
        links = page.links_from.get(oid, [])
        bucket = page.bucket_of.get(oid)
        page.details[oid] = _op_details(role, program_name, block, k, op, links) | (
            {"bucket": bucket} if bucket else {}
        )
        classes = " ".join(["op", _role_class(op)] + (["dangling"] if oid in page.dangling else []))
        targets = " ".join(dict.fromkeys(link.target for link in links))
        link_attr = f' data-links="{_e(targets)}"' if targets else ""
        items.append(
            f'<li class="{classes}" id="{oid}" tabindex="0"{link_attr}><b>{_e(op.type)}</b>'
            f'<span class="args">{_e(bucket or _op_line(op, links))}</span></li>'
        )
        sub = block.program.sub_block_of(op)
        if sub is not None:  # a branch, loop body or gradient block, under the op that runs it
            items.append(f'<li class="sub-block">{_block(index, role, program_name, sub, page)}</li>')
    return f'<div class="block" id="{bid}"><h3>{_e(title)}</h3><ol start="0">{"".join(items)}</ol></div>'


def _top_blocks(program) -> list[Block]:
    """The blocks no op runs as its sub-block (those are drawn inside their op's block)."""
    nested = {sub.idx for b in program.blocks for op in b.ops if (sub := program.sub_block_of(op)) is not None}
    return [b for b in program.blocks if b.idx not in nested]


def _block_note(role: RoleView, block: Block) -> str:
    """What a pserver's optimize block updates ('· fc_0.w_0.block1'), from its ops' ParamOut."""
    if role.kind != "pserver" or block.idx == 0:
        return ""
    updated = [n for op in block.ops for n in op.outputs.get("ParamOut", [])]
    return f" · {', '.join(dict.fromkeys(updated))}" if updated else ""


def _role_class(op: Operator) -> str:
    role = int(op.attrs.get("op_role", 0))
    if role & (OpRole.RPC | OpRole.Dist) or op.type in ALLREDUCE_OPS:
        return "rpc"
    if role & OpRole.Optimize:
        return "opt"
    if role & OpRole.Backward:
        return "bwd"
    return "fwd"


def _op_line(op: Operator, links: list[Link]) -> str:
    """The op's one-line gist: where it sends or what it writes."""
    if links and links[0].kind != "allreduce":
        return "; ".join(f"{link.var} → {link.label}" for link in links)
    peers = op.attrs.get("endpoints") or op.attrs.get("epmap") or []
    if peers and op.type != "distributed_lookup_table":
        return "↔ " + ", ".join(dict.fromkeys(peers))
    names = op.output_arg_names or op.input_arg_names
    return ", ".join(names)


def _op_details(role: RoleView, program_name: str, block: Block, index: int, op: Operator, links) -> dict:
    def slots(slot_map: dict) -> dict:
        return {slot: [_var_info(block, n) for n in names] for slot, names in slot_map.items()}

    return {
        "where": f"{role.name} · {program_name} program · block {block.idx} · op {index}",
        "type": op.type,
        "role": _role_name(int(op.attrs.get("op_role", 0))),
        "inputs": slots(op.inputs),
        "outputs": slots(op.outputs),
        "attrs": {k: _jsonable(v) for k, v in sorted(op.attrs.items()) if k != "op_callstack"},
        "links": [{"target": link.target, "kind": link.kind, "var": link.var, "label": link.label} for link in links],
    }


def _var_info(block: Block, name: str) -> list[str]:
    var = block._find_var_recursive(name)
    if var is None:
        return [name, "undeclared", ""]
    return [name, fmt_shape(var.shape), f"{var.dtype}{' persistable' if var.persistable else ''}"]


def _role_name(role: int) -> str:
    names = [r.name for r in OpRole if r.value and role & r.value]
    return " | ".join(names) or "Forward"


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return repr(value)


# -- the plan's table ---------------------------------------------------------------------------


def _plan_section(plan: dict | None, roles: list[RoleView], buckets: list[Bucket]) -> str:
    parts = ['<section id="plan"><h2>Plan</h2>']
    if plan is not None and plan.get("kind") == "pserver":
        parts.append(_pserver_table(plan, roles))
    if buckets and not any(r.kind == "pserver" for r in roles):
        parts.append(_bucket_table(buckets))
    if plan is not None and plan.get("text"):
        parts.append(f"<details><summary>as text</summary><pre>{_e(plan['text'])}</pre></details>")
    return "".join(parts) + "</section>"


def _pserver_table(plan: dict, roles: list[RoleView]) -> str:
    servers = {r.endpoint: _Pserver(i, r.main) for i, r in enumerate(roles) if r.kind == "pserver"}
    head = (
        f"<p>{_e(plan['mode'])}, {plan['trainers']} trainers, {len(plan['pservers'])} pservers; bytes are per "
        "trainer and step, a distributed table's per distinct id of a batch (the rows it really moves).</p>"
        '<table class="plan"><thead><tr><th>pserver</th><th>block</th><th>rows</th><th>of</th><th>shape</th>'
        "<th>dtype</th><th>kind</th><th>sent</th><th>received</th></tr></thead><tbody>"
    )
    rows = []
    for server in plan["pservers"]:
        ep = server["endpoint"]
        known = servers.get(ep)
        total = (
            _bytes(server["bytes_sent"], server["bytes_sent_per_id"]),
            _bytes(server["bytes_received"], server["bytes_received_per_id"]),
        )
        rows.append(
            f'<tr class="total" data-endpoint="{_e(ep)}"><th colspan="7">pserver {_e(ep)}</th>'
            f"<td>{total[0]}</td><td>{total[1]}</td></tr>"
        )
        for b in server["blocks"]:
            name = _e(b["name"])
            if known is not None:
                name = f'<a href="#{element_id(known.role, "main", known.block_for(b["name"], "recv"))}">{name}</a>'
            per = " per id" if b["kind"] == "table" else ""
            rows.append(
                f'<tr class="block-row" data-endpoint="{_e(ep)}" data-block="{_e(b["name"])}"><td>{_e(ep)}</td>'
                f"<td>{name}</td><td>{b['rows'][0]}:{b['rows'][1]}</td>"
                f"<td>{_e(b['param'])} {fmt_shape(b['param_shape'])}</td>"
                f"<td>{fmt_shape(b['shape'])}</td><td>{_e(b['dtype'])}</td><td>{_e(b['kind'])}</td>"
                f"<td>{_fmt_bytes(b['bytes_sent'])}{per}</td><td>{_fmt_bytes(b['bytes_received'])}{per}</td></tr>"
            )
    return head + "".join(rows) + "</tbody></table>"


def _bucket_table(buckets: list[Bucket]) -> str:
    rows = "".join(
        f'<tr class="bucket-row" data-fused="{_e(b.fused)}"><td>{k}</td><td>{_e(b.fused)}</td>'
        f"<td>{_e(', '.join(b.grads))}</td><td>{b.numel}</td><td>{_fmt_bytes(b.nbytes)}</td><td>{_e(b.dtype)}</td></tr>"
        for k, b in enumerate(buckets)
    )
    return (
        "<p>Each rank all-reduces these buckets in this order; a bucket of several gradients is one fused buffer.</p>"
        '<table class="plan buckets"><thead><tr><th>bucket</th><th>reduced variable</th><th>gradients</th>'
        f"<th>elements</th><th>bytes</th><th>dtype</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def _bytes(whole: int, per_id: int) -> str:
    return _fmt_bytes(whole) + (f" + {_fmt_bytes(per_id)} per id" if per_id else "")


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def _e(text: Any) -> str:
    return html.escape(str(text), quote=True)


def _json_for_script(data: Any) -> str:
    """JSON that cannot end its <script> element early: every '<' written as \\u003c."""
    return json.dumps(data, separators=(",", ":")).replace("<", "\\u003c")
