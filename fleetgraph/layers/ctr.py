"""Layer functions of click-through-rate models and of SelectedRows (cvm, filter_by_instag,
get_tensor_from_selected_rows, merge_selected_rows) and py_func, a Python function as an op."""

from __future__ import annotations

import inspect

import numpy as np

from ..ir.program import Variable, VarType
from ..ops import py_func as _registry
from ..ops.lod_tensor import LoDTensor
from .helper import LayerHelper


def continuous_value_model(input, cvm, use_cvm=True):
    """The cvm op: with use_cvm, the show and click columns leading each row log-scaled
    (log(show + 1), log(click + 1) - log(show + 1)); without, dropped."""
    helper = LayerHelper("cvm", inputs=[input, cvm])
    if input.dtype not in ("float16", "float32", "float64"):
        raise TypeError(f"cvm: input '{input.name}' is {input.dtype}; expected float16, float32 or float64")
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op("cvm", {"X": [input], "CVM": [cvm]}, {"Y": [out]}, {"use_cvm": bool(use_cvm)})
    return out


def filter_by_instag(ins, ins_tag, filter_tag, is_lod, out_val_if_empty=0):
    """The instances (rows, or sequences when `is_lod`) of `ins` one of whose tags (`ins_tag`, a
    sequence per instance) is in `filter_tag`; returns [out, loss_weight]: the kept rows, and 1 per
    kept instance ([1, 1] of 0 and one row of out_val_if_empty when none is kept)."""
    helper = LayerHelper("filter_by_instag", inputs=[ins, ins_tag, filter_tag])
    out = helper.create_variable_for_type_inference(ins.dtype)
    loss_weight = helper.create_variable_for_type_inference("float32", stop_gradient=True)
    index_map = helper.create_variable_for_type_inference(ins_tag.dtype, stop_gradient=True)
    helper.append_op(
        "filter_by_instag",
        {"Ins": [ins], "Ins_tag": [ins_tag], "Filter_tag": [filter_tag]},
        {"Out": [out], "LossWeight": [loss_weight], "IndexMap": [index_map]},
        {"is_lod": bool(is_lod), "out_val_if_empty": int(out_val_if_empty)},
    )
    return [out, loss_weight]


def get_tensor_from_selected_rows(x, name=None):
    """The rows of a SelectedRows variable as a dense tensor (its value rows, not scattered)."""
    if not isinstance(x, Variable):
        raise TypeError(f"get_tensor_from_selected_rows: x expected a Variable, got {type(x).__name__}")
    if x.type != VarType.SELECTED_ROWS:
        raise TypeError("The type of 'x' in get_tensor_from_selected_rows must be SELECTED_ROWS.")
    helper = LayerHelper("get_tensor_from_selected_rows", name, inputs=x)
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("get_tensor_from_selected_rows", {"X": [x]}, {"Out": [out]})
    return out


def merge_selected_rows(x, name=None):
    """A SelectedRows with each repeated row id's rows summed into one."""
    helper = LayerHelper("merge_selected_rows", name, inputs=x)
    out = helper.create_variable_for_type_inference(x.dtype)
    helper.append_op("merge_selected_rows", {"X": [x]}, {"Out": [out]})
    return out


class _PyFunc:
    """A registered function as Paddle's PyFuncRegistry calls it: its named parameters take the first
    inputs, anything else positionally; its return (a value or a tuple) becomes one value per output."""

    def __init__(self, func) -> None:
        if func is None or not callable(func):
            raise TypeError("func must be a Python function")
        self._func = func
        spec = inspect.getfullargspec(func)
        self._named = spec.args if spec.args or spec.varargs or spec.varkw else None
        self.id = _registry.register_callable(self)

    def __call__(self, *args):
        if self._named is None:
            ret = self._func()
        else:
            n = len(self._named)
            ret = self._func(*args[n:], **dict(zip(self._named, args[:n])))
        ret = ret if isinstance(ret, (list, tuple)) else (ret,)
        return tuple(v if v is None or isinstance(v, LoDTensor) else np.asarray(v) for v in ret)


def _var_list(value, what: str) -> list:
    if value is None:
        return []
    if isinstance(value, Variable):
        return [value]
    if isinstance(value, (list, tuple)):
        return list(value)
    raise TypeError(
        f"py_func: {what} expected a Variable, a list or tuple of them, or None, got {type(value).__name__}"
    )


def py_func(func, x, out, backward_func=None, skip_vars_in_backward_input=None):
    """A py_func op that calls `func` on `x` (each a LoDTensor) and writes its results into `out`,
    variables the caller created with their shapes and dtypes; with `backward_func`, the gradient
    op calls it on x, out (less `skip_vars_in_backward_input`) and out's gradients, and it returns
    x's gradients (None for one not needed). Returns `out`."""
    xs, outs = _var_list(x, "x"), _var_list(out, "out")
    forward = _PyFunc(func).id
    backward = _PyFunc(backward_func).id if backward_func is not None else -1
    for v in outs:
        if len(v.shape) == 0:
            raise ValueError("Output shapes of py_func op should be provided by users manually")
    skip = set()
    if backward_func is not None and skip_vars_in_backward_input is not None:
        known = {v.name for v in xs + outs}
        for v in _var_list(skip_vars_in_backward_input, "skip_vars_in_backward_input"):
            if v.name not in known:
                raise ValueError(f"Variable {v.name} is not found in forward inputs and outputs")
            skip.add(v.name)
    helper = LayerHelper("py_func", inputs=xs or None)
    helper.append_op(
        "py_func",
        {"X": xs},
        {"Out": outs},
        {"forward_callable_id": forward, "backward_callable_id": backward, "backward_skip_vars": sorted(skip)},
    )
    return out


py_func.registered_func = lambda idx: _registry.registered_callable(idx)._func  # Paddle's debug helpers
py_func.registered_func_num = _registry.registered_count

__all__ = [
    "continuous_value_model",
    "filter_by_instag",
    "get_tensor_from_selected_rows",
    "merge_selected_rows",
    "py_func",
]
