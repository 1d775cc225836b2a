"""Matrix decomposition ops of Paddle 2.0: cholesky (X -> Out, lower or upper triangular factor) and
inverse (Input -> Output), batched over leading dims, with their gradients."""

from __future__ import annotations

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape


def _square_matrices(ctx: InferContext, slot: str, out_slot: str) -> None:
    x = ctx.input_var(slot)
    if len(x.shape) < 2 or (x.shape[-1] >= 0 and x.shape[-2] >= 0 and x.shape[-1] != x.shape[-2]):
        raise ctx.error(f"{slot} '{x.name}' {fmt_shape(x.shape)}; expected [*, M, M] (square matrices)")
    if x.dtype not in ("float32", "float64"):
        raise ctx.error(f"{slot} '{x.name}' is {x.dtype}; expected float32 or float64")
    ctx.set_output(out_slot, x.shape, x.dtype)


# -- cholesky: A = L L^T (upper: A = U^T U) ----------------------------------------------------------


def _cholesky(xp, x, *, upper):
    # the symmetric part of x, which for the symmetric matrices the op takes is x itself: the
    # gradient is then the symmetric one Paddle's cholesky_grad gives, whatever entry is perturbed
    lower = xp.linalg.cholesky((x + x.mT) / 2)
    return lower.mT if upper else lower


def _cholesky_grad(xp, out, dout, *, upper):
    """Murray (2016): with Phi the lower triangle with its diagonal halved, P = Phi(L^T dL) and
    S = L^-T P L^-1, the gradient is the symmetric part of S."""
    lower, dlower = (out.mT, dout.mT) if upper else (out, dout)
    phi = xp.tril(lower.mT @ dlower)
    phi = phi - xp.tril(xp.triu(phi)) / 2
    inv = xp.linalg.inv(lower)
    s = inv.mT @ phi @ inv
    return (s + s.mT) / 2


register_op(
    "cholesky",
    inputs=("X",),
    outputs=("Out",),
    attrs={"upper": False},
    infer_shape=lambda ctx: _square_matrices(ctx, "X", "Out"),
    grad=make_grad_op(inputs=("Out", "Out@GRAD"), outputs=("X@GRAD",)),
    kernel=_cholesky,
)
register_op(
    "cholesky_grad",
    inputs=("Out", "Out@GRAD"),
    outputs=("X@GRAD",),
    attrs={"upper": False},
    kernel=_cholesky_grad,
)

# -- inverse -------------------------------------------------------------------------------------


register_op(
    "inverse",
    inputs=("Input",),
    outputs=("Output",),
    infer_shape=lambda ctx: _square_matrices(ctx, "Input", "Output"),
    grad=make_grad_op(inputs=("Output", "Output@GRAD"), outputs=("Input@GRAD",)),
    kernel=lambda xp, x: xp.linalg.inv(x),
)
register_op(
    "inverse_grad",
    inputs=("Output", "Output@GRAD"),
    outputs=("Input@GRAD",),
    # d(A^-1) = -A^-1 dA A^-1, so dA = -A^-T dOut A^-T
    kernel=lambda xp, out, dout: -(out.mT @ dout @ out.mT),
)
