"""Paddle 2.x's learning-rate schedulers (`paddle.optimizer.lr.StepDecay`, ...): Python objects the
script steps (`scheduler.step()`, per batch or per epoch as it likes), with Paddle's formulas.

Given to an optimizer in a static program, the rate lives in a persistable [1] variable
(`learning_rate_0`) that the executor sets to `scheduler()` before each run of the program, as
Paddle's does; the program's `lr_scheduler` names the scheduler."""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..dygraph.tensor import Tensor
from ..ir.errors import FleetgraphTypeError

__all__ = [
    "CosineAnnealingDecay",
    "ExponentialDecay",
    "InverseTimeDecay",
    "LambdaDecay",
    "LinearWarmup",
    "LRScheduler",
    "MultiStepDecay",
    "MultiplicativeDecay",
    "NaturalExpDecay",
    "NoamDecay",
    "PiecewiseDecay",
    "PolynomialDecay",
    "ReduceOnPlateau",
    "StepDecay",
    "Tensor",
]


class LRScheduler:
    """Base class: `last_epoch` counts the steps taken (0 after construction), `last_lr` is the rate
    `get_lr()` gave for it, and calling the scheduler returns `last_lr`."""

    def __init__(self, learning_rate=0.1, last_epoch=-1, verbose=False) -> None:
        if not isinstance(learning_rate, numbers.Real) or isinstance(learning_rate, bool):
            raise FleetgraphTypeError(
                f"{type(self).__name__}: learning_rate expected a float, got {type(learning_rate).__name__}"
            )
        self.base_lr = float(learning_rate)
        self.last_lr = float(learning_rate)
        self.last_epoch = last_epoch
        self.verbose = verbose
        self._var_name = None
        self.step()

    def __call__(self) -> float:
        return self.last_lr

    def step(self, epoch=None) -> None:
        """Advance one step, or jump to `epoch`."""
        if epoch is None:
            self.last_epoch += 1
            self.last_lr = self.get_lr()
        else:
            self.last_epoch = epoch
            closed = getattr(self, "_get_closed_form_lr", None)
            self.last_lr = closed() if closed is not None else self.get_lr()
        if self.verbose:
            print(f"Epoch {self.last_epoch}: {type(self).__name__} set learning rate to {self.last_lr}.")

    def get_lr(self) -> float:
        raise NotImplementedError

    def state_dict(self) -> dict:
        """What resumes the schedule: last_epoch and last_lr (Paddle's keys)."""
        return {"last_epoch": self.last_epoch, "last_lr": self.last_lr}

    def set_state_dict(self, state_dict: dict) -> None:
        for key in ("last_epoch", "last_lr"):
            if key in state_dict:
                setattr(self, key, state_dict[key])

    set_dict = set_state_dict


class NoamDecay(LRScheduler):
    def __init__(self, d_model, warmup_steps, learning_rate=1.0, last_epoch=-1, verbose=False) -> None:
        self.d_model, self.warmup_steps = d_model, warmup_steps
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        a = 1 if self.last_epoch == 0 else self.last_epoch**-0.5
        b = self.warmup_steps**-1.5 * self.last_epoch
        return self.base_lr * self.d_model**-0.5 * min(a, b)


class PiecewiseDecay(LRScheduler):
    def __init__(self, boundaries, values, last_epoch=-1, verbose=False) -> None:
        if len(values) != len(boundaries) + 1:
            raise ValueError(
                f"PiecewiseDecay: {len(boundaries)} boundaries need {len(boundaries) + 1} values; got {len(values)}"
            )
        self.boundaries, self.values = list(boundaries), list(values)
        super().__init__(values[0], last_epoch, verbose)

    def get_lr(self):
        for boundary, value in zip(self.boundaries, self.values):
            if self.last_epoch < boundary:
                return value
        return self.values[-1]


class NaturalExpDecay(LRScheduler):
    def __init__(self, learning_rate, gamma, last_epoch=-1, verbose=False) -> None:
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.base_lr * math.exp(-1 * self.gamma * self.last_epoch)


class InverseTimeDecay(LRScheduler):
    def __init__(self, learning_rate, gamma, last_epoch=-1, verbose=False) -> None:
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.base_lr / (1 + self.gamma * self.last_epoch)


class PolynomialDecay(LRScheduler):
    def __init__(
        self, learning_rate, decay_steps, end_lr=0.0001, power=1.0, cycle=False, last_epoch=-1, verbose=False
    ) -> None:
        if decay_steps <= 0:
            raise ValueError(f"PolynomialDecay: decay_steps {decay_steps}; expected a positive integer")
        self.decay_steps, self.end_lr, self.power, self.cycle = decay_steps, end_lr, power, cycle
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        epoch, decay_steps = self.last_epoch, self.decay_steps
        if self.cycle:
            periods = math.ceil(float(self.last_epoch) / float(self.decay_steps)) if self.last_epoch else 1
            decay_steps = self.decay_steps * periods
        else:
            epoch = min(self.last_epoch, self.decay_steps)
        return (self.base_lr - self.end_lr) * ((1 - float(epoch) / float(decay_steps)) ** self.power) + self.end_lr


