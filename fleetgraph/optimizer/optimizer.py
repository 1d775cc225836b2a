"""The optimizers, one declarative row each: Paddle 2.x's class name (Fluid's is it plus `Optimizer`), the
op, the hyperparameters with their defaults, the state per parameter and the op's attrs; `declare` makes
the class, whose constructor takes exactly the row's signature."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .base import Optimizer, update_block

_COMMON = ("parameters", "weight_decay", "grad_clip", "name", "regularization", "parameter_list")
REQUIRED = inspect.Parameter.empty


@dataclass(frozen=True)
class State:
    """One accumulator per parameter (`fc_0.w_0_moment1_0`): the op reads it from `slot` and writes it
    to `out` (None: the op only reads it); it starts at `fill`, a number or a hyperparameter's name, over
    the parameter's shape or, if `scalar`, [1]."""

    name: str
    slot: str
    out: str | None
    fill: float | str = 0.0
    scalar: bool = False


@dataclass(frozen=True)
class OptimizerSpec:
    """One optimizer. `hyper`: its own hyperparameters in signature order, name -> (default, conversion
    or None to keep the value as given). `attrs`: op attr -> a hyperparameter's name, or f(hyper, param).
    `signature`: the whole parameter order where Paddle's mixes the hyperparameters with the common ones
    (`_COMMON`); None: (learning_rate, *hyper, **common)."""

    name: str
    op_type: str
    hyper: dict[str, tuple[Any, Callable | None]] = field(default_factory=dict)
    state: tuple[State, ...] = ()
    attrs: dict[str, str | Callable] = field(default_factory=dict)
    signature: tuple[str, ...] | None = None
    learning_rate: Any = 0.001
    lr_after_grad: bool = False  # the LearningRate input right after Grad (Adam's order), not last
    scale_after: tuple[str, str] | None = None  # (state, hyper): state *= hyper after every parameter's update
    doc: str | None = None

    def converted(self, values: dict) -> dict:
        """The hyperparameters as the op's attrs take them: float(), bool() or as given."""
        return {k: v if self.hyper[k][1] is None else self.hyper[k][1](v) for k, v in values.items()}


class _Declared(Optimizer):
    """What every declared optimizer does with its row: make the state, fill the op's slots."""

    _spec: OptimizerSpec

    def _op_slots(self, program, startup, param, grad, lr):
        spec = self._spec
        state = [(s, self._state(program, startup, s, param)) for s in spec.state]
        inputs = {"Param": [param], "Grad": [grad]}
        if spec.lr_after_grad:
            inputs["LearningRate"] = [lr]
        inputs.update((s.slot, [var]) for s, var in state)
        if not spec.lr_after_grad:
            inputs["LearningRate"] = [lr]
        outputs = {"ParamOut": [param], **{s.out: [var] for s, var in state if s.out}}
        attrs = {k: v(self._hyper, param) if callable(v) else self._hyper[v] for k, v in spec.attrs.items()}
        return inputs, outputs, attrs

    def _finish_update(self, program, startup, param) -> None:
        if self._spec.scale_after is None:
            return
        name, by = self._spec.scale_after
        var = self._state(program, startup, next(s for s in self._spec.state if s.name == name), param)
        update_block(program).append_op("scale", {"X": [var]}, {"Out": [var]}, {"scale": self._hyper[by]})

    def _state(self, program, startup, s: State, param):
        fill = self._hyper[s.fill] if isinstance(s.fill, str) else s.fill
        return self._accumulator(program, startup, s.name, param, fill, [1] if s.scalar else None)


def declare(spec: OptimizerSpec, base: type[Optimizer] = _Declared) -> type[Optimizer]:
    """The class a row describes: its constructor binds the row's signature, gives learning_rate and the
    common arguments to Optimizer and keeps the hyperparameters, converted, in `_hyper`."""
    signature = _signature(spec)

    def __init__(self, *args, **kwargs) -> None:
        try:
            bound = signature.bind(self, *args, **kwargs)
        except TypeError as err:
            raise TypeError(f"{spec.name}: {err}") from None
        bound.apply_defaults()
        values = dict(bound.arguments)
        del values["self"]
        hyper = {k: values.pop(k) for k in spec.hyper}
        common = values.pop("common", {})
        Optimizer.__init__(self, **values, **common)
        self._hyper = spec.converted(hyper)
        # Paddle 2.0's multi_precision: float32 master weights of low-precision parameters (base.step)
        self._multi_precision = bool(self._hyper.get("multi_precision", False))

    __init__.__signature__ = signature
    __init__.__qualname__ = f"{spec.name}.__init__"
    namespace = {"__init__": __init__, "__module__": __name__, "__qualname__": spec.name, "__doc__": spec.doc}
    return type(spec.name, (base,), {**namespace, "op_type": spec.op_type, "_spec": spec})


