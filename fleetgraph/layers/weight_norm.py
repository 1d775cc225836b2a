"""The parameters of a WeightNormParamAttr: g and v, their init ops in the startup program (g = the
norm of v's initial value) and the ops that make w = g * v / ||v|| in the main program, as Paddle's
LayerHelper._create_weight_normalize lays them out."""

from __future__ import annotations

from ..ir import unique_name
from ..ir.program import Block, Variable


def _norm_ops(block: Block, v: Variable, axes: list[int], name: str) -> Variable:
    """sqrt(sum(v * v)) over `axes`, the reduced axes kept (so it broadcasts against v)."""
    squared = block.create_var(unique_name.generate(f"{name}.square"), v.shape, v.dtype)
    block.append_op("square", {"X": [v]}, {"Out": [squared]})
    kept = [1 if i in axes else d for i, d in enumerate(v.shape)]
    total = block.create_var(unique_name.generate(f"{name}.sum"), kept, v.dtype)
    block.append_op("reduce_sum", {"X": [squared]}, {"Out": [total]}, {"dim": axes, "keep_dim": True})
    norm = block.create_var(unique_name.generate(f"{name}.norm"), kept, v.dtype)
    block.append_op("sqrt", {"X": [total]}, {"Out": [norm]})
    return norm


def weight_normalized(helper, attr, name: str, shape: list[int], dtype: str, init, kw: dict) -> Variable:
    """w for a layer's weight `name`: parameters `<name>_g` and `<name>_v`, and w's ops."""
    axes = [i for i in range(len(shape)) if i != attr.dim]
    g_shape = [shape[i] if i == attr.dim else 1 for i in range(len(shape))]
    main, startup = helper.main_program.global_block(), helper.startup_program.global_block()
    g_name, v_name = f"{name}_g", f"{name}_v"
    if not startup.has_var(v_name):
        v0 = startup.create_parameter(v_name, shape, dtype, initializer=init, **kw)
        init(v0, startup)
        g0 = startup.create_parameter(g_name, g_shape, dtype, **kw)
        norm0 = _norm_ops(startup, v0, axes, v_name)
        startup.append_op("assign", {"X": [norm0]}, {"Out": [g0]})
    v = (
        main.var(v_name)
        if main.has_var(v_name)
        else main.create_parameter(v_name, shape, dtype, initializer=init, **kw)
    )
    g = main.var(g_name) if main.has_var(g_name) else main.create_parameter(g_name, g_shape, dtype, **kw)
    norm = _norm_ops(main, v, axes, v_name)
    scale = main.create_var(unique_name.generate(f"{name}.scale"), g_shape, dtype)
    main.append_op("elementwise_div", {"X": [g], "Y": [norm]}, {"Out": [scale]}, {"axis": -1})
    w = main.create_var(unique_name.generate(name), shape, dtype)
    main.append_op("elementwise_mul", {"X": [v], "Y": [scale]}, {"Out": [w]}, {"axis": -1})
    return w
