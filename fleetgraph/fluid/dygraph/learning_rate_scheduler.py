"""Paddle 1.8's dygraph learning-rate decays (`fluid.dygraph.ExponentialDecay`, ...), with 1.8's
signatures and formulas.

Given to an optimizer as its learning_rate, a decay is called once per optimizer step, as Paddle
1.8's optimizers do: `decay()` returns the rate for the current step as a float32 Tensor of shape
[1] and advances `step_num` by `step`. The epoch decays (StepDecay, MultiStepDecay, LambdaDecay)
and ReduceLROnPlateau move only when the script says so (`epoch()`, `step(loss)`); calling them
returns the current rate. Each is a `paddle.optimizer.lr.LRScheduler` to the optimizers, which is
how they take a schedule; its state_dict is 1.8's (`step_num`, or the epoch decays' keys).

The step decays are also what `fluid.layers.noam_decay` and its siblings return in imperative mode:
this module hands them to the layers below it when imported.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from ...dygraph.tensor import Tensor
from ...ir.program import Variable
from ...layers.learning_rate_scheduler import set_imperative_decays
from ...optimizer.lr import LRScheduler
from .base import to_variable

__all__ = [
    "NoamDecay",
    "PiecewiseDecay",
    "NaturalExpDecay",
    "ExponentialDecay",
    "InverseTimeDecay",
    "PolynomialDecay",
    "CosineDecay",
    "LinearLrWarmup",
    "ReduceLROnPlateau",
    "StepDecay",
    "MultiStepDecay",
    "LambdaDecay",
]


class LearningRateDecay(LRScheduler):
    """Base of the step decays: `step()` gives the rate at `step_num` (a float, or a Tensor a
    subclass computed), and each call returns it as a Tensor and advances `step_num` by `step_size`.
    LRScheduler's own counters are not used: 1.8's decays count in step_num."""

    _state_keys: tuple[str, ...] = ("step_num",)

    def __init__(self, begin=0, step=1, dtype="float32") -> None:
        self.step_num, self.step_size, self.dtype = begin, step, dtype
        self._var_name = None

    def __call__(self):
        lr = self.step()
        if not isinstance(lr, Variable):
            lr = self.create_lr_var(lr)
        self.step_num += self.step_size
        return lr

    def create_lr_var(self, lr) -> Tensor:
        """`lr` as a [1] Tensor of this decay's dtype."""
        return to_variable(np.array([float(lr)], dtype=self.dtype))

    def step(self):
        raise NotImplementedError(f"{type(self).__name__}.step: a LearningRateDecay subclass gives the rate")

    def state_dict(self) -> dict:
        """The state that resumes the schedule, numbers only (a [1] Tensor as its value)."""
        state = {}
        for key in self._state_keys:
            if key in self.__dict__:
                value = self.__dict__[key]
                state[key] = float(value) if isinstance(value, Variable) else value
        return state

    def set_dict(self, state_dict: dict) -> None:
        """Load what state_dict() gave; a key missing is an error, keys over are warned about."""
        for key in self._state_keys:
            if key not in state_dict:
                raise RuntimeError(
                    f"{type(self).__name__}.set_dict: no {key!r} in the state dict; expected the keys "
                    f"{list(self._state_keys)} (was it saved from another kind of decay?)"
                )
            self.__dict__[key] = state_dict[key]
        if len(state_dict) > len(self._state_keys):
            warnings.warn(
                f"{type(self).__name__}.set_dict: keys {sorted(set(state_dict) - set(self._state_keys))} are unused; "
                "was the state saved from another kind of decay?",
                stacklevel=2,
            )

    set_state_dict = set_dict


class PiecewiseDecay(LearningRateDecay):
    """values[i] while step_num < boundaries[i], values[-1] after the last boundary."""

    def __init__(self, boundaries, values, begin, step=1, dtype="float32") -> None:
        if len(values) != len(boundaries) + 1:
            raise ValueError(f"PiecewiseDecay: {len(boundaries)} boundaries need {len(boundaries) + 1} values; "
                             f"got {len(values)}")  # fmt: skip
        super().__init__(begin, step, dtype)
        self.boundaries, self.values = list(boundaries), list(values)

    def step(self):
        for boundary, value in zip(self.boundaries, self.values):
            if self.step_num < boundary:
                return value
        return self.values[-1]


