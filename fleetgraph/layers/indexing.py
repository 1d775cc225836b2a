"""Layer functions over the ops of ops/indexing.py and ops/slicing.py, in Paddle 1.8.5's
fluid.layers signatures: slice, strided_slice, crop, crop_tensor, pad, pad2d, pad_constant_like,
roll, flip, reverse, index_select, index_sample, nonzero, unique, unique_with_counts, scatter_nd,
scatter_nd_add, multiplex, shard_index, hash, lod_reset, lod_append and similarity_focus."""

from __future__ import annotations

from ..dygraph.dispatch import bind
from ..ir.dtypes import convert_dtype
from ..ir.program import Variable
from .beam_search import _check
from .helper import LayerHelper
from .tensor import fill_constant, reshape, zeros

__all__ = [
    "slice",
    "strided_slice",
    "crop",
    "crop_tensor",
    "pad",
    "pad2d",
    "pad_constant_like",
    "roll",
    "flip",
    "reverse",
    "index_select",
    "index_sample",
    "nonzero",
    "unique",
    "unique_with_counts",
    "scatter_nd",
    "scatter_nd_add",
    "multiplex",
    "shard_index",
    "hash",
    "lod_reset",
    "lod_append",
    "similarity_focus",
]

_NUMBERS = ("float32", "float64", "int32", "int64")
_INDEX_TYPES = {"int32": 2, "int64": 3}  # Paddle's VarType codes, the unique ops' dtype attr


def _ints(values, where: str, name: str) -> list[int]:
    if not isinstance(values, (list, tuple)) or not all(isinstance(v, int) for v in values):
        raise TypeError(f"{where}: {name} must be a list or tuple of ints, got {values!r}")
    return [int(v) for v in values]


def _tensor_list(values) -> list:
    """A list mixing ints and variables as one-element int32 tensors (Paddle's get_new_list_tensor)."""
    return [v if isinstance(v, Variable) else fill_constant([1], "int32", v, force_cpu=True) for v in values]


def _attr_or_tensors(values, inputs: dict, attrs: dict, attr: str, slot: str, list_slot: str, unknown: int) -> None:
    """How Paddle passes starts, shapes, offsets: a variable in `slot`, a list holding variables in
    `list_slot` (the attr keeping `unknown` for each variable), else the attr."""
    if isinstance(values, Variable):
        inputs[slot] = [values]
    elif any(isinstance(v, Variable) for v in values):
        inputs[list_slot] = _tensor_list(values)
        attrs[attr] = [unknown if isinstance(v, Variable) else int(v) for v in values]
    else:
        attrs[attr] = [int(v) for v in values]


def slice(input, axes, starts, ends):  # noqa: A001 (Paddle's name)
    """input[starts[i]:ends[i]] along each of axes, every axis kept (the slice op; negative bounds
    count from the end and clamp, as Python's). The op here takes its bounds as attrs only."""
    for name, value in (("starts", starts), ("ends", ends)):
        if isinstance(value, Variable) or any(isinstance(v, Variable) for v in value):
            raise NotImplementedError(f"slice: {name} as a Variable (the slice op here takes int bounds only)")
    attrs = {"axes": _ints(axes, "slice", "axes"), "starts": _ints(starts, "slice", "starts")}
    attrs["ends"] = _ints(ends, "slice", "ends")
    return bind("slice", {"Input": [input]}, {**attrs, "decrease_axis": []})


def strided_slice(input, axes, starts, ends, strides):
    """input[starts[i]:ends[i]:strides[i]] along each of axes (strided_slice); starts, ends and
    strides may be lists of ints, lists holding int32 variables, or int32 variables."""
    _check(input, "input", "strided_slice", _NUMBERS)
    axes = _ints(axes, "strided_slice", "axes")
    inputs, attrs = {"Input": [input]}, {"axes": axes}
    flags = [1] * len(axes)
    for name, values in (("starts", starts), ("ends", ends), ("strides", strides)):
        slot = name.capitalize() + "Tensor"
        _attr_or_tensors(values, inputs, attrs, name, slot, slot + "List", -1)
        if not isinstance(values, Variable):
            flags = [-1 if isinstance(v, Variable) else f for v, f in zip(values, flags)]
    attrs["infer_flags"] = flags
    return bind("strided_slice", inputs, attrs)