def _signature(spec: OptimizerSpec) -> inspect.Signature:
    defaults = {
        "learning_rate": spec.learning_rate,
        **dict.fromkeys(_COMMON),
        **{k: d for k, (d, _) in spec.hyper.items()},
    }
    p = inspect.Parameter
    params = [p("self", p.POSITIONAL_OR_KEYWORD)]
    params += [
        p(n, p.POSITIONAL_OR_KEYWORD, default=defaults[n]) for n in spec.signature or ("learning_rate", *spec.hyper)
    ]
    if spec.signature is None:
        params.append(p("common", p.VAR_KEYWORD))
    return inspect.Signature(params, return_annotation="None")


def _lamb_decay(hyper: dict, param) -> float:
    """0 for the parameters exclude_from_weight_decay_fn names."""
    exclude = hyper["exclude_from_weight_decay_fn"]
    return 0.0 if exclude is not None and exclude(param) else hyper["lamb_weight_decay"]


_ADAM_STATE = (
    State("moment1", "Moment1", "Moment1Out"),
    State("moment2", "Moment2", "Moment2Out"),
    State("beta1_pow_acc", "Beta1Pow", "Beta1PowOut", fill="beta1", scalar=True),
    State("beta2_pow_acc", "Beta2Pow", "Beta2PowOut", fill="beta2", scalar=True),
)

SGD = declare(
    OptimizerSpec(
        "SGD",
        "sgd",
        signature=(
            "learning_rate",
            "parameters",
            "weight_decay",
            "grad_clip",
            "name",
            "regularization",
            "parameter_list",
        ),
    ),
)
Momentum = declare(
    OptimizerSpec(
        "Momentum",
        "momentum",
        hyper={"momentum": (0.9, float), "use_nesterov": (False, bool), "multi_precision": (False, bool)},
        state=(State("velocity", "Velocity", "VelocityOut"),),
        attrs={"mu": "momentum", "use_nesterov": "use_nesterov"},
        signature=(
            "learning_rate",
            "momentum",
            "parameters",
            "use_nesterov",
            "weight_decay",
            "grad_clip",
            "multi_precision",
            "name",
            "regularization",
            "parameter_list",
        ),
    )
)
Adam = declare(
    OptimizerSpec(
        "Adam",
        "adam",
        hyper={
            "beta1": (0.9, float),
            "beta2": (0.999, float),
            "epsilon": (1e-08, float),
            "lazy_mode": (False, None),
            "multi_precision": (False, bool),
        },
        state=_ADAM_STATE,
        attrs={"beta1": "beta1", "beta2": "beta2", "epsilon": "epsilon", "lazy_mode": "lazy_mode"},
        signature=(
            "learning_rate",
            "beta1",
            "beta2",
            "epsilon",
            "parameters",
            "weight_decay",
            "grad_clip",
            "lazy_mode",
            "multi_precision",
            "name",
            "regularization",
            "parameter_list",
        ),
        lr_after_grad=True,
    )
)
Adagrad = declare(
    OptimizerSpec(
        "Adagrad",
        "adagrad",
        hyper={"epsilon": (1e-06, float), "initial_accumulator_value": (0.0, float)},
        state=(State("moment", "Moment", "MomentOut", fill="initial_accumulator_value"),),
        attrs={"epsilon": "epsilon"},
        signature=(
            "learning_rate",
            "epsilon",
            "parameters",
            "weight_decay",
            "grad_clip",
            "name",
            "initial_accumulator_value",
            "regularization",
            "parameter_list",
        ),
    )
)
RMSProp = declare(
    OptimizerSpec(
        "RMSProp",
        "rmsprop",
        hyper={"rho": (0.95, float), "epsilon": (1e-06, float), "momentum": (0.0, float), "centered": (False, None)},
        state=(
            State("momentum", "Moment", "MomentOut"),
            State("mean_square", "MeanSquare", "MeanSquareOut"),
            State("mean_grad", "MeanGrad", "MeanGradOut"),
        ),
        attrs={"epsilon": "epsilon", "decay": "rho", "momentum": "momentum", "centered": "centered"},
    )
)
Adamax = declare(
    OptimizerSpec(
        "Adamax",
        "adamax",
        hyper={"beta1": (0.9, float), "beta2": (0.999, float), "epsilon": (1e-08, float)},
        state=(
            State("moment", "Moment", "MomentOut"),
            State("inf_norm", "InfNorm", "InfNormOut"),
            State("beta1_pow_acc", "Beta1Pow", None, fill="beta1", scalar=True),
        ),
        attrs={"beta1": "beta1", "beta2": "beta2", "epsilon": "epsilon"},
        lr_after_grad=True,
        scale_after=("beta1_pow_acc", "beta1"),  # its op reads the beta1 power; a scale op advances it
    )
)
Adadelta = declare(
    OptimizerSpec(
        "Adadelta",
        "adadelta",
        hyper={"epsilon": (1e-06, float), "rho": (0.95, float)},
        state=(
            State("_avg_squared_grad", "AvgSquaredGrad", "AvgSquaredGradOut"),
            State("_avg_squared_update", "AvgSquaredUpdate", "AvgSquaredUpdateOut"),
        ),
        attrs={"epsilon": "epsilon", "rho": "rho"},
    )
)
DecayedAdagrad = declare(
    OptimizerSpec(
        "DecayedAdagrad",
        "decayed_adagrad",
        hyper={"decay": (0.95, float), "epsilon": (1e-06, float)},
        state=(State("moment", "Moment", "MomentOut"),),
        attrs={"decay": "decay", "epsilon": "epsilon"},
        learning_rate=REQUIRED,
        doc="Fluid's DecayedAdagradOptimizer (Paddle 2.x dropped it from paddle.optimizer).",
    )
)
Ftrl = declare(
    OptimizerSpec(
        "Ftrl",
        "ftrl",
        hyper={"l1": (0.0, float), "l2": (0.0, float), "lr_power": (-0.5, float)},
        state=(
            State("squared", "SquaredAccumulator", "SquaredAccumOut"),
            State("linear", "LinearAccumulator", "LinearAccumOut"),
        ),
        attrs={"l1": "l1", "l2": "l2", "lr_power": "lr_power"},
        learning_rate=REQUIRED,
        doc="Fluid's FtrlOptimizer (FTRL-proximal; Paddle 2.x dropped it from paddle.optimizer).",
    )
)
Lamb = declare(
    OptimizerSpec(
        "Lamb",
        "lamb",
        hyper={
            "beta1": (0.9, float),
            "beta2": (0.999, float),
            "epsilon": (1e-06, float),
            "lamb_weight_decay": (0.01, float),
            "always_adapt": (False, bool),
            "exclude_from_weight_decay_fn": (None, None),
            "multi_precision": (False, None),
        },
        state=_ADAM_STATE,
        attrs={
            "weight_decay": _lamb_decay,
            "beta1": "beta1",
            "beta2": "beta2",
            "epsilon": "epsilon",
            "always_adapt": "always_adapt",
        },
        signature=(
            "learning_rate",
            "lamb_weight_decay",
            "beta1",
            "beta2",
            "epsilon",
            "parameters",
            "grad_clip",
            "exclude_from_weight_decay_fn",
            "multi_precision",
            "always_adapt",
            "name",
            "regularization",
            "parameter_list",
        ),
        lr_after_grad=True,
        doc=(
            "LAMB: Adam's step scaled per parameter by ||param|| / ||step||, with decoupled weight decay "
            "(`lamb_weight_decay`; 0 for parameters `exclude_from_weight_decay_fn(param)` names, whose step "
            "is then not rescaled unless `always_adapt`). Its op takes Adam's inputs and outputs."
        ),
    ),
    base=Adam,
)
LarsMomentum = declare(
    OptimizerSpec(
        "LarsMomentum",
        "lars_momentum",
        hyper={"momentum": (REQUIRED, float), "lars_coeff": (0.001, float), "lars_weight_decay": (0.0005, float)},
        state=(State("velocity", "Velocity", "VelocityOut"),),
        attrs={"mu": "momentum", "lars_coeff": "lars_coeff", "lars_weight_decay": "lars_weight_decay"},
        signature=(
            "learning_rate",
            "momentum",
            "lars_coeff",
            "lars_weight_decay",
            "parameter_list",
            "regularization",
            "grad_clip",
            "name",
        ),
        learning_rate=REQUIRED,
        doc=(
            "Fluid's LarsMomentumOptimizer: momentum with a layer-wise learning rate, lr * lars_coeff * "
            "||param|| / (||grad|| + lars_weight_decay * ||param||), and lars_weight_decay * param added "
            "to the gradient (Paddle 2.x has no paddle.optimizer.LarsMomentum)."
        ),
    )
)