class _RateOverSteps(LearningRateDecay):
    """The decays of learning_rate over step_num / decay_steps (floored with staircase)."""

    def __init__(self, learning_rate, decay_steps, decay_rate, staircase=False, begin=0, step=1,
                 dtype="float32"):  # fmt: skip
        super().__init__(begin, step, dtype)
        self.learning_rate, self.decay_steps = learning_rate, decay_steps
        self.decay_rate, self.staircase = decay_rate, staircase

    def _steps(self) -> float:
        ratio = self.step_num / self.decay_steps
        return math.floor(ratio) if self.staircase else ratio


class NaturalExpDecay(_RateOverSteps):
    """learning_rate * exp(-decay_rate * step_num / decay_steps)."""

    def step(self):
        return self.learning_rate * math.exp(-1 * self.decay_rate * self._steps())


class ExponentialDecay(_RateOverSteps):
    """learning_rate * decay_rate ** (step_num / decay_steps)."""

    def step(self):
        return self.learning_rate * self.decay_rate ** self._steps()


class InverseTimeDecay(_RateOverSteps):
    """learning_rate / (1 + decay_rate * step_num / decay_steps)."""

    def step(self):
        return self.learning_rate / (1 + self.decay_rate * self._steps())


class PolynomialDecay(LearningRateDecay):
    """(learning_rate - end_learning_rate) * (1 - step_num / decay_steps) ** power + end_learning_rate,
    step_num held at decay_steps; with cycle, decay_steps grows to the next multiple past step_num."""

    def __init__(self, learning_rate, decay_steps, end_learning_rate=0.0001, power=1.0, cycle=False, begin=0, step=1,
                 dtype="float32"):  # fmt: skip
        super().__init__(begin, step, dtype)
        self.learning_rate, self.decay_steps = learning_rate, decay_steps
        self.end_learning_rate, self.power, self.cycle = end_learning_rate, power, cycle

    def step(self):
        step_num, decay_steps = self.step_num, self.decay_steps
        if self.cycle:
            decay_steps *= math.ceil(step_num / float(decay_steps)) if step_num else 1
        else:
            step_num = min(step_num, decay_steps)
        span = self.learning_rate - self.end_learning_rate
        return span * (1 - step_num / decay_steps) ** self.power + self.end_learning_rate


class CosineDecay(LearningRateDecay):
    """learning_rate * 0.5 * (cos(epoch * pi / epochs) + 1), epoch = floor(step_num / step_each_epoch)."""

    def __init__(self, learning_rate, step_each_epoch, epochs, begin=0, step=1, dtype="float32") -> None:
        super().__init__(begin, step, dtype)
        self.learning_rate, self.step_each_epoch, self.epochs = learning_rate, step_each_epoch, epochs

    def step(self):
        epoch = math.floor(self.step_num / self.step_each_epoch)
        return self.learning_rate * 0.5 * (math.cos(epoch * math.pi / self.epochs) + 1)


class NoamDecay(LearningRateDecay):
    """learning_rate * d_model ** -0.5 * min(step_num ** -0.5, warmup_steps ** -1.5 * step_num),
    step_num from 1."""

    def __init__(self, d_model, warmup_steps, begin=1, step=1, dtype="float32", learning_rate=1.0) -> None:
        super().__init__(begin, step, dtype)
        self.d_model, self.warmup_steps, self.learning_rate = d_model, warmup_steps, learning_rate

    def step(self):
        a = self.step_num**-0.5
        b = self.warmup_steps**-1.5 * self.step_num
        return self.learning_rate * self.d_model**-0.5 * min(a, b)


