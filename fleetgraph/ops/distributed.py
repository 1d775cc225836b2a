"""Parameter-server ops: send, recv, barriers, listen_and_serv, and the splits that cut variables
into blocks.

The communication ops are declared here with their Paddle slots and attrs so that transpiled
programs can be built, printed, saved and verified; the runtime that executes them lives in
`fleetgraph/executor/comm/`.
"""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, register_op
from ..ir.errors import fmt_shape
from .selected_rows import SelectedRows
from .sparse_table import SparseTable

_RPC_ATTRS = {"epmap": [], "trainer_id": 0}


def _send(xp, xs, *, epmap, trainer_id, sections, send_varnames, merge_add, is_sparse, height_sections, k_steps, ctx):
    if not k_steps and len(xs) == 1 and len(send_varnames) > 1:
        # runtime_split_send_recv: one whole gradient, cut here into the blocks its names list
        xs = (_split_selected_rows if is_sparse else _split_rows)(xp, xs[0], sections, len(send_varnames))
    if len(send_varnames) != (len(sections) if k_steps else len(xs)):
        raise ValueError(f"send: {len(send_varnames)} send_varnames for {len(xs)} values; expected one name each")
    client, names = ctx.comm.ps_client(), send_varnames
    if k_steps and isinstance(xs[0], SparseTable):  # GEO of a table: X is [table, its sparse gradient]
        client.geo_table_step(names[0], xs[0], xs[1], epmap, sections, names, k_steps, trainer_id)
    elif k_steps:  # GEO: X is the parameter itself; every k_steps its change goes out
        client.geo_step(names[0], xs[0], epmap, sections, names, k_steps, trainer_id)
    elif merge_add:
        client.send_merged(names, xs, epmap, trainer_id)
    else:
        client.send(names, xs, epmap, trainer_id)


def _recv(xp, xs, *, epmap, trainer_id, recv_varnames, geo_base, background, ctx):
    client = ctx.comm.ps_client()
    if background:  # async: the latest values a background thread pulled
        values = client.recv_latest(recv_varnames, epmap, trainer_id)
    else:
        values = client.recv(recv_varnames, epmap, trainer_id, keep_base=geo_base)
    return [xp.asarray(v) for v in values]


def _send_barrier(xp, xs, *, endpoints, trainer_id, half_async, ctx):
    # with a norm clip, its output is what the pservers answered: [pservers, norm groups]
    return ctx.comm.ps_client().send_barrier(endpoints, trainer_id)


def _fetch_barrier(xp, xs, *, endpoints, trainer_id, half_async, ctx):
    ctx.comm.ps_client().fetch_barrier(endpoints, trainer_id)


def _listen_and_serv(
    xp,
    xs,
    *,
    endpoint,
    pserver_id,
    Fanin,
    distributed_mode,
    optimize_blocks,
    grad_to_block_id,
    lr_decay_block_id,
    k_steps,
    clip_block_id,
    clip_vars,
    ctx,
):
    ctx.comm.serve(
        ctx=ctx,
        endpoint=endpoint,
        fanin=Fanin,
        mode=distributed_mode,
        optimize_blocks=optimize_blocks,
        grad_to_block_id=grad_to_block_id,
        lr_decay_block_id=lr_decay_block_id,
        clip_block_id=clip_block_id,
        clip_vars=clip_vars,
    )


register_op(
    "send",
    inputs=("X*",),
    outputs=("Out*?",),
    attrs={
        **_RPC_ATTRS,
        "sections": [],
        "send_varnames": [],
        "merge_add": False,
        "is_sparse": False,
        "height_sections": [],
        "k_steps": 0,
    },
    kernel=_send,
    side_effect=True,
    needs_context=True,
)
register_op(
    "recv",
    inputs=("X*?",),
    outputs=("Out*",),
    # geo_base: the GEO trainer's startup keeps what it receives as the base of its deltas;
    # background: an async step reads the latest values a background thread pulled
    attrs={**_RPC_ATTRS, "recv_varnames": [], "geo_base": False, "background": False},
    kernel=_recv,
    side_effect=True,
    needs_context=True,
)
for _barrier_type, _kernel in (("send_barrier", _send_barrier), ("fetch_barrier", _fetch_barrier)):
    register_op(
        _barrier_type,
        inputs=("X*?",),
        outputs=("Out*?",),
        attrs={"endpoints": [], "trainer_id": 0, "half_async": False},
        kernel=_kernel,
        side_effect=True,
        needs_context=True,
    )

