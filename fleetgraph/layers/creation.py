"""Creation layer functions, Paddle 1.8's fluid.layers spelling and signatures: ranges (arange,
linspace), identity, diagonal and triangular matrices, grids, full tensors, named tensors, and the
random ones (randn, randint, randperm, uniform_random, gaussian_random and their batch_size_like
forms, sampling_id, random_crop) over the ops of ops/creation.py and ops/tensor.py.

Shapes given as tensors (Paddle's ShapeTensor / ShapeTensorList inputs) are refused with
NotImplementedError: the random ops here take their shape as an attr."""

from __future__ import annotations

import numpy as np

from ..dygraph.dispatch import bind
from ..dygraph.tensor import Tensor
from ..initializer import Constant
from ..ir import unique_name
from ..ir.dtypes import convert_dtype
from ..ir.framework import device_guard
from ..ir.program import Variable
from .helper import LayerHelper
from .tensor import assign, fill_constant
from .tensor_shape import stack

__all__ = [
    "arange",
    "linspace",
    "eye",
    "full",
    "diag",
    "diag_embed",
    "tril",
    "triu",
    "meshgrid",
    "create_tensor",
    "randn",
    "randint",
    "randperm",
    "uniform_random",
    "gaussian_random",
    "uniform_random_batch_size_like",
    "gaussian_random_batch_size_like",
    "sampling_id",
    "random_crop",
]

_TENSORS = (Variable, Tensor)


def _check_dtype(layer: str, dtype, allowed) -> str:
    dtype = convert_dtype(dtype)
    if dtype not in allowed:
        raise TypeError(f"{layer}: dtype {dtype}; expected one of {', '.join(allowed)}")
    return dtype


def _static_shape(layer: str, shape) -> list[int]:
    """A shape of ints (Paddle's attr); a tensor shape or tensor dims are not supported here."""
    if isinstance(shape, _TENSORS) or (
        isinstance(shape, (list, tuple)) and any(isinstance(d, _TENSORS) for d in shape)
    ):
        raise NotImplementedError(f"{layer}: shape given as a tensor (ShapeTensor) is not supported; pass ints")
    if not isinstance(shape, (list, tuple)) or not shape:
        raise TypeError(f"{layer}: shape {shape!r}; expected a non-empty list or tuple of ints")
    return [int(d) for d in shape]


def _positive_shape(layer: str, shape) -> list[int]:
    """A shape of positive ints, as Paddle's uniform_random and randint assert."""
    shape = _static_shape(layer, shape)
    if any(d <= 0 for d in shape):
        raise ValueError(f"{layer}: shape {shape}; expected positive dims")
    return shape


def _scalar_tensor(value, dtype):
    return value if isinstance(value, _TENSORS) else fill_constant([1], dtype, value)


def arange(start, end, step=1, dtype=None, name=None):
    """[start, end) by step (the range op), of dtype (float32 when None); each bound a number or a
    one-element tensor. The result does not take gradients."""
    dtype = _check_dtype("arange", "float32" if dtype is None else dtype, ("float32", "float64", "int32", "int64"))
    bounds = [_scalar_tensor(v, dtype) for v in (start, end, step)]
    out = bind("range", {"Start": [bounds[0]], "End": [bounds[1]], "Step": [bounds[2]]}, dtype=dtype, name=name)
    out.stop_gradient = True
    return out


def linspace(start, stop, num, dtype):
    """num values evenly spaced from start to stop, both included; start and stop numbers (made
    of `dtype`) or float tensors (their dtype wins), num an int or an int32 tensor."""
    for what, v in (("start", start), ("stop", stop), ("num", num)):
        if not isinstance(v, (*_TENSORS, float, int)):
            raise TypeError(f"linspace: {what} {v!r}; expected a Variable, float or int")
    dtype = convert_dtype(dtype)
    start, stop = _scalar_tensor(start, dtype), _scalar_tensor(stop, dtype)
    num = _scalar_tensor(num, "int32")
    for what, v, allowed in (("start", start, ("float32", "float64")), ("num", num, ("int32",))):
        if convert_dtype(v.dtype) not in allowed:
            raise TypeError(f"linspace: {what} of dtype {convert_dtype(v.dtype)}; expected {' or '.join(allowed)}")
    return bind("linspace", {"Start": [start], "Stop": [stop], "Num": [num]}, dtype=convert_dtype(start.dtype))