class LinearWarmup(LRScheduler):
    """end_lr reached linearly from start_lr over warmup_steps, then `learning_rate`: a float, or a
    scheduler that starts stepping when the warmup ends."""

    def __init__(self, learning_rate, warmup_steps, start_lr, end_lr, last_epoch=-1, verbose=False) -> None:
        if not isinstance(learning_rate, (numbers.Real, LRScheduler)) or isinstance(learning_rate, bool):
            raise FleetgraphTypeError(
                f"LinearWarmup: learning_rate expected a float or an LRScheduler, got {type(learning_rate).__name__}"
            )
        if not isinstance(warmup_steps, int) or warmup_steps <= 0:
            raise ValueError(f"LinearWarmup: warmup_steps {warmup_steps!r}; expected a positive integer")
        self.learning_rate, self.warmup_steps = learning_rate, warmup_steps
        self.start_lr, self.end_lr = start_lr, end_lr
        if end_lr <= start_lr:
            raise ValueError(f"LinearWarmup: end_lr {end_lr} must be greater than start_lr {start_lr}")
        super().__init__(start_lr, last_epoch, verbose)

    def get_lr(self):
        if self.last_epoch < self.warmup_steps:
            return (self.end_lr - self.start_lr) * float(self.last_epoch) / float(self.warmup_steps) + self.start_lr
        if isinstance(self.learning_rate, LRScheduler):
            self.learning_rate.step(self.last_epoch - self.warmup_steps)
            return self.learning_rate()
        return self.learning_rate

    def state_dict(self) -> dict:
        state = super().state_dict()
        if isinstance(self.learning_rate, LRScheduler):
            state["LinearWarmup_LR"] = self.learning_rate.state_dict()
        return state

    def set_state_dict(self, state_dict: dict) -> None:
        inner = state_dict.pop("LinearWarmup_LR", None)
        super().set_state_dict(state_dict)
        if inner is not None:
            self.learning_rate.set_state_dict(inner)


class ExponentialDecay(LRScheduler):
    def __init__(self, learning_rate, gamma, last_epoch=-1, verbose=False) -> None:
        if not 0.0 < gamma < 1.0:
            raise ValueError(f"ExponentialDecay: gamma {gamma}; expected a value in (0, 1)")
        self.gamma = gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.base_lr * (self.gamma**self.last_epoch)


class MultiStepDecay(LRScheduler):
    def __init__(self, learning_rate, milestones, gamma=0.1, last_epoch=-1, verbose=False) -> None:
        if list(milestones) != sorted(milestones) or len(set(milestones)) != len(milestones):
            raise ValueError(f"MultiStepDecay: milestones {list(milestones)}; expected strictly increasing steps")
        if gamma >= 1.0:
            raise ValueError(f"MultiStepDecay: gamma {gamma}; expected less than 1.0")
        self.milestones, self.gamma = list(milestones), gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        for i, milestone in enumerate(self.milestones):
            if self.last_epoch < milestone:
                return self.base_lr * (self.gamma**i)
        return self.base_lr * (self.gamma ** len(self.milestones))


