"""Gradient clipping in sync parameter-server training: clip the trainers' averaged gradient, as one
process clipping the gradient of the whole batch does.

A norm clip (`ClipGradByGlobalNorm`, or `ClipGradByNorm` of a parameter cut into blocks) needs the
norm of gradient blocks that live on different pservers, and only after the trainers' copies are
averaged. So, unlike Paddle's transpiler (which leaves the clip ops on the trainers, each clipping its
own gradient before sending it), the clip moves to the pservers and the norm is put together at the
send barrier, with no extra round trip:
  1. `plan_clip`: from the clip ops of the program, which kind of clip, its limit, each clipped
     parameter's clipped-gradient variable, and the norm groups (global norm: one group of every
     clipped parameter; by norm: one group per parameter; by value: none, it clips element-wise);
  2. every pserver has a clip block, run once every trainer's gradients of a step are in (when the
     send barrier is answered): it averages the trainers' copies of each clipped block it owns and
     adds up the squares of each group's blocks, one sum per group ('@CLIP_SQUARES@'), which the
     barrier's answer carries back;
  3. the trainer's send_barrier outputs what the pservers answered ([pservers, groups]); the trainer
     adds the columns up, takes each group's scale clip_norm / max(clip_norm, norm) and sends it to
     every pserver ('@CLIP_SCALE@'): the message that lets the pservers apply the step carries it;
  4. each clipped block's optimize block starts by multiplying the averaged gradient by its group's
     scale; by-value clipping simply runs on the pservers, on the averaged gradient.
Async and half-async keep Paddle's form (each trainer clips what it sends); GEO trainers run their
optimizer, clipping included, locally.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import FleetgraphError, OpRole, Program
from ..ir.program import Block

CLIP_SCOPE = "/gradient_clip/"
SQUARES, SCALE = "@CLIP_SQUARES@", "@CLIP_SCALE@"
_DIST = {"op_role": int(OpRole.Dist)}


def is_clip_op(op) -> bool:
    """An op of grad_clip (Paddle's transpiler finds them by their name scope too)."""
    return CLIP_SCOPE in op.attrs.get("op_namescope", "/")


@dataclass(frozen=True)
class ClipPlan:
    kind: str  # "value", "norm" or "global_norm"
    clip_norm: float
    clipped: tuple[tuple[str, str, str], ...]  # (parameter, its gradient, the clipped gradient)
    groups: tuple[tuple[str, ...], ...]  # parameters whose squares add up to one norm
    dtype: str = "float32"  # of the gradients, their norms and scales

    def __str__(self) -> str:
        what = {"value": "by value", "norm": "by each parameter's norm", "global_norm": "by their global norm"}
        limit = f" to {self.clip_norm:g}" if self.groups else ""
        return f"  clip: {len(self.clipped)} averaged gradients on the pservers, {what[self.kind]}{limit}"

    def clipped_grad(self, param: str) -> str | None:
        return {p: c for p, _, c in self.clipped}.get(param)

    def unclipped_grad(self, param: str, grad: str) -> str:
        """What the trainers send of a parameter whose optimizer takes `grad`: the gradient before
        clipping, as the pservers clip it."""
        return {p: g for p, g, _ in self.clipped}.get(param, grad)

    def group_of(self, param: str) -> int | None:
        for g, params in enumerate(self.groups):
            if param in params:
                return g
        return None


_FINAL = {"clip": "value", "clip_by_norm": "norm", "elementwise_mul": "global_norm"}


def plan_clip(program: Program, params: list[str]) -> ClipPlan | None:
    """Step 1: the clip of the program's optimizer, None without one."""
    ops = [op for op in program.global_block().ops if is_clip_op(op)]
    finals = [op for op in ops if op.type in _FINAL and op.attrs.get("op_role_var", [None])[0] in params]
    if not finals:
        return None
    kinds = {_FINAL[op.type] for op in finals}
    if len(kinds) > 1:
        raise FleetgraphError(f"transpile: gradient clipping of kinds {sorted(kinds)}; expected one grad_clip")
    kind = kinds.pop()
    dtype = program.global_block().var_recursive(finals[0].input("X")[0]).dtype
    clipped = tuple((op.attrs["op_role_var"][0], op.input("X")[0], op.output("Out")[0]) for op in finals)
    if kind == "value":
        return ClipPlan(kind, 0.0, clipped, (), dtype)
    if kind == "norm":
        limits = {float(op.attrs["max_norm"]) for op in finals}
        if len(limits) > 1:
            raise FleetgraphError(f"transpile: clip_by_norm with limits {sorted(limits)}; expected one grad_clip")
        return ClipPlan(kind, limits.pop(), clipped, tuple((p,) for p, _, _ in clipped), dtype)
    limit = [float(op.attrs["value"]) for op in ops if op.type == "fill_constant"]
    if len(limit) != 1:
        raise FleetgraphError(f"transpile: global-norm clip with {len(limit)} limits (fill_constant); expected 1")
    return ClipPlan(kind, limit[0], clipped, (tuple(p for p, _, _ in clipped),), dtype)


def append_trainer_scale(block: Block, clip: ClipPlan, endpoints: list[str], scale_name: str, trainer_id: int):
    """Step 3: after the send barrier (whose output `SQUARES` is [pservers, groups]), each group's
    scale, sent to every pserver as `scale_name`."""
    shape, dtype = [len(clip.groups)], clip.dtype
    for name in ("@CLIP_SUM@", "@CLIP_NORM@", "@CLIP_LIMIT@", "@CLIP_MAX@", SCALE):
        block.create_var(name, shape, dtype)
    block.append_op("reduce_sum", {"X": [SQUARES]}, {"Out": ["@CLIP_SUM@"]}, {"dim": [0], **_DIST})
    block.append_op("sqrt", {"X": ["@CLIP_SUM@"]}, {"Out": ["@CLIP_NORM@"]}, _DIST)
    block.append_op(
        "fill_constant",
        outputs={"Out": ["@CLIP_LIMIT@"]},
        attrs={"shape": shape, "value": clip.clip_norm, "dtype": dtype, **_DIST},
    )
    block.append_op("elementwise_max", {"X": ["@CLIP_LIMIT@"], "Y": ["@CLIP_NORM@"]}, {"Out": ["@CLIP_MAX@"]}, _DIST)
    block.append_op("elementwise_div", {"X": ["@CLIP_LIMIT@"], "Y": ["@CLIP_MAX@"]}, {"Out": [SCALE]}, _DIST)
    block.append_op(
        "send",
        {"X": [SCALE] * len(endpoints)},
        attrs={
            "epmap": list(endpoints),
            "send_varnames": [scale_name] * len(endpoints),
            "trainer_id": trainer_id,
            "op_role": int(OpRole.RPC),
        },
    )


def append_squares(block: Block, root: Block, clip: ClipPlan, owned: list[tuple[str, str, bool]]) -> None:
    """Step 2, after the merges: `SQUARES` [groups] from the averaged gradient blocks this pserver
    owns, `owned` as (parameter, averaged gradient block, sparse)."""
    role = {"op_role": int(OpRole.Optimize)}
    parts = []
    for g, params in enumerate(clip.groups):
        sums = []
        for _, grad, sparse in [o for o in owned if o[0] in params]:
            dense = grad
            if sparse:  # a sparse gradient's norm is that of its merged rows, as one process takes it
                rows, dense = f"{grad}@CLIP_ROWS", f"{grad}@CLIP_DENSE"
                root.create_var(rows, root.var(grad).shape, root.var(grad).dtype, type="selected_rows")
                _declare(root, dense, [-1, *root.var(grad).shape[1:]], clip.dtype)
                block.append_op("merge_selected_rows", {"X": [grad]}, {"Out": [rows]}, role)
                block.append_op("get_tensor_from_selected_rows", {"X": [rows]}, {"Out": [dense]}, role)
            square, total = f"{grad}@CLIP_SQUARE", f"{grad}@CLIP_SUM"
            _declare(root, square, root.var(dense).shape if not sparse else root.var(grad).shape[1:], clip.dtype)
            _declare(root, total, [1], clip.dtype)
            block.append_op("square", {"X": [dense]}, {"Out": [square]}, role)
            block.append_op("reduce_sum", {"X": [square]}, {"Out": [total]}, {"reduce_all": True, **role})
            sums.append(total)
        part = _declare(root, f"{SQUARES}.group{g}", [1], clip.dtype)
        if not sums:
            attrs = {"shape": [1], "value": 0.0, "dtype": clip.dtype, **role}
            block.append_op("fill_constant", outputs={"Out": [part]}, attrs=attrs)
        else:
            block.append_op("sum", {"X": sums}, {"Out": [part]}, role)
        parts.append(part)
    _declare(root, SQUARES, [len(clip.groups)], clip.dtype)
    block.append_op("concat", {"X": parts}, {"Out": [SQUARES]}, {"axis": 0, **role})


def declare_scale(root: Block, clip: ClipPlan, received: list[str]) -> None:
    """The scale the pserver applies, and the names the trainers send it under."""
    for name in dict.fromkeys([SCALE, *received]):
        _declare(root, name, [len(clip.groups)], clip.dtype)


def _declare(root: Block, name: str, shape, dtype: str = "float32") -> str:
    if not root.has_var(name):
        root.create_var(name, list(shape), dtype)
    return name


def append_scaled_grad(block: Block, root: Block, clip: ClipPlan, param: str, merged: str, clipped: str) -> None:
    """Step 4: the clipped gradient block, the averaged one times its group's scale."""
    role = {"op_role": int(OpRole.Optimize), "op_role_var": [param, merged]}
    scale, g = SCALE, clip.group_of(param)
    if len(clip.groups) > 1:
        scale = _declare(root, f"{SCALE}.group{g}", [1], clip.dtype)
        block.append_op("slice", {"Input": [SCALE]}, {"Out": [scale]}, {"starts": [g], "ends": [g + 1], **role})
    block.append_op("elementwise_mul", {"X": [merged], "Y": [scale]}, {"Out": [clipped]}, role)