def crop(x, shape=None, offsets=None, name=None):
    """x's window of `shape` (a list, or a variable whose shape is taken) at `offsets` (a list or an
    int32 variable; zeros by default)."""
    _check(x, "x", "crop", ("float32", "float64"))
    if not isinstance(shape, (list, tuple, Variable)):
        raise TypeError(f"crop: shape must be a list, tuple or Variable, got {type(shape).__name__}")
    inputs, attrs = {"X": [x]}, {}
    if isinstance(shape, Variable):
        inputs["Y"] = [shape]
    else:
        attrs["shape"] = [int(d) for d in shape]
    offsets = [0] * len(x.shape) if offsets is None else offsets
    if isinstance(offsets, Variable):
        inputs["Offsets"] = [offsets]
    else:
        attrs["offsets"] = [int(v) for v in offsets]
    return bind("crop", inputs, attrs, name=name)


def crop_tensor(x, shape=None, offsets=None, name=None):
    """x's window of `shape` at `offsets`; either may be a list of ints (-1 in shape: to the axis'
    end), a list holding int32 variables, or an int32 variable."""
    _check(x, "x", "crop_tensor", _NUMBERS)
    if not isinstance(shape, (list, tuple, Variable)):
        raise TypeError(f"crop_tensor: shape must be a list, tuple or Variable, got {type(shape).__name__}")
    for d in [] if isinstance(shape, Variable) else shape:
        if not isinstance(d, Variable) and (not isinstance(d, int) or d == 0 or d < -1):
            raise ValueError(f"crop_tensor: shape {list(shape)}; expected positive ints or -1")
    offsets = [0] * len(x.shape) if offsets is None else offsets
    for v in [] if isinstance(offsets, Variable) else offsets:
        if not isinstance(v, Variable) and (not isinstance(v, int) or v < 0):
            raise ValueError(f"crop_tensor: offsets {list(offsets)}; expected ints >= 0")
    inputs, attrs = {"X": [x]}, {}
    _attr_or_tensors(offsets, inputs, attrs, "offsets", "Offsets", "OffsetsTensor", -1)
    if isinstance(offsets, Variable):
        attrs["offsets"] = [-1] * len(x.shape)
    _attr_or_tensors(shape, inputs, attrs, "shape", "Shape", "ShapeTensor", 0)
    return bind("crop_tensor", inputs, attrs, name=name)


def pad(x, paddings, pad_value=0.0, name=None):
    """x with paddings[2i] values of pad_value before axis i and paddings[2i+1] after."""
    _check(x, "x", "pad", ("float16", *_NUMBERS))
    attrs = {"paddings": _ints(paddings, "pad", "paddings"), "pad_value": float(pad_value)}
    return bind("pad", {"X": [x]}, attrs, name=name)


def pad2d(input, paddings=[0, 0, 0, 0], mode="constant", pad_value=0.0, data_format="NCHW", name=None):  # noqa: B006
    """An image padded [top, bottom, left, right] (a list or an int32 variable) with pad_value, or
    by reflecting about the border ('reflect') or repeating it ('edge')."""
    _check(input, "input", "pad2d", ("float16", *_NUMBERS))
    if mode not in ("reflect", "edge", "constant"):
        raise ValueError(f"pad2d: mode {mode!r}; expected 'constant', 'reflect' or 'edge'")
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError(f"pad2d: data_format {data_format!r}; expected 'NCHW' or 'NHWC'")
    inputs = {"X": [input]}
    attrs = {"mode": mode, "pad_value": float(pad_value), "data_format": data_format}
    if isinstance(paddings, Variable):
        inputs["Paddings"], attrs["paddings"] = [paddings], []
    else:
        attrs["paddings"] = _ints(paddings, "pad2d", "paddings")
    return bind("pad2d", inputs, attrs, name=name)


def pad_constant_like(x, y, pad_value=0.0, name=None):
    """y padded at the end of each axis with pad_value up to x's shape."""
    if not isinstance(x, Variable):
        raise TypeError(f"pad_constant_like: x must be a Variable, got {type(x).__name__}")
    _check(y, "y", "pad_constant_like", _NUMBERS)
    return bind("pad_constant_like", {"X": [x], "Y": [y]}, {"pad_value": float(pad_value)}, dtype=y.dtype, name=name)


