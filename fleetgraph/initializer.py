"""`fluid.initializer`: Fluid-spelled initializers, each appending a parameter's init op to the startup program."""

from __future__ import annotations

import math

import numpy as np

from . import absent
from .dygraph.mode import in_dygraph_mode  # noqa: F401  (re-exported as Paddle's module does)
from .ir import unique_name  # noqa: F401
from .ir.program import Block, Variable
from .ops.tensor import VALUE_ATTRS


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


def calculate_gain(nonlinearity: str, param=None) -> float:
    """The gain an initializer's scale is multiplied by for a nonlinearity, as Paddle's
    `paddle.nn.initializer.calculate_gain` (leaky_relu's negative slope defaults to 0.01)."""
    gains = {
        "sigmoid": 1.0,
        "linear": 1.0,
        "conv1d": 1.0,
        "conv2d": 1.0,
        "conv3d": 1.0,
        "conv1d_transpose": 1.0,
        "conv2d_transpose": 1.0,
        "conv3d_transpose": 1.0,
        "tanh": 5.0 / 3,
        "relu": math.sqrt(2.0),
        "selu": 3.0 / 4,
    }
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else float(param)
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity not in gains:
        raise ValueError(
            f"calculate_gain: nonlinearity; expected one of {sorted([*gains, 'leaky_relu'])}, got {nonlinearity!r}"
        )
    return gains[nonlinearity]


class MSRA(Initializer):
    """He/Kaiming: uniform in +-gain * sqrt(3 / fan_in), or normal with std gain / sqrt(fan_in), the
    gain that of `nonlinearity` (relu's sqrt(2) by default: +-sqrt(6 / fan_in), std sqrt(2 / fan_in))."""

    def __init__(
        self, uniform: bool = True, fan_in=None, seed: int = 0, negative_slope: float = 0.0, nonlinearity="relu"
    ) -> None:
        self.uniform, self.fan_in, self.seed = uniform, fan_in, int(seed)
        self.gain = calculate_gain(nonlinearity, negative_slope)

    def append_init_op(self, var, block):
        f_in = self.fan_in or _fans(var.shape)[0]
        if self.uniform:
            limit = self.gain * math.sqrt(3.0 / f_in)
            return self._random_op(block, var, "uniform_random", min=-limit, max=limit)
        return self._random_op(block, var, "gaussian_random", mean=0.0, std=self.gain / math.sqrt(f_in))


class Bilinear(Initializer):
    """Weights of a conv2d_transpose [C_out, C_in, K, K] that upsample by bilinear interpolation, as
    Paddle's BilinearInitializer, including its row index (i / K) % K taken in true division."""

    def append_init_op(self, var, block):
        shape = list(var.shape)
        if len(shape) != 4 or shape[2] != shape[3]:
            raise ValueError(f"Bilinear: expected a [C_out, C_in, K, K] parameter, got shape {shape} for {var.name!r}")
        size = shape[3]
        f = math.ceil(size / 2.0)
        c = (2 * f - 1 - f % 2) / (2.0 * f)
        count = math.prod(shape)
        if count > 1024 * 1024:
            raise ValueError(f"Bilinear: {var.name!r} has {count} elements; expected at most 1024 * 1024")
        values = [(1 - abs(i % size / f - c)) * (1 - abs((i / size) % size / f - c)) for i in range(count)]
        return NumpyArrayInitializer(values, shape).append_init_op(var, block)


class NumpyArrayInitializer(Initializer):
    """A parameter set to a given array (its shape must be the parameter's), by one assign_value op."""

    def __init__(self, value, shape=None) -> None:
        self.value = np.asarray(value)
        self.shape = list(self.value.shape if shape is None else shape)

    def append_init_op(self, var, block):
        if math.prod(self.shape) != math.prod(var.shape):
            raise ValueError(
                f"NumpyArrayInitializer: {var.name!r} has shape {list(var.shape)}; got a value of shape {self.shape}"
            )
        return block.append_op(
            "assign_value",
            outputs={"Out": [var]},
            attrs={
                "shape": list(var.shape),
                "dtype": var.dtype,
                VALUE_ATTRS[var.dtype]: np.asarray(self.value, dtype=var.dtype).reshape(-1).tolist(),
            },
        )


# Paddle 2.x names that paddle.nn.initializer re-exports (same arguments in both namespaces).
def XavierUniform(fan_in=None, fan_out=None, name=None):
    return Xavier(True, fan_in, fan_out)


def XavierNormal(fan_in=None, fan_out=None, name=None):
    return Xavier(False, fan_in, fan_out)


def KaimingUniform(fan_in=None, negative_slope=0.0, nonlinearity="relu", name=None):
    return MSRA(True, fan_in, negative_slope=negative_slope, nonlinearity=nonlinearity)


def KaimingNormal(fan_in=None, negative_slope=0.0, nonlinearity="relu", name=None):
    return MSRA(False, fan_in, negative_slope=negative_slope, nonlinearity=nonlinearity)


# Fluid 1.x short names (`fluid.initializer.Normal(loc, scale, seed)`); paddle.nn.initializer has
# its own classes with the 2.x arguments (`Normal(mean, std, name)`).
Constant, Uniform, Normal = ConstantInitializer, UniformInitializer, NormalInitializer
TruncatedNormal, XavierInitializer, MSRAInitializer = TruncatedNormalInitializer, Xavier, MSRA
BilinearInitializer = Bilinear


# set_global_initializer's choices: they take the place of a layer's own default initializer (a
# ParamAttr's initializer still wins), as Paddle 2.0's
_global_initializers: dict[bool, Initializer | None] = {False: None, True: None}


def set_global_initializer(weight_init, bias_init=None) -> None:
    """Initialize every parameter made from now on without a ParamAttr initializer with weight_init
    (biases with bias_init); None sets the layers' own defaults back."""
    for name, init in (("weight_init", weight_init), ("bias_init", bias_init)):
        if init is not None and not isinstance(init, Initializer):
            raise TypeError(f"set_global_initializer: {name} expected an Initializer or None, got {init!r}")
    _global_initializers[False], _global_initializers[True] = weight_init, bias_init


def global_initializer(is_bias: bool) -> Initializer | None:
    return _global_initializers[bool(is_bias)]


__getattr__ = absent.getattr_for(__name__, "paddle.fluid.initializer")
