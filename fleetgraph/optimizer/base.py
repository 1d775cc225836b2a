"""The Optimizer base class: minimize = backward, clipping, regularization and one optimize op per
parameter, appended to the programs (static mode) or run at once on the gradients (dynamic mode)."""

from __future__ import annotations

import numbers

import numpy as np

from ..dygraph.dispatch import EagerProgram
from ..dygraph.mode import eager_guard, no_grad
from ..dygraph.tensor import Tensor
from ..grad_clip import ClipGradBase, append_gradient_clip_ops
from ..initializer import Constant
from ..ir import FleetgraphError, FleetgraphTypeError, unique_name
from ..ir.framework import default_main_program, default_startup_program, get_default_dtype
from ..ir.program import Parameter, Program, Variable, VarType
from ..ops.selected_rows import SelectedRows
from ..regularizer import L2Decay, WeightDecayRegularizer
from ..transpiler.backward import append_backward
from . import master_weights
from .lr import LRScheduler


class Optimizer:
    """Base class. Subclasses name their op type and state (accumulators) and build the op's slots
    (optimizer.py declares them, one row each); they take their own hyperparameters and these common
    ones: parameters (Fluid: parameter_list), weight_decay (Fluid: regularization), grad_clip and name."""

    op_type = ""

    def __init__(
        self,
        learning_rate=0.001,
        parameters=None,
        weight_decay=None,
        grad_clip=None,
        name=None,
        regularization=None,
        parameter_list=None,
    ) -> None:
        if isinstance(learning_rate, bool) or not isinstance(learning_rate, (numbers.Real, Variable, LRScheduler)):
            raise FleetgraphTypeError(
                f"{type(self).__name__}: learning_rate expected a float, a schedule's Variable or an "
                f"LRScheduler, got {type(learning_rate).__name__} {learning_rate!r}"
            )
        if grad_clip is not None and not isinstance(grad_clip, ClipGradBase):
            raise FleetgraphTypeError(
                f"{type(self).__name__}: grad_clip expected ClipGradByValue, ClipGradByNorm or ClipGradByGlobalNorm "
                f"(fluid.clip.GradientClipBy*), got {type(grad_clip).__name__}"
            )
        self._grad_clip = grad_clip
        is_number = isinstance(learning_rate, numbers.Real)
        self._learning_rate = float(learning_rate) if is_number else learning_rate
        self._parameter_list = _parameters(
            type(self).__name__, parameters if parameters is not None else parameter_list
        )
        decay = weight_decay if weight_decay is not None else regularization
        self.regularization = L2Decay(decay) if isinstance(decay, numbers.Real) else decay
        if self.regularization is not None and not isinstance(self.regularization, WeightDecayRegularizer):
            raise FleetgraphTypeError(
                f"{type(self).__name__}: weight_decay expected a float, L2Decay or L1Decay, got {decay!r}"
            )
        self._lr_vars: dict[int, Variable] = {}
        self._accumulators: dict[tuple[str, str], Variable] = {}
        self.helper_name = name or unique_name.generate(type(self).__name__.lower())

    # -- public API ------------------------------------------------------------------------------
    def get_lr(self) -> float:
        """The rate now: the float given, or the scheduler's current one (a schedule Variable's value
        lives in the scope: fetch it)."""
        if isinstance(self._learning_rate, LRScheduler):
            return self._learning_rate()
        if isinstance(self._learning_rate, Variable):
            raise FleetgraphError(
                f"{type(self).__name__}.get_lr: the learning rate is the variable {self._learning_rate.name!r}, "
                "computed by the program; fetch it"
            )
        return self._learning_rate

    def minimize(
        self,
        loss: Variable,
        startup_program: Program | None = None,
        parameters=None,
        no_grad_set=None,
        parameter_list=None,
    ):
        """Append backward, regularization and optimize ops; returns (optimize_ops, params_grads).
        On an eager Tensor (whose backward() has run) it updates the parameters now: step()."""
        if isinstance(loss, Tensor):
            return [], self.step()
        if not isinstance(loss, Variable):
            raise FleetgraphTypeError(
                f"{type(self).__name__}.minimize: loss expected a Variable, got {type(loss).__name__}"
            )
        parameters = _parameters(f"{type(self).__name__}.minimize", parameters or parameter_list)
        params_grads = self.backward(loss, startup_program, parameters, no_grad_set)
        optimize_ops = self.apply_optimize(loss, startup_program, params_grads)
        return optimize_ops, params_grads

    def backward(self, loss, startup_program=None, parameter_list=None, no_grad_set=None, callbacks=None):
        params = parameter_list if parameter_list is not None else self._parameter_list
        return append_backward(loss, params, no_grad_set, callbacks)

    def apply_optimize(self, loss, startup_program, params_grads):
        program = loss.block.program
        startup = startup_program or default_startup_program()
        return self._apply_gradients(program, startup, params_grads)

    def apply_gradients(self, params_grads):
        return self._apply_gradients(default_main_program(), default_startup_program(), params_grads)

    # -- dynamic mode: the same ops, run at once on the parameters' gradients ----------------------
    def step(self):
        """Update every parameter that has a gradient (after loss.backward()); returns the
        (parameter, gradient) pairs. The ops are the ones minimize appends in static mode, run
        eagerly; the optimizer's state lives in its own eager program, one Tensor per accumulator."""
        if self._parameter_list is None:
            raise FleetgraphError(
                f"{type(self).__name__}.step: no parameters; in dynamic mode pass parameters=model.parameters()"
            )
        params_grads = []
        for p in self._parameter_list:
            if not isinstance(p, Tensor):
                raise FleetgraphTypeError(
                    f"{type(self).__name__}.step: parameter {getattr(p, 'name', p)!r} is static; expected the "
                    "eager parameters of a Layer made in dynamic mode (call minimize(loss) in static mode)"
                )
            if getattr(p, "trainable", True) and p._grad is not None:
                params_grads.append((p, _grad_tensor(p)))
        program = self._eager_program()
        scheduler = self._learning_rate if isinstance(self._learning_rate, LRScheduler) else None
        if scheduler is not None and id(program) in self._lr_vars:  # as the executor does before a run
            lr = self._lr_vars[id(program)]
            lr.value = np.array([float(scheduler())], dtype=lr.dtype)
        with no_grad(), eager_guard():
            if getattr(self, "_multi_precision", False):  # multi_precision=True, or decorate at O2: masters
                updates, back = master_weights.with_masters(self, params_grads)
                self._apply_gradients(program, program, updates)
                master_weights.write_back(back)
            else:
                self._apply_gradients(program, program, params_grads)
        return params_grads

    def state_dict(self) -> dict:
        """Paddle's: each eager accumulator Tensor by its name (`linear_0.w_0_moment1_0`), the
        scheduler's state under 'LR_Scheduler' and master weights under 'master_weights'."""
        state = {var.name: var for var in self._accumulators.values() if isinstance(var, Tensor)}
        if getattr(self, "_master_weights", None):  # float32 masters of bfloat16 parameters, by name
            state["master_weights"] = dict(self._master_weights)
        if isinstance(self._learning_rate, LRScheduler):
            state["LR_Scheduler"] = self._learning_rate.state_dict()
        return state

    def set_state_dict(self, state_dict: dict) -> None:
        """Load what state_dict() gave: accumulators by name, now or (not yet made before the first
        step, as after a restart) when step() makes them; the scheduler's state."""
        state = dict(state_dict)
        scheduler = state.pop("LR_Scheduler", None)
        self._pending_masters = state.pop("master_weights", None) or {}
        for name, master in getattr(self, "_master_weights", {}).items():
            if name in self._pending_masters:
                master.set_value(np.asarray(getattr(self._pending_masters[name], "value", self._pending_masters[name])))
        if scheduler is not None and isinstance(self._learning_rate, LRScheduler):
            self._learning_rate.set_state_dict(scheduler)
        self._pending_state = state
        for var in self._accumulators.values():
            self._load_pending(var)

    set_dict = set_state_dict

    def _load_pending(self, var) -> None:
        """Give an eager accumulator its value from the state set, if one was set: an accumulator the
        state does not name is an error, as Paddle's (a model built again in the same process names
        its parameters anew; build it under unique_name.guard() as the saved one was)."""
        pending = getattr(self, "_pending_state", None)
        if pending is None or not isinstance(var, Tensor):
            return
        if var.name not in pending:
            raise FleetgraphError(f"Optimizer set error, {var.name} should in state dict")
        value = pending[var.name]
        var.set_value(value.numpy() if isinstance(value, Tensor) else value)

    def clear_grad(self, set_to_zero: bool = True) -> None:
        for p in self._parameter_list or []:
            if isinstance(p, Tensor):
                p.clear_gradient()

    clear_gradients = clear_grad

    def _eager_program(self) -> EagerProgram:
        if getattr(self, "_eager", None) is None:
            if isinstance(self._learning_rate, Variable):
                raise FleetgraphError(
                    f"{type(self).__name__}.step: the learning rate is the static variable "
                    f"{self._learning_rate.name!r}; in dynamic mode pass a float or a paddle.optimizer.lr scheduler"
                )
            self._eager = EagerProgram(default_startup_program().random_seed)
        return self._eager

    # -- building ------------------------------------------------------------------------------
    def _apply_gradients(self, program: Program, startup: Program, params_grads):
        """Every op it appends (clipping, regularization, learning-rate scaling, the updates and what
        follows them), in order."""
        block = update_block(program)
        start = len(block.ops)
        params_grads = sorted(params_grads, key=lambda pg: pg[0].name)  # Paddle's order
        low = [p.name for p, _ in params_grads if p.dtype == "bfloat16"]
        if low and getattr(self, "_multi_precision", False):  # step() passes the masters instead
            raise NotImplementedError(
                f"{type(self).__name__}: multi_precision=True keeps float32 master weights of bfloat16 parameters "
                f"in dynamic mode only; this static program's {low} would be updated in bfloat16; expected "
                "multi_precision=False or float32 parameters"
            )
        # clipping first, then regularization, as Paddle's; set_gradient_clip's where no grad_clip
        if self._grad_clip is not None:
            params_grads = self._grad_clip(params_grads)
        else:
            params_grads = append_gradient_clip_ops(params_grads)
        for param, grad in params_grads:
            with program._optimized_guard([param, grad]):
                regularizer = param.regularizer or self.regularization
                if regularizer is not None:
                    grad = regularizer.append_regularization_ops(block, param, grad)
                lr = self._param_lr(program, startup, param)
                block.append_op(self.op_type, *self._op_slots(program, startup, param, grad, lr))
        for param, grad in params_grads:
            with program._optimized_guard([param, grad]):
                self._finish_update(program, startup, param)
        return block.ops[start:]

    def _finish_update(self, program: Program, startup: Program, param: Parameter) -> None:
        """Ops after every parameter's update (Adamax advances its beta1 power here)."""

    def _op_slots(self, program, startup, param, grad, lr) -> tuple[dict, dict, dict]:
        """(inputs, outputs, attrs) of this optimizer's op for one parameter."""
        raise NotImplementedError

    def _global_lr(self, program: Program, startup: Program) -> Variable:
        """A schedule's variable as given; else `learning_rate_0`, a persistable [1] of the default
        dtype (as Paddle 2.0's) set by the startup program (and, for an LRScheduler, by the executor
        before each run)."""
        if isinstance(self._learning_rate, Variable):
            return self._learning_rate
        key = id(program)
        if key not in self._lr_vars:
            scheduler = self._learning_rate if isinstance(self._learning_rate, LRScheduler) else None
            name = unique_name.generate("learning_rate")
            dtype = get_default_dtype()
            var = program.global_block().create_var(name, [1], dtype, persistable=True)
            twin = startup.global_block().create_var(name, [1], dtype, persistable=True)
            Constant(float(scheduler()) if scheduler else self._learning_rate)(twin, startup.global_block())
            if scheduler is not None:
                scheduler._var_name = name
                program.lr_scheduler = scheduler
            self._lr_vars[key] = var
        return self._lr_vars[key]

    def _param_lr(self, program, startup, param: Parameter) -> Variable:
        lr = self._global_lr(program, startup)
        scale = param.optimize_attr.get("learning_rate", 1.0) if isinstance(param, Parameter) else 1.0
        if scale == 1.0:
            return lr
        block = update_block(program)
        scaled = block.create_var(unique_name.generate(f"{param.name}_lr"), [1], lr.dtype)
        block.append_op("scale", {"X": [lr]}, {"Out": [scaled]}, {"scale": float(scale)})
        return scaled

    def _accumulator(self, program, startup, name: str, param: Parameter, fill: float = 0.0, shape=None):
        """Optimizer state for one parameter (`fc_0.w_0_moment1_0`), zero- or `fill`-initialized."""
        key = (name, param.name)
        if key not in self._accumulators:
            var_name = unique_name.generate(f"{param.name}_{name}")
            shape = list(param.shape if shape is None else shape)
            var = program.global_block().create_var(var_name, shape, param.dtype, persistable=True)
            twin = startup.global_block().create_var(var_name, shape, param.dtype, persistable=True)
            Constant(fill)(twin, startup.global_block())
            self._accumulators[key] = var
            self._load_pending(var)
        return self._accumulators[key]


def _grad_tensor(param: Tensor) -> Tensor:
    grad = Tensor(param._grad, param.name + "@GRAD")
    if isinstance(param._grad, SelectedRows):
        grad.type = VarType.SELECTED_ROWS
    return grad


def update_block(program: Program):
    """Where updates go: the global block, or the gradient block that append_backward left current
    for a loss built in a sub-block (Paddle puts the optimizer's ops there too)."""
    current = program.current_block()
    return current if current.forward_block_idx >= 0 else program.global_block()


def _parameters(what: str, value):
    """None, or a list of the parameters (Parameters or their names) to train."""
    if value is None:
        return None
    if isinstance(value, (str, Variable)) or not isinstance(value, (list, tuple, set)):
        raise FleetgraphTypeError(
            f"{what}: parameters expected a list of Parameters (or their names), got {type(value).__name__}"
        )
    bad = [v for v in value if not isinstance(v, (str, Variable))]
    if bad:
        raise FleetgraphTypeError(f"{what}: parameters expected Parameters or names, got {type(bad[0]).__name__}")
    return list(value)
