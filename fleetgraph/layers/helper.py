"""LayerHelper: what every layer function shares (unique names, parameters with their init ops in the
startup program, temporary variables, bias and activation).

A helper is told the layer function's inputs when it is made, so it knows the mode before it makes
any output: its temporaries are eager Tensors for Tensor inputs and the block's Variables for static
ones (with no inputs, the mode's default), and its ops go to `bind`, which runs or appends them."""

from __future__ import annotations

from ..dygraph import dispatch, mode, params
from ..dygraph.tensor import Tensor
from ..initializer import Constant, Xavier, global_initializer
from ..ir import unique_name
from ..ir.dtypes import convert_dtype
from ..ir.errors import FleetgraphError
from ..ir.framework import default_main_program, default_startup_program, get_default_dtype
from ..ir.program import Parameter, Variable, VarType
from ..param_attr import ParamAttr, WeightNormParamAttr
from .weight_norm import weight_normalized


class LayerHelper:
    def __init__(self, layer_type: str, name: str | None = None, *, inputs=None) -> None:
        """`inputs`: the layer function's input variables (one, or a list), which say its mode."""
        self.layer_type = layer_type
        self.name = name or unique_name.generate(layer_type)
        self._eager = dispatch.takes_tensors(layer_type, [inputs])

    @property
    def eager(self) -> bool:
        """Whether this layer runs eagerly: its inputs' kind, else the mode's default for input-less calls."""
        return mode.eager_by_default() if self._eager is None else self._eager

    @property
    def main_program(self):
        return default_main_program()

    @property
    def startup_program(self):
        return default_startup_program()

    @property
    def block(self):
        return self.main_program.current_block()

    def create_parameter(
        self, attr, shape, dtype=None, is_bias=False, default_initializer=None, type=VarType.DENSE_TENSOR
    ) -> Parameter:
        """A parameter in the main program and its twin plus init op in the startup program; of the
        default dtype (`set_default_dtype`) unless `dtype` says, as Paddle's LayerHelperBase."""
        attr = ParamAttr._to_attr(attr)
        if attr is False:
            raise FleetgraphError(f"{self.layer_type}: cannot create a parameter from attr False")
        shape = [int(d) for d in shape]
        if any(d <= 0 for d in shape):
            raise FleetgraphError(f"{self.name}: parameter shape {shape} must be positive in every dimension")
        suffix = "b" if is_bias else "w"
        name = attr.name or unique_name.generate(f"{self.name}.{suffix}")
        init = attr.initializer or global_initializer(is_bias) or default_initializer
        init = init or (Constant(0.0) if is_bias else Xavier())
        dtype = convert_dtype(dtype or get_default_dtype())
        if isinstance(attr, WeightNormParamAttr):
            if mode.eager_by_default():
                raise NotImplementedError(
                    f"{self.layer_type}: WeightNormParamAttr builds static programs only, as Paddle 1.8's"
                )
            kw = dict(trainable=attr.trainable, regularizer=attr.regularizer, need_clip=attr.need_clip)
            return weight_normalized(
                self, attr, name, shape, dtype, init, dict(kw, optimize_attr={"learning_rate": attr.learning_rate})
            )
        if mode.eager_by_default():
            return params.create_parameter(
                name,
                shape,
                dtype,
                init,
                trainable=attr.trainable,
                regularizer=attr.regularizer,
                optimize_attr={"learning_rate": attr.learning_rate},
                need_clip=attr.need_clip,
            )
        main = self.main_program.global_block()
        if main.has_var(name):
            return main.var(name)  # a shared parameter: reuse it
        kw = dict(
            trainable=attr.trainable,
            regularizer=attr.regularizer,
            optimize_attr={"learning_rate": attr.learning_rate},
            need_clip=attr.need_clip,
            type=type,
        )
        param = main.create_parameter(name, shape, dtype, initializer=init, **kw)
        startup = self.startup_program.global_block()
        if not startup.has_var(name):
            twin = startup.create_parameter(name, shape, dtype, initializer=init, **kw)
            init(twin, startup)
        return param

    def create_variable_for_type_inference(self, dtype=None, stop_gradient=False) -> Variable:
        dtype = dtype or get_default_dtype()
        if self.eager:
            return Tensor(None, stop_gradient=stop_gradient, dtype=convert_dtype(dtype))
        name = unique_name.generate_with_ignorable_key(f"{self.name}.tmp")
        return self.block.create_var(name, dtype=dtype, stop_gradient=stop_gradient)

    create_tmp_variable = create_variable_for_type_inference

    def create_global_variable(self, shape, dtype="float32", persistable=False, name=None) -> Variable:
        name = name or unique_name.generate(f"{self.name}.global")
        if self.eager:
            t = Tensor(None, name, dtype=convert_dtype(dtype))
            t._shape, t.persistable = tuple(shape), persistable
            return t
        return self.main_program.global_block().create_var(name, shape, dtype, persistable=persistable)

    def set_variable_initializer(self, var: Variable, initializer) -> None:
        if isinstance(var, Tensor):
            params.initialize(var, initializer)
            return
        startup = self.startup_program.global_block()
        twin = startup.create_var(var.name, var.shape, var.dtype, persistable=True)
        initializer(twin, startup)

    def append_op(self, type, inputs=None, outputs=None, attrs=None) -> None:
        """The op into `outputs` (this helper's variables): run at once on Tensors, appended to the
        program on static Variables (dispatch.bind decides)."""
        dispatch.bind(type, inputs or {}, attrs, outputs or {})

    def append_bias_op(self, x: Variable, bias_attr, dim_start: int = 1, dim_end: int | None = None) -> Variable:
        """x + b, with b of shape x.shape[dim_start:dim_end] (nothing when bias_attr is False)."""
        attr = ParamAttr._to_attr(bias_attr)
        if attr is False:
            return x
        b = self.create_parameter(attr, x.shape[dim_start:dim_end], x.dtype, is_bias=True)
        out = self.create_variable_for_type_inference(x.dtype)
        self.append_op("elementwise_add", {"X": [x], "Y": [b]}, {"Out": [out]}, {"axis": dim_start})
        return out

    def append_activation(self, x: Variable, act: str | None) -> Variable:
        if act is None:
            return x
        out = self.create_variable_for_type_inference(x.dtype)
        self.append_op(act, {"X": [x]}, {"Out": [out]})
        return out
