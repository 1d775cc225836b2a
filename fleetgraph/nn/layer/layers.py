"""`paddle.nn.Layer`: parameters, sublayers, buffers, hooks and state dicts, in both modes.

A Layer made in dynamic mode (Paddle 2.x's default) holds eager parameters and its forward runs
eagerly; after `paddle.enable_static()` its parameters live in the default programs and calling it
on static Variables builds the program, as Paddle's.
"""

from __future__ import annotations

import collections
import contextlib
import re

import numpy as np

from ...dygraph import mode
from ...dygraph.tensor import ParamBase, Tensor
from ...ir import FleetgraphError, unique_name
from ...ir.dtypes import convert_dtype
from ...ir.program import Parameter, Variable
from ...layers.helper import LayerHelper


def _snake(name: str) -> str:
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", s).lower()


class HookRemoveHelper:
    def __init__(self, hooks: dict, key: int) -> None:
        self._hooks, self._key = hooks, key

    def remove(self) -> None:
        self._hooks.pop(self._key, None)


class Layer:
    """Base of every layer: subclasses make parameters in __init__ and compute in forward."""

    def __init__(self, name_scope: str | None = None, dtype="float32") -> None:
        self.training = True
        self._full_name = unique_name.generate(name_scope or _snake(type(self).__name__))
        self._dtype = convert_dtype(dtype)
        self._parameters: collections.OrderedDict[str, Parameter] = collections.OrderedDict()
        self._sub_layers: collections.OrderedDict[str, Layer] = collections.OrderedDict()
        self._buffers: collections.OrderedDict[str, Variable] = collections.OrderedDict()
        self._non_persistable_buffer_names: set[str] = set()
        self._forward_pre_hooks: dict[int, object] = collections.OrderedDict()
        self._forward_post_hooks: dict[int, object] = collections.OrderedDict()
        self._hook_id = 0
        self._helper = LayerHelper(self._full_name, self._full_name)

    # -- building ------------------------------------------------------------------------------------
    def full_name(self) -> str:
        return self._full_name

    def _mode_guard(self):
        return mode.eager_guard() if mode.in_dynamic_mode() else contextlib.nullcontext()

    def create_parameter(self, shape, attr=None, dtype=None, is_bias=False, default_initializer=None):
        """A parameter named `<full_name>.w_<n>` (`.b_<n>` for a bias), eager in dynamic mode; of the
        default dtype (`set_default_dtype`) unless `dtype` says, as Paddle's (not the Layer's `dtype`:
        Paddle's 1.x layers pass theirs)."""
        with self._mode_guard():
            return self._helper.create_parameter(
                attr, shape, dtype, is_bias=is_bias, default_initializer=default_initializer
            )

    def create_variable(self, name=None, persistable=None, dtype=None):
        with self._mode_guard():
            var = self._helper.create_variable_for_type_inference(dtype or self._dtype)
        return var

    def add_parameter(self, name: str, parameter):
        if parameter is not None and not isinstance(parameter, Parameter):
            raise FleetgraphError(
                f"{type(self).__name__}.add_parameter {name!r}: expected a Parameter, got {type(parameter).__name__}"
            )
        self._parameters[name] = parameter
        return parameter

    def add_sublayer(self, name: str, sublayer: Layer) -> Layer:
        if not isinstance(sublayer, Layer):
            raise FleetgraphError(
                f"{type(self).__name__}.add_sublayer {name!r}: expected a Layer, got {type(sublayer).__name__}"
            )
        self._sub_layers[str(name)] = sublayer
        return sublayer

    def register_buffer(self, name: str, tensor, persistable: bool = True) -> None:
        self._buffers[name] = tensor
        if not persistable:
            self._non_persistable_buffer_names.add(name)

    def __setattr__(self, name: str, value) -> None:
        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter) and params is not None:
            self.__dict__.get("_sub_layers", {}).pop(name, None)
            params[name] = value
            return
        if isinstance(value, Layer) and self.__dict__.get("_sub_layers") is not None:
            self._sub_layers[name] = value
            return
        if params is not None and name in params:
            if value is not None:
                raise FleetgraphError(f"{type(self).__name__}.{name}: expected a Parameter, got {type(value).__name__}")
            params[name] = None
            return
        if isinstance(value, Tensor) and name in self.__dict__.get("_buffers", {}):
            self._buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def __getattr__(self, name: str):
        for store in ("_parameters", "_sub_layers", "_buffers"):
            d = self.__dict__.get(store)
            if d is not None and name in d:
                return d[name]
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __delattr__(self, name: str) -> None:
        for store in (self._parameters, self._sub_layers, self._buffers):
            if name in store:
                del store[name]
                return
        object.__delattr__(self, name)

    # -- walking -------------------------------------------------------------------------------------
    def named_sublayers(self, prefix: str = "", include_self: bool = False, layers_set=None):
        seen = set() if layers_set is None else layers_set
        if include_self and id(self) not in seen:
            seen.add(id(self))
            yield prefix, self
        for key, layer in self._sub_layers.items():
            if layer is None or id(layer) in seen:
                continue
            name = f"{prefix}.{key}" if prefix else key
            seen.add(id(layer))
            yield name, layer
            yield from layer.named_sublayers(name, False, seen)

    def sublayers(self, include_self: bool = False) -> list[Layer]:
        return [layer for _, layer in self.named_sublayers(include_self=include_self)]

    def named_children(self):
        yield from ((k, v) for k, v in self._sub_layers.items() if v is not None)

    def children(self):
        return [v for _, v in self.named_children()]

    def named_parameters(self, prefix: str = "", include_sublayers: bool = True):
        seen = set()
        layers = self.named_sublayers(prefix, include_self=True) if include_sublayers else [(prefix, self)]
        for layer_prefix, layer in layers:
            for key, p in layer._parameters.items():
                if p is None or id(p) in seen:
                    continue
                seen.add(id(p))
                yield (f"{layer_prefix}.{key}" if layer_prefix else key), p

    def parameters(self, include_sublayers: bool = True) -> list[Parameter]:
        return [p for _, p in self.named_parameters(include_sublayers=include_sublayers)]

    def named_buffers(self, prefix: str = "", include_sublayers: bool = True):
        layers = self.named_sublayers(prefix, include_self=True) if include_sublayers else [(prefix, self)]
        for layer_prefix, layer in layers:
            for key, b in layer._buffers.items():
                if b is not None:
                    yield (f"{layer_prefix}.{key}" if layer_prefix else key), b

    def buffers(self, include_sublayers: bool = True) -> list:
        return [b for _, b in self.named_buffers(include_sublayers=include_sublayers)]

    def apply(self, fn) -> Layer:
        for layer in self.children():
            layer.apply(fn)
        fn(self)
        return self

    # -- modes -----------------------------------------------------------------------------------------
    def train(self) -> Layer:
        for layer in self.sublayers(include_self=True):
            layer.training = True
        return self

    def eval(self) -> Layer:
        for layer in self.sublayers(include_self=True):
            layer.training = False
        return self

    # -- calling ---------------------------------------------------------------------------------------
    def forward(self, *inputs, **kwargs):
        raise NotImplementedError(f"{type(self).__name__}.forward is not defined")

    def __call__(self, *inputs, **kwargs):
        for hook in list(self._forward_pre_hooks.values()):
            result = hook(self, inputs)
            if result is not None:
                inputs = result if isinstance(result, tuple) else (result,)
        with self._mode_guard():
            outputs = self.forward(*inputs, **kwargs)
        for hook in list(self._forward_post_hooks.values()):
            result = hook(self, inputs, outputs)
            if result is not None:
                outputs = result
        return outputs

    def register_forward_pre_hook(self, hook) -> HookRemoveHelper:
        """`hook(layer, inputs)` before forward; what it returns (if not None) replaces the inputs."""
        self._hook_id += 1
        self._forward_pre_hooks[self._hook_id] = hook
        return HookRemoveHelper(self._forward_pre_hooks, self._hook_id)

    def register_forward_post_hook(self, hook) -> HookRemoveHelper:
        """`hook(layer, inputs, outputs)` after forward; what it returns (if not None) replaces the outputs."""
        self._hook_id += 1
        self._forward_post_hooks[self._hook_id] = hook
        return HookRemoveHelper(self._forward_post_hooks, self._hook_id)

    # -- gradients and state ------------------------------------------------------------------------------
    def clear_gradients(self) -> None:
        for p in self.parameters():
            if isinstance(p, Tensor):
                p.clear_gradient()

    def state_dict(self, destination=None, include_sublayers: bool = True, structured_name_prefix: str = ""):
        """Parameters and persistable buffers by structured name (`fc.weight`), as Paddle's."""
        out = collections.OrderedDict() if destination is None else destination
        for name, p in self.named_parameters(structured_name_prefix, include_sublayers):
            out[name] = p
        layers = self.named_sublayers(structured_name_prefix, include_self=True)
        for layer_prefix, layer in layers if include_sublayers else [(structured_name_prefix, self)]:
            for key, b in layer._buffers.items():
                if b is not None and key not in layer._non_persistable_buffer_names:
                    out[f"{layer_prefix}.{key}" if layer_prefix else key] = b
        return out

    def set_state_dict(self, state_dict, use_structured_name: bool = True):
        """Copy values in by structured name (or by parameter name); returns (missing, unexpected) keys."""
        own = self.state_dict()
        by_name = {t.name: k for k, t in own.items()}
        missing, unexpected = [], []
        matched = set()
        for key, value in state_dict.items():
            target_key = key if use_structured_name else by_name.get(key)
            if target_key not in own:
                unexpected.append(key)
                continue
            target = own[target_key]
            array = np.asarray(value.numpy() if isinstance(value, Tensor) else value)
            if not isinstance(target, Tensor):
                raise FleetgraphError(
                    f"set_state_dict {key!r}: the layer's parameters are static (enable_static); load them "
                    "into the scope with paddle.static.set_program_state"
                )
            if list(array.shape) != target.shape:
                raise FleetgraphError(f"set_state_dict {key!r}: expected shape {target.shape}, got {list(array.shape)}")
            target.set_value(array)
            matched.add(target_key)
        missing = [k for k in own if k not in matched]
        return missing, unexpected

    set_dict = load_dict = set_state_dict

    def to(self, device=None, dtype=None, blocking=None):
        return self

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = [f"({k}): " + repr(v).replace("\n", "\n  ") for k, v in self._sub_layers.items()]
        head = f"{type(self).__name__}({self.extra_repr()}"
        return head + ("\n  " + "\n  ".join(lines) + "\n)" if lines else ")")


def is_param(value) -> bool:
    return isinstance(value, (ParamBase, Parameter))
