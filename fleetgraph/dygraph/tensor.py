"""The eager Tensor: a Variable that holds its value, so every layer function taking Variables takes it.

Its operators and math methods (`x + y`, `x.mean()`, `x.astype(...)`) are the tensor API's
functions; that layer attaches them (tensor_api.py), so this module needs no layer function."""

from __future__ import annotations

import itertools

import numpy as np

from ..executor.feed_fetch import FetchedValue
from ..ir import FleetgraphError, get_default_dtype
from ..ir.dtypes import convert_dtype
from ..ir.program import Parameter, Variable, VarType
from ..ops._xp import dtype_name
from ..ops.selected_rows import SelectedRows
from . import engine, mode, tape
from .device import place_of

_names = itertools.count()


def fresh_name(prefix: str = "eager_tmp") -> str:
    return f"{prefix}_{next(_names)}"


class Tensor(Variable):
    """A value with its gradient and the tape node that made it. `stop_gradient` is True for data
    (to_tensor, a DataLoader's batches) and False for parameters and what is computed from them."""

    # Variable's per-instance flags, as class defaults: an eager op makes many tensors
    block = None
    type = VarType.DENSE_TENSOR
    lod_level = 0
    persistable = False
    is_data = False
    need_check_feed = False
    _shape: tuple = ()  # a placeholder's declared shape, until it holds a value

    # per-tensor state that most tensors never change, as class defaults
    _name: str | None = None
    _dtype: str | None = None
    _node = None
    _grad = None
    _key = None  # the tape's name for it (engine.key)
    stop_gradient = True  # what an op function's output starts as (it makes Tensors without __init__)

    def __init__(self, value=None, name: str | None = None, stop_gradient: bool = True, dtype: str | None = None):
        self.value = value
        self.stop_gradient = stop_gradient
        if name is not None:
            self._name = name
        if dtype is not None:
            self._dtype = dtype

    @property
    def name(self) -> str:
        """Unique; made on first use (only tensors the tape records need one)."""
        name = self._name
        if name is None:
            name = self._name = fresh_name()
        return name

    @name.setter
    def name(self, value: str) -> None:
        self._name = value

    # -- Variable's view ---------------------------------------------------------------------------
    @property
    def shape(self) -> list[int]:
        return list(self.value.shape) if self.value is not None else list(self._shape)

    @property
    def dtype(self) -> str:
        if self.value is None:
            return self._dtype or "float32"
        return convert_dtype(dtype_name(self.value.dtype) if hasattr(self.value, "dtype") else self._dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    # -- values ---------------------------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """A copy of the value, as Paddle's (the optimizers update parameters in place, so a shared
        array would change under the caller); a one-element one also converts to a number:
        `"%f" % loss.numpy()` works as with a fetched loss."""
        value = self.value
        if isinstance(value, SelectedRows):
            return value.to_dense(np)
        array = np.array(value, copy=True)
        return array.view(FetchedValue) if array.size == 1 and array.ndim else array

    def __array__(self, dtype=None, copy=None):
        a = self.numpy()
        return a.astype(dtype) if dtype is not None else a

    def item(self):
        return self.numpy().item()

    def __float__(self) -> float:
        return float(self.numpy().reshape(()).item())

    def __int__(self) -> int:
        return int(self.numpy().reshape(()).item())

    def __index__(self) -> int:
        """A one-element integer tensor as an index (`range(n)`, `xs[i]`), as Paddle's Tensor."""
        value = self.numpy()
        if value.size != 1 or value.dtype.kind not in "iub":
            raise TypeError(
                f"only a one-element integer tensor is an index, got {value.dtype} of shape {list(value.shape)}"
            )
        return int(value.reshape(()).item())

    def __format__(self, spec: str) -> str:
        if spec and self.numpy().size == 1:
            return format(self.item(), spec)
        return format(str(self), spec)

    def __len__(self) -> int:
        return self.shape[0]

    def __iter__(self):
        """Rows along the first axis (without this, Python would index until an IndexError that a
        slice op past the end never raises)."""
        return (self[i] for i in range(len(self)))

    def __bool__(self) -> bool:
        return bool(self.numpy())

    def __repr__(self) -> str:
        return (
            f"Tensor(shape={self.shape}, dtype={self.dtype}, stop_gradient={self.stop_gradient},\n"
            f"       {np.array2string(self.numpy(), prefix='       ', **_PRINT_OPTIONS)})"
        )

    __str__ = __repr__

    def __hash__(self) -> int:
        return id(self)

    # -- gradients ------------------------------------------------------------------------------------
    @property
    def grad(self) -> Tensor | None:
        """The accumulated gradient as a Tensor (a sparse one made dense), or None before backward."""
        if self._grad is None:
            return None
        g = self._grad.to_dense(np) if isinstance(self._grad, SelectedRows) else self._grad
        return Tensor(g, self.name + "@GRAD")

    def gradient(self) -> np.ndarray | None:
        """Paddle 2.0's spelling: the gradient as a NumPy array."""
        g = self.grad
        return None if g is None else np.asarray(g.value)

    def backward(self, grad_tensor=None, retain_graph: bool = False) -> None:
        """Gradients of this Tensor into every leaf that needs one. Fluid 1.8 passes a BackwardStrategy
        first (`loss.backward(strategy)`): its sort_sum_gradient asks Paddle to add a gradient's parts in
        a fixed order, which this tape always does, so either setting gives the same sums here."""
        if hasattr(grad_tensor, "sort_sum_gradient"):
            grad_tensor = None
        tape.backward(self, grad_tensor, retain_graph)

    def clear_gradient(self, set_to_zero: bool = True) -> None:
        self._grad = None

    clear_grad = clear_gradient

    def detach(self) -> Tensor:
        return Tensor(self.value, stop_gradient=True)

    def set_value(self, value) -> None:
        """Replace the value in place (same shape and dtype), as Paddle's `Tensor.set_value`."""
        array = np.asarray(getattr(value, "value", value))
        if self.value is not None and tuple(array.shape) != tuple(self.value.shape):
            raise FleetgraphError(
                f"set_value {self.name!r}: expected shape {list(self.value.shape)}, got {list(array.shape)}"
            )
        array = array.astype(self.dtype, copy=True) if self.value is not None else array.copy()
        xp = mode.array_module()  # the value lives where eager kernels run
        self.value = array if xp is np else xp.asarray(array)