def roll(input, shifts, dims=None):
    """input's entries moved shifts[i] places along dims[i], wrapping around; without dims, along
    the flattened input, its shape restored."""
    shifts = [shifts] if isinstance(shifts, int) else _ints(shifts, "roll", "shifts")
    if dims is None:
        flat = reshape(input, [-1, 1])
        return reshape(bind("roll", {"X": [flat]}, {"shifts": shifts, "dims": [0]}), list(input.shape))
    dims = [dims] if isinstance(dims, int) else _ints(dims, "roll", "dims")
    return bind("roll", {"X": [input]}, {"shifts": shifts, "dims": dims})


def flip(input, dims, name=None):
    """input reversed along each axis in dims (the flip op; Out keeps input's LoD)."""
    _check(input, "X", "flip", ("float16", *_NUMBERS, "bool"))
    dims = _ints(dims, "flip", "dims")
    if not dims:
        raise ValueError("flip: dims is empty; expected at least one axis")
    return bind("flip", {"X": [input]}, {"dims": dims}, name=name)


def reverse(x, axis):
    """x reversed along axis (an int or a list; the reverse op, which drops x's LoD as Paddle 1.8's)."""
    _check(x, "x", "reverse", (*_NUMBERS, "uint8"))
    axis = [axis] if isinstance(axis, int) else _ints(axis, "reverse", "axis")
    return bind("reverse", {"X": [x]}, {"axis": axis})


def index_select(input, index, dim=0):
    """input's slices at the int32/int64 `index` along dim."""
    _check(input, "x", "index_select", _NUMBERS)
    _check(index, "index", "index_select", ("int32", "int64"))
    return bind("index_select", {"X": [input], "Index": [index]}, {"dim": int(dim)})


def index_sample(x, index):
    """out[i, j] = x[i, index[i, j]] for a 2-D x and index."""
    _check(x, "x", "fluid.layers.index_sample", _NUMBERS)
    _check(index, "index", "fluid.layers.index_sample", ("int32", "int64"))
    return bind("index_sample", {"X": [x], "Index": [index]})


def nonzero(input, as_tuple=False):
    """The int64 coordinates of input's nonzero entries, one row each (where_index); as_tuple: one
    [N, 1] column per axis instead."""
    out = bind("where_index", {"Condition": [input]}, dtype="int64")
    rank = len(input.shape)
    if not as_tuple:
        return out
    if rank == 1:
        return (out,)
    return tuple(slice(out, axes=[1], starts=[i], ends=[i + 1]) for i in range(rank))  # column i of [N, rank]


def _unique(op_type: str, x, dtype: str, outputs: tuple[str, ...]):
    _check(x, "x", op_type, _NUMBERS)
    name = convert_dtype(dtype)
    if name not in _INDEX_TYPES:
        raise TypeError(f"{op_type}: dtype {dtype!r}; expected 'int32' or 'int64'")
    helper = LayerHelper(op_type, inputs=x)
    outs = {"Out": helper.create_variable_for_type_inference(x.dtype)}
    for slot in outputs:
        outs[slot] = helper.create_variable_for_type_inference(name, stop_gradient=True)
    helper.append_op(op_type, {"X": [x]}, {k: [v] for k, v in outs.items()}, {"dtype": _INDEX_TYPES[name]})
    return tuple(outs.values())


def unique(x, dtype="int32"):
    """(the distinct values of the 1-D x in the order they first appear, each entry's index among them)."""
    return _unique("unique", x, dtype, ("Index",))


def unique_with_counts(x, dtype="int32"):
    """unique's two outputs and how often each distinct value appears."""
    if len(x.shape) != 1:
        raise ValueError(f"unique_with_counts: x {list(x.shape)}; expected a 1-D tensor")
    return _unique("unique_with_counts", x, dtype, ("Index", "Count"))


def scatter_nd_add(ref, index, updates, name=None):
    """ref with each updates slice added at the position its index row names (repeats add up)."""
    if ref.dtype != updates.dtype:
        raise ValueError(f"scatter_nd_add: ref is {ref.dtype} and updates {updates.dtype}; expected one dtype")
    return bind("scatter_nd_add", {"X": [ref], "Index": [index], "Updates": [updates]}, name=name)