def eye(num_rows, num_columns=None, batch_shape=None, dtype="float32"):
    """A [num_rows, num_columns] identity matrix (square when num_columns is None), stacked into
    batch_shape's leading dims when given."""
    for what, v in (("num_rows", num_rows), ("num_columns", num_columns)):
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v < 0):
            raise TypeError(f"eye: {what} {v!r}; expected a non-negative int")
    dtype = convert_dtype(dtype)
    cols = num_rows if num_columns is None else num_columns
    attrs = {"num_rows": num_rows, "num_columns": cols, "dtype": dtype}
    out = bind("eye", {}, attrs, dtype=dtype)
    out.stop_gradient = True
    if batch_shape is not None:
        if not isinstance(batch_shape, list):
            raise TypeError(f"eye: batch_shape {batch_shape!r}; expected a list of positive ints")
        for size in reversed(batch_shape):
            if size <= 0:
                raise TypeError(f"eye: batch_shape {batch_shape}; expected positive ints")
            out = stack([out] * size, axis=0)
    return out


def full(shape, fill_value, out=None, dtype=None, device=None, stop_gradient=True, name=None):
    """A tensor of shape filled with fill_value, of dtype (float32 when None): fill_constant, with
    its op placed on `device` ('cpu', 'gpu' or None) as Paddle's device_guard."""
    dtype = _check_dtype("full", "float32" if dtype is None else dtype, ("bool", "float16", "float32", "float64",
                                                                         "int32", "int64"))  # fmt: skip
    if isinstance(fill_value, _TENSORS):
        raise NotImplementedError("full: fill_value given as a tensor (ValueTensor) is not supported; pass a number")
    shape = _static_shape("full", shape)
    with device_guard(device):
        result = fill_constant(shape, dtype, fill_value, out=out, name=name)
    result.stop_gradient = stop_gradient
    return result


def diag(diagonal):
    """The square matrix with `diagonal` (a 1-D tensor or NumPy array) on its diagonal."""
    if not isinstance(diagonal, (*_TENSORS, np.ndarray)):
        raise TypeError(f"diag: diagonal of type {type(diagonal).__name__}; expected a Variable or numpy.ndarray")
    _check_dtype("diag", diagonal.dtype, ("float32", "float64", "int32", "int64"))
    if isinstance(diagonal, np.ndarray):
        diagonal = assign(diagonal)
    out = bind("diag", {"Diagonal": [diagonal]})
    out.stop_gradient = True
    return out


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Each vector of input's last axis on the `offset` diagonal of a square plane spanning the
    output's dims dim1 and dim2 (counted in the output, one rank more than input)."""
    if isinstance(input, np.ndarray):
        input = assign(input)
    _check_dtype("diag_embed", input.dtype, ("int32", "int64", "float16", "float32", "float64"))
    rank = len(input.shape)
    if rank < 1 or abs(dim1) > rank or abs(dim2) > rank:
        raise ValueError(f"diag_embed: dim1 {dim1}, dim2 {dim2}; expected dims in [{-rank - 1}, {rank}]")
    if dim1 % (rank + 1) == dim2 % (rank + 1):
        raise ValueError(f"diag_embed: dim1 {dim1} and dim2 {dim2} are one dim; expected two")
    out = bind("diag_embed", {"Input": [input]}, {"offset": int(offset), "dim1": int(dim1), "dim2": int(dim2)})
    out.stop_gradient = True
    return out


def _triangle(layer: str, input, diagonal, name):
    _check_dtype(layer, input.dtype, ("float32", "float64", "int32", "int64"))
    if len(input.shape) < 2:
        raise ValueError(f"{layer}: input of shape {list(input.shape)}; expected at least 2 dims")
    if not isinstance(diagonal, int) or isinstance(diagonal, bool):
        raise TypeError(f"{layer}: diagonal {diagonal!r}; expected a Python int")
    attrs = {"diagonal": diagonal, "lower": layer == "tril"}
    return bind("tril_triu", {"X": [input]}, attrs, name=name)


def tril(input, diagonal=0, name=None):
    """input with the elements above its `diagonal` (of the last two dims) zeroed."""
    return _triangle("tril", input, diagonal, name)


def triu(input, diagonal=0, name=None):
    """input with the elements below its `diagonal` (of the last two dims) zeroed."""
    return _triangle("triu", input, diagonal, name)


