"""Initializers: each appends one init op for a parameter to the startup program."""

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


class Constant(Initializer):
    def __init__(self, value: float = 0.0, force_cpu: bool = False) -> None:
        self.value = float(value)

    def append_init_op(self, var, block):
        return block.append_op(
            "fill_constant",
            outputs={"Out": [var]},
            attrs={"shape": list(var.shape), "value": self.value, "dtype": var.dtype},
        )


class Uniform(Initializer):
    def __init__(self, low: float = -1.0, high: float = 1.0, seed: int = 0, name=None) -> None:
        self.low, self.high, self.seed = float(low), float(high), int(seed)

    def append_init_op(self, var, block):
        return self._random_op(block, var, "uniform_random", min=self.low, max=self.high)


class Normal(Initializer):
    def __init__(self, loc: float = 0.0, scale: float = 1.0, seed: int = 0, name=None) -> None:
        self.loc, self.scale, self.seed = float(loc), float(scale), int(seed)

    def append_init_op(self, var, block):
        return self._random_op(block, var, "gaussian_random", mean=self.loc, std=self.scale)


class TruncatedNormal(Normal):
    def append_init_op(self, var, block):
        return self._random_op(block, var, "truncated_gaussian_random", mean=self.loc, std=self.scale)


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


# Paddle 2.x names (paddle.nn.initializer) and Fluid 1.x long names (fluid.initializer).
def XavierUniform(fan_in=None, fan_out=None, name=None):
    return Xavier(True, fan_in, fan_out)


def XavierNormal(fan_in=None, fan_out=None, name=None):
    return Xavier(False, fan_in, fan_out)


def KaimingUniform(fan_in=None, negative_slope=0.0, nonlinearity="relu", name=None):
    return MSRA(True, fan_in)


def KaimingNormal(fan_in=None, negative_slope=0.0, nonlinearity="relu", name=None):
    return MSRA(False, fan_in)


ConstantInitializer, UniformInitializer, NormalInitializer = Constant, Uniform, Normal
TruncatedNormalInitializer, XavierInitializer, MSRAInitializer = TruncatedNormal, Xavier, MSRA