class LinearLrWarmup(LearningRateDecay):
    """start_lr + (end_lr - start_lr) * step_num / warmup_steps before warmup_steps (step_num from
    1), then learning_rate: a number, or a decay called at every step, the warmup's too, as Paddle's.
    The warmup adds start_lr as Paddle 1.8 documents it (its dygraph class left it out, so the two
    agree at start_lr 0)."""

    def __init__(self, learning_rate, warmup_steps, start_lr, end_lr, begin=1, step=1, dtype="float32") -> None:
        if isinstance(learning_rate, bool) or not isinstance(learning_rate, (numbers.Real, LearningRateDecay)):
            raise TypeError(f"LinearLrWarmup: learning_rate expected an int, a float or a LearningRateDecay, got "
                            f"{type(learning_rate).__name__} {learning_rate!r}")  # fmt: skip
        if end_lr <= start_lr:
            raise ValueError(f"LinearLrWarmup: end_lr {end_lr} must be greater than start_lr {start_lr}")
        super().__init__(begin, step, dtype)
        self.learning_rate, self.warmup_steps, self.start_lr = learning_rate, warmup_steps, float(start_lr)
        self.lr_ratio_before_warmup = (float(end_lr) - float(start_lr)) / float(warmup_steps)

    def step(self):
        base_lr = self.learning_rate
        if isinstance(base_lr, LearningRateDecay):
            base_lr = base_lr()
        if self.step_num < self.warmup_steps:
            return self.start_lr + self.lr_ratio_before_warmup * self.step_num
        return base_lr


class ReduceLROnPlateau(LearningRateDecay):
    """The rate times decay_rate (not below min_lr) once the loss given to step(loss) has not improved
    (by threshold, relative or absolute, down for mode 'min', up for 'max') for more than patience
    calls, then cooldown calls without counting; calling it returns the rate."""

    _state_keys = ("cooldown_counter", "best_loss", "num_bad_epochs", "epoch_num", "learning_rate")

    def __init__(self, learning_rate, mode="min", decay_rate=0.1, patience=10, verbose=False, threshold=1e-4,
                 threshold_mode="rel", cooldown=0, min_lr=0, eps=1e-8, dtype="float32"):  # fmt: skip
        mode, threshold_mode = mode.lower(), threshold_mode.lower()
        if mode not in ("min", "max"):
            raise ValueError(f"ReduceLROnPlateau: mode {mode!r}; expected 'min' or 'max'")
        if decay_rate >= 1.0:
            raise ValueError(f"ReduceLROnPlateau: decay_rate {decay_rate}; expected less than 1.0")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"ReduceLROnPlateau: threshold_mode {threshold_mode!r}; expected 'rel' or 'abs'")
        if isinstance(learning_rate, bool) or not isinstance(learning_rate, (numbers.Real, Variable)):
            raise TypeError(f"ReduceLROnPlateau: learning_rate expected a float, an int or a Variable, got "
                            f"{type(learning_rate).__name__}")  # fmt: skip
        super().__init__(dtype=dtype)
        self.mode, self.decay_rate, self.threshold_mode = mode, float(decay_rate), threshold_mode
        self.learning_rate = float(learning_rate)
        self.verbose, self.patience, self.threshold = verbose, patience, threshold
        self.cooldown, self.min_lr, self.eps = cooldown, float(min_lr), eps
        self.cooldown_counter, self.best_loss, self.num_bad_epochs, self.epoch_num = 0, None, 0, 0

    def __call__(self):
        return self.create_lr_var(self.learning_rate)

    def step(self, loss):
        """One epoch's loss (a [1] Variable, e.g. a mean)."""
        if not isinstance(loss, Variable):
            raise TypeError(f"ReduceLROnPlateau.step: loss expected a Variable, got {type(loss).__name__}")
        if list(loss.shape) != [1]:
            raise ValueError(f"ReduceLROnPlateau.step: loss shape {list(loss.shape)}; expected [1] "
                             "(fluid.layers.mean of the losses)")  # fmt: skip
        self.epoch_num += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            return
        if self.best_loss is None or self._is_better(float(loss), float(self.best_loss)):
            self.best_loss, self.num_bad_epochs = loss.detach() if isinstance(loss, Tensor) else loss, 0
        else:
            self.num_bad_epochs += 1
        if self.num_bad_epochs > self.patience:
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
            new_lr = max(float(np.float32(self.learning_rate) * np.float32(self.decay_rate)), self.min_lr)
            if self.learning_rate - new_lr > self.eps:
                if self.verbose:
                    print(f"Epoch {self.epoch_num}: reducing learning rate from {self.learning_rate} to {new_lr}.")
                self.learning_rate = new_lr

    def _is_better(self, current: float, best: float) -> bool:
        margin = best * self.threshold if self.threshold_mode == "rel" else self.threshold
        return current < best - margin if self.mode == "min" else current > best + margin


