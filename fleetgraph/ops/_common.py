"""Shape-inference helpers shared by the op families."""

from __future__ import annotations

from ..ir import InferContext
from ..ir.errors import fmt_shape


def same_shape(in_slot: str = "X", out_slot: str = "Out"):
    """Output has the input's shape and dtype."""

    def infer(ctx: InferContext) -> None:
        var = ctx.input_var(in_slot)
        ctx.set_output(out_slot, var.shape, var.dtype, lod_level=var.lod_level)

    return infer


def known(d: int) -> bool:
    return d >= 0


def broadcast_dims(ctx: InferContext, x: tuple, y: tuple, what: str) -> tuple[int, ...]:
    """NumPy broadcasting over static shapes where -1 means 'known at run time'."""
    out = []
    for i in range(1, max(len(x), len(y)) + 1):
        a = x[-i] if i <= len(x) else 1
        b = y[-i] if i <= len(y) else 1
        if a == b or b == 1:
            out.append(a)
        elif a == 1:
            out.append(b)
        elif a == -1 or b == -1:
            out.append(max(a, b))
        else:
            raise ctx.error(f"cannot broadcast {what}: {fmt_shape(y)} into {fmt_shape(x)}")
    return tuple(reversed(out))


def aligned_y_shape(x_rank: int, y_shape: tuple, axis: int) -> tuple[int, ...]:
    """Paddle's elementwise `axis`: Y lines up with X's dims starting at `axis` (trailing 1s of Y
    dropped first); the result is Y's shape padded with 1s to X's rank."""
    y = list(y_shape)
    while len(y) > 1 and y[-1] == 1 and axis + len(y) > x_rank:
        y.pop()
    return (1,) * axis + tuple(y) + (1,) * (x_rank - axis - len(y))


def normalize_axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def prod(dims) -> int:
    n = 1
    for d in dims:
        n *= d
    return n
