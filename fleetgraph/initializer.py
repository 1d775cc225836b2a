"""`fluid.initializer`: Fluid-spelled initializers, each appending a parameter's init op to the startup program."""

from __future__ import annotations

import math

from .ir.program import Block, Variable


def _fans(shape) -> tuple[int, int]:
    """Paddle's fan-in/fan-out: [in, out] for a matrix, [out_c, in_c, k...] for a conv filter."""
    if len(shape) == 0:
        return 1, 1
    if len(shape) == 1:
        return shape[0], shape[0]
    if len(shape) == 2:
        return shape[0], shape[1]
    receptive = math.prod(shape[2:])
    return shape[1] * receptive, shape[0] * receptive


class Initializer:
    seed = 0

    def __call__(self, var: Variable, block: Block | None = None):
        return self.append_init_op(var, block or var.block)

    def append_init_op(self, var: Variable, block: Block):
        raise NotImplementedError

    def _seed(self, block: Block) -> int:
        return self.seed or block.program.random_seed

    def _random_op(self, block, var, op_type, **attrs):
        attrs.update(shape=list(var.shape), dtype=var.dtype, seed=self._seed(block))
        return block.append_op(op_type, outputs={"Out": [var]}, attrs=attrs)


def require_values(where: str, **values) -> None:
    """Paddle asserts these are given; a None here is a clear error, not a TypeError later."""
    for name, value in values.items():
        if value is None:
            raise ValueError(f"{where}: {name} expected a number, got None")


class ConstantInitializer(Initializer):
    """Fluid's spelling: `ConstantInitializer(value=0.0, force_cpu=False)`."""

    def __init__(self, value: float = 0.0, force_cpu: bool = False) -> None:
        require_values(type(self).__name__, value=value)
        self.value = float(value)

    def append_init_op(self, var, block):
        return block.append_op(
            "fill_constant",
            outputs={"Out": [var]},
            attrs={"shape": list(var.shape), "value": self.value, "dtype": var.dtype},
        )


class UniformInitializer(Initializer):
    """Fluid's spelling: `UniformInitializer(low=-1.0, high=1.0, seed=0, diag_num=0, diag_step=0,
    diag_val=1.0)`; the diagonal options are not supported."""

    def __init__(self, low=-1.0, high=1.0, seed=0, diag_num=0, diag_step=0, diag_val=1.0) -> None:
        where = type(self).__name__
        require_values(where, low=low, high=high, seed=seed)
        if high < low:
            raise ValueError(f"{where}: high expected >= low, got low={low}, high={high}")
        if diag_num or diag_step:
            raise ValueError(
                f"{where}: diag_num and diag_step are not supported; expected 0, got {diag_num}, {diag_step}"
            )
        self.low, self.high, self.seed = float(low), float(high), int(seed)

    def append_init_op(self, var, block):
        return self._random_op(block, var, "uniform_random", min=self.low, max=self.high)


class NormalInitializer(Initializer):
    """Fluid's spelling: `NormalInitializer(loc=0.0, scale=1.0, seed=0)`."""

    op_type = "gaussian_random"

    def __init__(self, loc=0.0, scale=1.0, seed=0) -> None:
        require_values(type(self).__name__, loc=loc, scale=scale, seed=seed)
        self.loc, self.scale, self.seed = float(loc), float(scale), int(seed)

    def append_init_op(self, var, block):
        return self._random_op(block, var, self.op_type, mean=self.loc, std=self.scale)


class TruncatedNormalInitializer(NormalInitializer):
    """Fluid's spelling: `TruncatedNormalInitializer(loc=0.0, scale=1.0, seed=0)`; values beyond two
    standard deviations are drawn again."""

    op_type = "truncated_gaussian_random"


class Xavier(Initializer):
    """Glorot: uniform in +-sqrt(6 / (fan_in + fan_out)), or normal with std sqrt(2 / (fan_in + fan_out))."""

    def __init__(self, uniform: bool = True, fan_in=None, fan_out=None, seed: int = 0) -> None:
        self.uniform, self.fan_in, self.fan_out, self.seed = uniform, fan_in, fan_out, int(seed)

    def append_init_op(self, var, block):
        f_in, f_out = _fans(var.shape)
        f_in, f_out = self.fan_in or f_in, self.fan_out or f_out
        if self.uniform:
            limit = math.sqrt(6.0 / (f_in + f_out))
            return self._random_op(block, var, "uniform_random", min=-limit, max=limit)
        return self._random_op(block, var, "gaussian_random", mean=0.0, std=math.sqrt(2.0 / (f_in + f_out)))


class MSRA(Initializer):
    """He/Kaiming: uniform in +-sqrt(6 / fan_in), or normal with std sqrt(2 / fan_in)."""

    def __init__(self, uniform: bool = True, fan_in=None, seed: int = 0, negative_slope: float = 0.0) -> None:
        self.uniform, self.fan_in, self.seed = uniform, fan_in, int(seed)

    def append_init_op(self, var, block):
        f_in = self.fan_in or _fans(var.shape)[0]
        if self.uniform:
            limit = math.sqrt(6.0 / f_in)
            return self._random_op(block, var, "uniform_random", min=-limit, max=limit)
        return self._random_op(block, var, "gaussian_random", mean=0.0, std=math.sqrt(2.0 / f_in))


# Paddle 2.x names that paddle.nn.initializer re-exports (same arguments in both namespaces).
def XavierUniform(fan_in=None, fan_out=None, name=None):
    return Xavier(True, fan_in, fan_out)


def XavierNormal(fan_in=None, fan_out=None, name=None):
    return Xavier(False, fan_in, fan_out)


def KaimingUniform(fan_in=None, negative_slope=0.0, nonlinearity="relu", name=None):
    return MSRA(True, fan_in)


def KaimingNormal(fan_in=None, negative_slope=0.0, nonlinearity="relu", name=None):
    return MSRA(False, fan_in)


# Fluid 1.x short names (`fluid.initializer.Normal(loc, scale, seed)`); paddle.nn.initializer has
# its own classes with the 2.x arguments (`Normal(mean, std, name)`).
Constant, Uniform, Normal = ConstantInitializer, UniformInitializer, NormalInitializer
TruncatedNormal, XavierInitializer, MSRAInitializer = TruncatedNormalInitializer, Xavier, MSRA