def meshgrid(input, name=None):
    """The list of N 1-D tensors as N grids of shape [len_0, ..., len_N-1], grid i varying along
    dim i (NumPy's indexing='ij')."""
    if not isinstance(input, list):
        raise TypeError(f"meshgrid: input of type {type(input).__name__}; expected a list of 1-D tensors")
    for x in input:
        _check_dtype("meshgrid", x.dtype, ("float16", "float32", "float64", "int32", "int64"))
    helper = LayerHelper("meshgrid", name, inputs=input)
    outs = [helper.create_variable_for_type_inference(x.dtype) for x in input]
    helper.append_op("meshgrid", {"X": list(input)}, {"Out": outs})
    return outs


def create_tensor(dtype, name=None, persistable=False):
    """An empty variable of dtype, named `name` (else a unique name), for a later op to write."""
    dtype = _check_dtype("create_tensor", dtype, ("bool", "float16", "float32", "float64", "int8", "int32", "int64"))
    helper = LayerHelper("create_tensor", name)
    if helper.eager:
        tensor = Tensor(None, helper.name, dtype=dtype)
        tensor.persistable = persistable
        return tensor
    return helper.block.create_var(helper.name, dtype=dtype, persistable=persistable)


def _random(layer, op_type, attrs, dtype, out, device, stop_gradient, name=None, inputs=None):
    """The random op into a new variable or `out` (of dtype), its op placed on `device`."""
    if out is not None and convert_dtype(out.dtype) != dtype:
        raise TypeError(f"{layer}: out of dtype {convert_dtype(out.dtype)}; expected {dtype}, the dtype asked for")
    with device_guard(device):
        if out is None:
            out = bind(op_type, inputs or {}, attrs, dtype=dtype, name=name)
        else:
            bind(op_type, inputs or {}, attrs, {"Out": [out]})
    out.stop_gradient = stop_gradient
    return out


def randn(shape, out=None, dtype=None, device=None, stop_gradient=True, name=None):
    """Standard normal draws of shape (gaussian_random). As Paddle 1.8's, the op's seed is drawn
    from NumPy's global generator (np.random.randint(0, 100)), so np.random.seed fixes it."""
    shape = _static_shape("randn", shape)
    dtype = _check_dtype("randn", "float32" if dtype is None else dtype, ("float32", "float64"))
    attrs = {"shape": shape, "mean": 0.0, "std": 1.0, "seed": int(np.random.randint(0, 100)), "dtype": dtype}
    return _random("randn", "gaussian_random", attrs, dtype, out, device, stop_gradient, name)


def randint(low, high=None, shape=None, out=None, dtype=None, device=None, stop_gradient=False, seed=0, name=None):
    """Integers uniform on [low, high) (on [0, low) when high is None) of shape ([1] when None)."""
    dtype = _check_dtype("randint", "int64" if dtype is None else dtype, ("int32", "int64"))
    shape = _positive_shape("randint", [1] if shape is None else shape)
    if high is None:
        low, high = 0, low
    if low >= high:
        raise ValueError(f"randint: low {low}, high {high}; expected low < high")
    attrs = {"shape": shape, "low": int(low), "high": int(high), "seed": int(seed), "dtype": dtype}
    return _random("randint", "randint", attrs, dtype, out, device, stop_gradient, name)


def randperm(n, out=None, dtype="int64", device=None, stop_gradient=True, seed=0):
    """A random permutation of 0 .. n-1."""
    if n < 1:
        raise ValueError(f"randperm: n {n}; expected n > 0")
    dtype = _check_dtype("randperm", dtype, ("int64", "int32"))
    if device not in (None, "cpu", "gpu"):
        raise ValueError(f"randperm: device {device!r}; expected None, 'cpu' or 'gpu'")
    if not isinstance(stop_gradient, bool):
        raise TypeError(f"randperm: stop_gradient {stop_gradient!r}; expected a bool")
    attrs = {"n": int(n), "dtype": dtype, "seed": int(seed)}
    return _random("randperm", "randperm", attrs, dtype, out, device, stop_gradient)


def uniform_random(shape, dtype="float32", min=-1.0, max=1.0, seed=0):
    """Draws uniform on [min, max) of shape; seed 0 draws from the global stream (paddle.seed)."""
    dtype = _check_dtype("uniform_random", dtype, ("float32", "float64"))
    attrs = {"shape": _positive_shape("uniform_random", shape), "min": float(min), "max": float(max)}
    attrs.update(seed=int(seed), dtype=dtype)
    return bind("uniform_random", {}, attrs, dtype=dtype)


