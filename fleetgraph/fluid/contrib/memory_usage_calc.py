"""`fluid.contrib.memory_usage`: estimate a program's memory for a batch size, as Paddle's: the bytes of
every LoD tensor an op writes (a -1 dimension taken as batch_size), plus 5% to 10%."""

from __future__ import annotations

from ...ir import Program, VarType

__all__ = ["memory_usage"]

DTYPE_SIZE = {"float16": 2, "float32": 4, "float64": 8, "int16": 2, "int32": 4, "int64": 8, "bool": 1, "uint8": 1}


def memory_usage(program, batch_size: int) -> tuple[float, float, str]:
    """(lower, upper, unit): the estimate in B, KB or MB."""
    if not isinstance(program, Program):
        raise TypeError(
            f"Calculating Memory Usage requires Program as its Parameter. But you passed in {type(program)}"
        )
    if batch_size <= 0:
        raise ValueError("The batch size need to be positive.")
    total = 0.0
    seen = {"@EMPTY@"}
    block = program.global_block()
    for op in block.ops:
        for name in op.output_arg_names:
            if name in seen:
                continue
            seen.add(name)
            var = block.vars[name]
            if var.type != VarType.DENSE_TENSOR:
                continue
            count, negative = 1, 0
            for dim in var.shape:
                if dim < 0:
                    negative += 1
                    if negative > 1:
                        raise ValueError(f"Var {name} has more than one negative dim.")
                    count *= batch_size * (-dim)
                else:
                    count *= dim
            total += count * DTYPE_SIZE[var.dtype]
    unit = "B"
    for bigger in ("KB", "MB"):
        if total <= 1024:
            break
        total, unit = total / 1024, bigger
    return total * 1.05, total * 1.1, unit