def scatter_nd(index, updates, shape, name=None):
    """scatter_nd_add into zeros of `shape`."""
    return scatter_nd_add(zeros(shape, updates.dtype), index, updates, name)


def multiplex(inputs, index):
    """Row i of inputs[index[i]] for each row i (index: int32/int64 of shape [N, 1])."""
    if not isinstance(inputs, list):
        raise TypeError(f"multiplex: inputs must be a list, got {type(inputs).__name__}")
    if len(inputs) < 2:
        raise ValueError(f"multiplex: {len(inputs)} input(s); expected at least 2")
    for i, x in enumerate(inputs):
        _check(x, f"input[{i}]", "multiplex", _NUMBERS)
    _check(index, "index", "multiplex", ("int32", "int64"))
    return bind("multiplex", {"X": list(inputs), "Ids": [index]}, dtype=inputs[0].dtype)


def shard_index(input, index_num, nshards, shard_id, ignore_value=-1):
    """Ids of shard `shard_id` (of nshards, each (index_num + nshards - 1) // nshards wide) as their
    offset in it; the other ids become ignore_value."""
    _check(input, "input", "shard_index", ("int64",))
    if not 0 <= shard_id < nshards:
        raise ValueError(f"shard_index: shard_id {shard_id}; expected a value in [0, {nshards})")
    attrs = {"index_num": int(index_num), "nshards": int(nshards), "shard_id": int(shard_id)}
    out = bind("shard_index", {"X": [input]}, {**attrs, "ignore_value": int(ignore_value)})
    out.stop_gradient = True
    return out


def hash(input, hash_size, num_hash=1, name=None):  # noqa: A001 (Paddle's name)
    """Each row of int ids hashed num_hash times (XXH64, seeds 0..num_hash-1) modulo hash_size:
    shape [..., num_hash, 1], input's LoD kept."""
    _check(input, "input", "hash", ("int32", "int64"))
    for what, value in (("hash_size", hash_size), ("num_hash", num_hash)):
        if not isinstance(value, int):
            raise TypeError(f"hash: {what} must be an int, got {type(value).__name__}")
    out = bind("hash", {"X": [input]}, {"num_hash": num_hash, "mod_by": hash_size}, name=name)
    out.stop_gradient = True
    return out


def lod_reset(x, y=None, target_lod=None):
    """x's rows under y's LoD (y with a LoD), or one level of offsets from y's int32 values or from
    target_lod."""
    _check(x, "x", "lod_reset", _NUMBERS)
    if y is not None:
        if not isinstance(y, Variable):
            raise TypeError(f"lod_reset: y must be a Variable, got {type(y).__name__}")
        return bind("lod_reset", {"X": [x], "Y": [y]})
    if target_lod is None:
        raise ValueError("lod_reset: y and target_lod are both None; expected one of them")
    return bind("lod_reset", {"X": [x]}, {"target_lod": _ints(target_lod, "lod_reset", "target_lod")})


def lod_append(x, level):
    """x with one more LoD level, the offsets `level` (a list, or an int32 variable's values)."""
    if x is None:
        raise ValueError("lod_append: x is None; expected a Variable")
    _check(x, "x", "lod_append", _NUMBERS)
    if isinstance(level, Variable):
        return bind("lod_reset", {"X": [x], "Y": [level]}, {"append": True})
    if not isinstance(level, (list, tuple)):
        raise ValueError(f"lod_append: level must be a list, tuple or Variable, got {type(level).__name__}")
    return bind("lod_reset", {"X": [x]}, {"append": True, "target_lod": _ints(level, "lod_append", "level")})


def similarity_focus(input, axis, indexes, name=None):
    """A 0/1 mask of input's shape: for each index along axis (1, 2 or 3), the greedily chosen
    largest entries of that plane, one per row and column, set along the whole axis."""
    _check(input, "input", "similarity_focus", ("float32", "float64"))
    if not isinstance(axis, int) or axis not in (1, 2, 3):
        raise ValueError(f"similarity_focus: axis {axis!r}; expected 1, 2 or 3")
    if not isinstance(indexes, list) or not indexes:
        raise ValueError(f"similarity_focus: indexes {indexes!r}; expected a non-empty list")
    return bind("similarity_focus", {"X": [input]}, {"axis": axis, "indexes": [int(i) for i in indexes]}, name=name)