class _LearningRateEpochDecay(LearningRateDecay):
    """Base of the epoch decays: epoch() (or epoch(n)) moves to the next epoch (or to n) and sets the
    rate get_lr() gives there; calling the decay returns it."""

    _state_keys = ("epoch_num", "learning_rate")

    def __init__(self, learning_rate, dtype=None) -> None:
        if isinstance(learning_rate, bool) or not isinstance(learning_rate, numbers.Real):
            raise TypeError(f"{type(self).__name__}: learning_rate expected a float or an int, got "
                            f"{type(learning_rate).__name__}")  # fmt: skip
        if learning_rate < 0:
            raise ValueError(f"{type(self).__name__}: learning_rate {learning_rate}; expected one >= 0")
        # not LearningRateDecay's __init__: its step_size would overwrite StepDecay's, as in Paddle
        self.dtype, self._var_name = dtype or "float32", None
        self.base_lr, self.epoch_num = float(learning_rate), -1
        self.epoch()

    def __call__(self):
        return self.create_lr_var(self.learning_rate)

    def epoch(self, epoch=None) -> None:
        self.epoch_num = self.epoch_num + 1 if epoch is None else epoch
        self.learning_rate = self.get_lr()

    def get_lr(self) -> float:
        raise NotImplementedError(f"{type(self).__name__}.get_lr: an epoch decay gives the rate")


def _check_decay_rate(layer: str, decay_rate) -> None:
    if decay_rate >= 1.0:
        raise ValueError(f"{layer}: decay_rate {decay_rate}; expected less than 1.0")


class StepDecay(_LearningRateEpochDecay):
    """learning_rate * decay_rate ** (epoch // step_size)."""

    def __init__(self, learning_rate, step_size, decay_rate=0.1) -> None:
        if not isinstance(step_size, int) or isinstance(step_size, bool):
            raise TypeError(f"StepDecay: step_size expected an int, got {type(step_size).__name__}")
        _check_decay_rate("StepDecay", decay_rate)
        self.step_size, self.decay_rate = step_size, decay_rate
        super().__init__(learning_rate)

    def get_lr(self) -> float:
        return self.base_lr * self.decay_rate ** (self.epoch_num // self.step_size)


class MultiStepDecay(_LearningRateEpochDecay):
    """learning_rate * decay_rate ** (the number of milestones reached)."""

    def __init__(self, learning_rate, milestones, decay_rate=0.1) -> None:
        if not isinstance(milestones, (tuple, list)):
            raise TypeError(f"MultiStepDecay: milestones expected a list or tuple, got {type(milestones).__name__}")
        if any(a >= b for a, b in zip(milestones, milestones[1:])):
            raise ValueError(f"MultiStepDecay: milestones {list(milestones)}; expected them increasing")
        _check_decay_rate("MultiStepDecay", decay_rate)
        self.milestones, self.decay_rate = list(milestones), decay_rate
        super().__init__(learning_rate)

    def get_lr(self) -> float:
        reached = sum(1 for m in self.milestones if self.epoch_num >= m)
        return self.base_lr * self.decay_rate**reached


class LambdaDecay(_LearningRateEpochDecay):
    """learning_rate * lr_lambda(epoch)."""

    def __init__(self, learning_rate, lr_lambda) -> None:
        if not callable(lr_lambda):
            raise TypeError(f"LambdaDecay: lr_lambda expected a function, got {type(lr_lambda).__name__}")
        self.lr_lambda = lr_lambda
        super().__init__(learning_rate)

    def get_lr(self) -> float:
        return self.base_lr * self.lr_lambda(self.epoch_num)


_LAYER_SCHEDULES = (  # what fluid.layers' schedules of the same names return in imperative mode
    ExponentialDecay,
    NaturalExpDecay,
    InverseTimeDecay,
    PolynomialDecay,
    PiecewiseDecay,
    NoamDecay,
    CosineDecay,
    LinearLrWarmup,
)
set_imperative_decays({cls.__name__: cls for cls in _LAYER_SCHEDULES})
