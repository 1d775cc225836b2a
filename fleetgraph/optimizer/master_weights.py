"""Float32 master weights of bfloat16 parameters (Paddle's multi_precision, which paddle.amp.decorate
turns on at level O2): a bfloat16 parameter's update runs on its float32 master with the gradient
cast up, and the parameter then takes the master rounded, so updates smaller than bfloat16's spacing
(1/128 of the value) still add up. The master carries the parameter's name, so its optimizer state
(moments, velocity) is named and kept as the parameter's, in float32."""

from __future__ import annotations

import numpy as np

from ..dygraph.tensor import ParamBase, Tensor
from ..ops.selected_rows import SelectedRows


def with_masters(opt, params_grads: list) -> tuple[list, list]:
    """(the pairs to update: a bfloat16 parameter's replaced by its master and float32 gradient,
    the (parameter, master) pairs that write_back rounds into the parameters)."""
    masters = opt.__dict__.setdefault("_master_weights", {})
    pending = opt.__dict__.get("_pending_masters") or {}
    pairs, back = [], []
    for p, g in params_grads:
        if p.dtype != "bfloat16":
            pairs.append((p, g))
            continue
        master = masters.get(p.name)
        if master is None:
            master = masters[p.name] = ParamBase(
                p.value.astype(np.float32), p.name, regularizer=p.regularizer,
                optimize_attr=p.optimize_attr, need_clip=p.need_clip,
            )  # fmt: skip
            if p.name in pending:  # set_state_dict before the first step
                master.set_value(np.asarray(getattr(pending[p.name], "value", pending[p.name]), np.float32))
        pairs.append((master, _float32(g)))
        back.append((p, master))
    return pairs, back


def write_back(back: list) -> None:
    for p, master in back:
        p.value = master.value.astype(p.value.dtype)


def _float32(g: Tensor) -> Tensor:
    value = g.value
    if isinstance(value, SelectedRows):
        out = Tensor(SelectedRows(value.rows, value.value.astype(np.float32), value.height), g.name)
        out.type = g.type
        return out
    return Tensor(value.astype(np.float32), g.name)