# distributed_mode: 0 sync, 1 async, 2 half-async, 3 GEO (Paddle's DistributedMode)
register_op(
    "listen_and_serv",
    inputs=("X*?",),
    attrs={
        "endpoint": "",
        "pserver_id": 0,
        "Fanin": 1,
        "distributed_mode": 0,
        "optimize_blocks": [],
        "grad_to_block_id": [],
        "lr_decay_block_id": -1,  # a learning-rate schedule's block, run before each optimization round
        "k_steps": 0,
        # sync with a norm clip: the block run at the send barrier, and [its sums of squares, the scale]
        "clip_block_id": -1,
        "clip_vars": [],
    },
    kernel=_listen_and_serv,
    side_effect=True,
    needs_context=True,
)

# -- splitting a variable into row blocks -----------------------------------------------------------


def _split_rows_infer(ctx: InferContext, sections_attr: str) -> None:
    x = ctx.input_var("X")
    sections = ctx.attr(sections_attr)
    outs = ctx.op.outputs.get("Out", [])
    if len(sections) != len(outs):
        raise ctx.error(f"{len(sections)} sections {sections} but {len(outs)} outputs")
    if x.shape and x.shape[0] >= 0 and sum(sections) != x.shape[0]:
        raise ctx.error(
            f"sections {sections} add up to {sum(sections)} rows, but X '{x.name}' "
            f"{fmt_shape(x.shape)} has {x.shape[0]}"
        )
    for i, rows in enumerate(sections):
        ctx.set_output("Out", (rows,) + tuple(x.shape[1:]), x.dtype, i=i, type=x.type)


def _split_rows(xp, x, sections, count):
    """Row blocks of x as views: no copy ('by reference')."""
    if len(sections) != count or sum(sections) != x.shape[0]:
        raise ValueError(f"sections {list(sections)}: expected {count} blocks adding up to the {x.shape[0]} rows of X")
    bounds = np.cumsum([0] + list(sections))
    return [x[int(bounds[i]) : int(bounds[i + 1]), ...] for i in range(len(sections))]


def _split_byref(xp, x, *, sections, num, axis):
    return _split_rows(xp, x, sections, len(sections))


def _split_selected_rows(xp, x, height_sections, count=None):
    """The rows of a sparse gradient that fall in each block, renumbered from the block's first row."""
    if count is not None and len(height_sections) != count:
        raise ValueError(f"sections {list(height_sections)}: expected {count} blocks")
    bounds = np.cumsum([0] + list(height_sections))
    rows = np.asarray(x.rows)
    parts = []
    for i, height in enumerate(height_sections):
        keep = (rows >= bounds[i]) & (rows < bounds[i + 1])
        parts.append(SelectedRows(rows[keep] - bounds[i], x.value[xp.asarray(keep)], int(height)))
    return parts


register_op(
    "split_byref",
    inputs=("X",),
    outputs=("Out*",),
    attrs={"sections": [], "num": 0, "axis": 0},
    infer_shape=lambda ctx: _split_rows_infer(ctx, "sections"),
    kernel=_split_byref,
)
register_op(
    "split_selected_rows",
    inputs=("X",),
    outputs=("Out*",),
    attrs={"height_sections": []},
    infer_shape=lambda ctx: _split_rows_infer(ctx, "height_sections"),
    kernel=lambda xp, x, *, height_sections: _split_selected_rows(xp, x, height_sections),
)