def gaussian_random(shape, mean=0.0, std=1.0, seed=0, dtype="float32"):
    """Normal draws of mean and std, of shape; seed 0 draws from the global stream (paddle.seed)."""
    dtype = convert_dtype(dtype)
    attrs = {"shape": _static_shape("gaussian_random", shape), "mean": float(mean), "std": float(std)}
    attrs.update(seed=int(seed), dtype=dtype)
    return bind("gaussian_random", {}, attrs, dtype=dtype)


def _batch_size_like(layer, input, shape, dtype, input_dim_idx, output_dim_idx, seed, **attrs):
    if not isinstance(input, _TENSORS):
        raise TypeError(f"{layer}: input of type {type(input).__name__}; expected a Variable")
    if not isinstance(shape, (list, tuple)):
        raise TypeError(f"{layer}: shape {shape!r}; expected a list or tuple of ints")
    attrs.update(shape=[int(d) for d in shape], input_dim_idx=int(input_dim_idx), output_dim_idx=int(output_dim_idx))
    attrs.update(seed=int(seed), dtype=dtype)
    return bind(layer, {"Input": [input]}, attrs, dtype=dtype)


def uniform_random_batch_size_like(
    input, shape, dtype="float32", input_dim_idx=0, output_dim_idx=0, min=-1.0, max=1.0, seed=0
):
    """uniform_random of shape, whose dim output_dim_idx is input's dim input_dim_idx (its batch size)."""
    _check_dtype("uniform_random_batch_size_like", input.dtype, ("float32", "float64"))
    dtype = _check_dtype("uniform_random_batch_size_like", dtype, ("float32", "float64"))
    layer = "uniform_random_batch_size_like"
    return _batch_size_like(layer, input, shape, dtype, input_dim_idx, output_dim_idx, seed, min=min, max=max)


def gaussian_random_batch_size_like(
    input, shape, input_dim_idx=0, output_dim_idx=0, mean=0.0, std=1.0, seed=0, dtype="float32"
):
    """gaussian_random of shape, whose dim output_dim_idx is input's dim input_dim_idx (its batch size)."""
    dtype = _check_dtype("gaussian_random_batch_size_like", dtype, ("float16", "float32"))
    layer = "gaussian_random_batch_size_like"
    return _batch_size_like(layer, input, shape, dtype, input_dim_idx, output_dim_idx, seed, mean=mean, std=std)


def sampling_id(x, min=0.0, max=1.0, seed=0, dtype="float32"):
    """For each row of x [batch, width] (probabilities), an id drawn with those probabilities: the
    first column where a uniform draw on [min, max) falls below the row's running sum (the last
    column if none). As Paddle 1.8's op, the ids are int64 whatever `dtype` says: Paddle declares
    the output of dtype and its kernel writes int64 ids into it."""
    convert_dtype(dtype)
    attrs = {"min": float(min), "max": float(max), "seed": int(seed)}
    return bind("sampling_id", {"X": [x]}, attrs, dtype="int64")


def random_crop(x, shape, seed=None):
    """Each instance of x (its dims before the last len(shape)) cropped to shape at a random place.
    `seed`: an int (None: np.random.randint(-65536, 65536), as Paddle's) starting the stream kept in
    a persistable int64 seed variable, which the op advances on every run (SeedOut), or such a
    variable itself. An int seed is written into the new seed variable by the startup program
    (Paddle's op reads its startup_seed attr while the variable is empty: the same first value)."""
    _check_dtype("random_crop", x.dtype, ("float32", "float64", "uint8", "int16", "int32"))
    if isinstance(shape, _TENSORS):
        raise NotImplementedError("random_crop: shape given as a tensor is not supported; pass a list of ints")
    if not isinstance(shape, list):
        raise TypeError(f"random_crop: shape {shape!r}; expected a list of ints")
    if seed is None:
        seed = int(np.random.randint(-65536, 65536))
    attrs = {"shape": [int(d) for d in shape]}
    helper = LayerHelper("random_crop", inputs=x)
    if isinstance(seed, int):
        attrs["startup_seed"] = seed
        seed_var = helper.create_global_variable([1], "int64", persistable=True,
                                                 name=unique_name.generate("random_crop_seed"))  # fmt: skip
        helper.set_variable_initializer(seed_var, Constant(seed))
    elif isinstance(seed, _TENSORS):
        seed_var = seed
    else:
        raise ValueError(f"random_crop: seed {seed!r}; expected a Variable or an int")
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("random_crop", {"X": [x], "Seed": [seed_var]}, {"Out": [out], "SeedOut": [seed_var]}, attrs)
    return out
