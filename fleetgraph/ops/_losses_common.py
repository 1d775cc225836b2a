"""What the loss op modules share: an op registered with its grad op, grad shape inference that
copies another input's shape, and Paddle's clip of infinities."""

from __future__ import annotations

from ..ir import InferContext, make_grad_op, register_op


def grads_shaped_as(**sources: str):
    """Shape inference of a grad op whose gradients take the shapes of other inputs (Paddle's grad
    ops do not always carry the forward input): {'X@GRAD': 'Residual'}."""

    def infer(ctx: InferContext) -> None:
        for grad, source in sources.items():
            var = ctx.input_var(source)
            ctx.set_output(grad, var.shape, var.dtype)

    return infer


def register_with_grad(type_, inputs, outputs, attrs, infer, kernel, grad_in, grad_out, grad_kernel, grad_infer=None):
    """An op and its `<type>_grad`, the grad op reading `grad_in` ('Slot?' where the forward's is
    optional) and writing `grad_out`."""
    register_op(
        type_,
        inputs=inputs,
        outputs=outputs,
        attrs=attrs,
        infer_shape=infer,
        grad=make_grad_op(inputs=tuple(s.rstrip("?") for s in grad_in), outputs=grad_out),
        kernel=kernel,
    )
    register_op(
        type_ + "_grad", inputs=grad_in, outputs=grad_out, attrs=attrs, infer_shape=grad_infer, kernel=grad_kernel
    )


def tolerable(xp, v):
    """Paddle's TolerableValue: an infinity becomes +-1e20."""
    return xp.where(xp.isinf(v), xp.sign(v) * 1e20, v)