class ParamBase(Tensor, Parameter):
    """An eager parameter: a Tensor that the optimizers and Layer treat as a Parameter."""

    persistable = True

    def __init__(
        self,
        value,
        name: str,
        *,
        trainable: bool = True,
        regularizer=None,
        optimize_attr=None,
        need_clip: bool = True,
        initializer=None,
    ) -> None:
        Tensor.__init__(self, value, name, stop_gradient=not trainable)
        self.trainable = bool(trainable)
        self.regularizer = regularizer
        self.optimize_attr = dict(optimize_attr or {"learning_rate": 1.0})
        self.need_clip = bool(need_clip)
        self.initializer = initializer

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__


engine.Tensor = Tensor

_PRINT_OPTIONS: dict = {}  # how Tensors print: numpy.array2string's arguments (set_printoptions)


def set_printoptions(precision=None, threshold=None, edgeitems=None, sci_mode=None, linewidth=None) -> None:
    """How Tensors print, as Paddle 2.0's: digits after the point, the element count beyond which
    they are summarized, the items kept at each edge, scientific notation on or off, line width."""
    for name, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                        ("max_line_width", linewidth)):  # fmt: skip
        if value is not None:
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"set_printoptions: {name} expected an int, got {value!r}")
            _PRINT_OPTIONS[name] = value
    if sci_mode is not None:
        digits = _PRINT_OPTIONS.get("precision", 8)
        _PRINT_OPTIONS.pop("formatter", None)
        _PRINT_OPTIONS.pop("suppress_small", None)
        if sci_mode:
            _PRINT_OPTIONS["formatter"] = {"float_kind": lambda x: f"{x:.{digits}e}"}
        else:
            _PRINT_OPTIONS["suppress_small"] = True


def to_tensor(data, dtype=None, place=None, stop_gradient: bool = True) -> Tensor:
    """`paddle.to_tensor`: an eager Tensor holding a copy of `data` (Python floats take the default
    dtype, float32 unless `set_default_dtype` changed it; ints int64, as Paddle's)."""
    if isinstance(data, Tensor):
        data = data.numpy()
    array = np.array(data, copy=True)
    if dtype is not None:
        array = array.astype(convert_dtype(dtype))
    elif array.dtype.kind == "f" and not isinstance(data, np.ndarray):
        array = array.astype(get_default_dtype())
    elif array.dtype.kind == "i" and not isinstance(data, np.ndarray):
        array = array.astype(np.int64)
    xp = mode.array_module() if place is None else _place_of(place).array_module()
    return Tensor(array if xp is np else xp.asarray(array), stop_gradient=stop_gradient)


def _place_of(place):
    """to_tensor's `place`: a Place, or Paddle's name of one ('cpu')."""
    if isinstance(place, str):
        return place_of(place)
    if not hasattr(place, "array_module"):
        raise TypeError(f"to_tensor: place; expected a Place such as CPUPlace() or 'cpu', got {place!r}")
    return place


def is_tensor(value) -> bool:
    return isinstance(value, Tensor)