class _Seeded(_Declared):
    """Dpsgd's op takes Paddle's `seed` attr from `_seed`, which Paddle keeps for debugging: set it to
    a nonzero int and every step draws the same noise; None (the default) or 0 draws anew each step."""

    _seed: int | None = None

    def _op_slots(self, program, startup, param, grad, lr):
        inputs, outputs, attrs = super()._op_slots(program, startup, param, grad, lr)
        return inputs, outputs, {**attrs, "seed": int(self._seed or 0)}


Dpsgd = declare(
    OptimizerSpec(
        "Dpsgd",
        "dpsgd",
        hyper={"clip": (0.9, float), "batch_size": (0.999, float), "sigma": (1e-08, float)},
        attrs={"clip": "clip", "batch_size": "batch_size", "sigma": "sigma"},
        signature=("learning_rate", "clip", "batch_size", "sigma", "parameter_list"),
        doc=(
            "Fluid's DpsgdOptimizer (CCS16, Deep Learning with Differential Privacy): each parameter's "
            "gradient clipped to L2 norm `clip`, plus one gaussian draw N(0, sigma) / batch_size, times "
            "the learning rate. Its defaults are Paddle 1.8's (clip 0.9, batch_size 0.999, sigma 1e-8). "
            "Dense gradients only."
        ),
    ),
    base=_Seeded,
)