class StepDecay(LRScheduler):
    def __init__(self, learning_rate, step_size, gamma=0.1, last_epoch=-1, verbose=False) -> None:
        if not isinstance(step_size, int) or step_size <= 0:
            raise ValueError(f"StepDecay: step_size {step_size!r}; expected a positive integer")
        if gamma >= 1.0:
            raise ValueError(f"StepDecay: gamma {gamma}; expected less than 1.0")
        self.step_size, self.gamma = step_size, gamma
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.base_lr * (self.gamma ** (self.last_epoch // self.step_size))


class LambdaDecay(LRScheduler):
    def __init__(self, learning_rate, lr_lambda, last_epoch=-1, verbose=False) -> None:
        if not callable(lr_lambda):
            raise FleetgraphTypeError(f"LambdaDecay: lr_lambda expected a function, got {type(lr_lambda).__name__}")
        self.lr_lambda = lr_lambda
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        return self.base_lr * self.lr_lambda(self.last_epoch)


class MultiplicativeDecay(LRScheduler):
    def __init__(self, learning_rate, lr_lambda, last_epoch=-1, verbose=False) -> None:
        if not callable(lr_lambda):
            raise FleetgraphTypeError(
                f"MultiplicativeDecay: lr_lambda expected a function, got {type(lr_lambda).__name__}"
            )
        self.lr_lambda = lr_lambda
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        if self.last_epoch > 0:
            return self.last_lr * self.lr_lambda(self.last_epoch)
        return self.base_lr


class CosineAnnealingDecay(LRScheduler):
    def __init__(self, learning_rate, T_max, eta_min=0, last_epoch=-1, verbose=False) -> None:
        if not isinstance(T_max, int) or T_max <= 0:
            raise ValueError(f"CosineAnnealingDecay: T_max {T_max!r}; expected a positive integer")
        self.T_max, self.eta_min = T_max, float(eta_min)
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        if self.last_epoch == 0:
            return self.base_lr
        if (self.last_epoch - 1 - self.T_max) % (2 * self.T_max) == 0:
            return self.last_lr + (self.base_lr - self.eta_min) * (1 - math.cos(math.pi / self.T_max)) / 2
        return (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / (
            1 + math.cos(math.pi * (self.last_epoch - 1) / self.T_max)
        ) * (self.last_lr - self.eta_min) + self.eta_min

    def _get_closed_form_lr(self):
        return self.eta_min + (self.base_lr - self.eta_min) * (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2


class ReduceOnPlateau(LRScheduler):
    """The rate times `factor` (not below `min_lr`) once the metric given to step(metrics) has not
    improved (by `threshold`, relative or absolute; down for mode 'min', up for 'max') for more than
    `patience` steps, then `cooldown` steps without counting; a cut smaller than `epsilon` is not made.
    The best metric is kept as a float (Paddle keeps the Tensor; its state_dict holds the number)."""

    _state_keys = ("cooldown_counter", "best", "num_bad_epochs", "last_epoch", "last_lr")

    def __init__(self, learning_rate, mode="min", factor=0.1, patience=10, threshold=1e-4, threshold_mode="rel",
                 cooldown=0, min_lr=0, epsilon=1e-8, verbose=False) -> None:  # fmt: skip
        mode, threshold_mode = mode.lower(), threshold_mode.lower()
        if mode not in ("min", "max"):
            raise ValueError(f"mode: {mode} is unknown!")
        if factor >= 1.0:
            raise ValueError("new_lr = origin_lr * gamma and gamma should be < 1.0.")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"threshold mode: {threshold_mode} is unknown!")
        if isinstance(learning_rate, bool) or not isinstance(learning_rate, (float, int)):
            raise TypeError(
                f"The type of 'learning_rate' in 'ReduceOnPlateau' must be 'float', but received {type(learning_rate)}."
            )
        self.mode, self.factor, self.threshold_mode = mode, factor, threshold_mode
        self.patience, self.threshold, self.cooldown, self.min_lr, self.epsilon = (
            patience,
            threshold,
            cooldown,
            min_lr,
            epsilon,
        )
        self.cooldown_counter, self.best, self.num_bad_epochs = 0, None, 0
        # not LRScheduler.__init__: that takes a first step, and this one steps on a metric
        self.base_lr = self.last_lr = float(learning_rate)
        self.last_epoch, self.verbose, self._var_name = 0, verbose, None

    def step(self, metrics, epoch=None) -> None:
        """One epoch's metric (a float, or a Tensor / ndarray of shape [1]), after optimizer.step()."""
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if isinstance(metrics, (Tensor, np.ndarray)):
            if list(metrics.shape) != [1]:
                raise ValueError(
                    f"ReduceOnPlateau.step: the metrics.shape should be (1L,), but the current metrics.shape is "
                    f"{list(metrics.shape)}. Maybe that you should call paddle.mean to process it first."
                )
            metrics = float(np.asarray(metrics.numpy() if isinstance(metrics, Tensor) else metrics)[0])
        elif isinstance(metrics, bool) or not isinstance(metrics, (int, float, np.floating)):
            raise TypeError(
                "metrics must be 'int', 'float', 'np.float', 'numpy.ndarray' or 'paddle.Tensor', but receive "
                f"{type(metrics)}"
            )
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            return
        if self.best is None or self._is_better(metrics, self.best):
            self.best, self.num_bad_epochs = float(metrics), 0
        else:
            self.num_bad_epochs += 1
        if self.num_bad_epochs > self.patience:
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
            new_lr = max(self.last_lr * self.factor, self.min_lr)
            if self.last_lr - new_lr > self.epsilon:
                self.last_lr = new_lr
                if self.verbose:
                    print(f"Epoch {self.last_epoch}: {type(self).__name__} set learning rate to {self.last_lr}.")

    def _is_better(self, current: float, best: float) -> bool:
        margin = best * self.threshold if self.threshold_mode == "rel" else self.threshold
        return current < best - margin if self.mode == "min" else current > best + margin

    def state_dict(self) -> dict:
        return {key: getattr(self, key) for key in self._state_keys}

    def set_state_dict(self, state_dict: dict) -> None:
        for key in self._state_keys:
            if key in state_dict:
                setattr(self, key, state_dict[key])

    set_dict = set_state_dict
