"""`fluid.contrib.model_stat.summary`: a table of the parameters and FLOPs of a program's convolution,
fc, pooling, batch-norm and activation ops, counted as Paddle's."""

from __future__ import annotations

__all__ = ["summary"]

_ACTIVATIONS = ("sigmoid", "tanh", "relu", "leaky_relu", "prelu")


def _count(block_vars, op):
    """(input shape, output shape, params, flops) of one op, or None for an op it does not count."""
    shape = lambda slot_names: block_vars[slot_names[0]].shape  # noqa: E731
    if op.type in ("conv2d", "depthwise_conv2d"):
        c_out, c_in, k_h, k_w = shape(op.input("Filter"))
        _, _, h_out, w_out = out = shape(op.output("Output"))
        kernel_ops = k_h * k_w * (c_in / op.attrs["groups"])
        bias_ops = 1 if op.input("Bias") else 0
        return (
            shape(op.input("Input")),
            out,
            c_out * (kernel_ops + bias_ops),
            2 * h_out * w_out * c_out * (kernel_ops + bias_ops),
        )
    if op.type == "pool2d":
        _, c_out, h_out, w_out = out = shape(op.output("Out"))
        k = op.attrs["ksize"]
        return shape(op.input("X")), out, 0, h_out * w_out * c_out * k[0] * k[1]
    if op.type == "mul":
        if "fc" not in op.output("Out")[0]:
            return None
        k_in, k_out = shape(op.input("Y"))
        return shape(op.input("X")), shape(op.output("Out")), k_in * k_out + 1, k_in * k_out
    if op.type in _ACTIVATIONS:
        in_shape = shape(op.input("X"))
        flops = 1
        for dim in in_shape[1:]:  # per sample, as every other count here (Paddle's multiplies in a -1 batch)
            flops *= dim
        return in_shape, shape(op.output("Out")), int(op.type == "prelu"), flops
    if op.type == "batch_norm":
        _, c_in, h, w = in_shape = shape(op.input("X"))
        return in_shape, shape(op.output("Y")), c_in * 2, h * w * c_in * 2
    return None


def summary(main_prog) -> None:
    """Print each counted op's input and output shape (batch dimension dropped), parameters and
    FLOPs, then the totals."""
    rows = []
    for block in main_prog.blocks:
        for op in block.ops:
            counted = _count(block.vars, op)
            if counted is not None:
                in_shape, out_shape, params, flops = counted
                rows.append([len(rows), op.type, tuple(in_shape[1:]), tuple(out_shape[1:]), int(params), int(flops)])
    header = ["No.", "TYPE", "INPUT", "OUTPUT", "PARAMs", "FLOPs"]
    cells = [header] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(header))]
    rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    lines = [rule, "| " + " | ".join(h.rjust(w) for h, w in zip(header, widths)) + " |", rule]
    lines += ["| " + " | ".join(c.rjust(w) for c, w in zip(row, widths)) + " |" for row in cells[1:]]
    lines.append(rule)
    params, flops = sum(r[4] for r in rows), sum(r[5] for r in rows)
    print("\n".join(lines))
    print(f"Total PARAMs: {params}({params / 10**6:.4f}M)")
    print(f"Total FLOPs: {flops}({flops / 10**9:.2f}G)")
    print(
        "Notice: \n now supported ops include [Conv, DepthwiseConv, FC(mul), BatchNorm, Pool, "
        "Activation(sigmoid, tanh, relu, leaky_relu, prelu)]"
    )
