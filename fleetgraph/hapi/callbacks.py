"""`paddle.callbacks`: what paddle.Model calls around each epoch and batch (Paddle 2.0's hapi
callbacks): the progress logger, checkpoints, early stopping and the learning-rate step."""

from __future__ import annotations

import numbers
import os
import sys
import time
import warnings

import numpy as np

__all__ = ["Callback", "EarlyStopping", "LRScheduler", "ModelCheckpoint", "ProgBarLogger", "VisualDL"]


class Callback:
    """Does nothing at each hook; subclasses override the ones they need. `self.model` and
    `self.params` (batch_size, epochs, steps, verbose, metrics) are set before training begins."""

    def __init__(self) -> None:
        self.model, self.params = None, {}

    def set_params(self, params) -> None:
        self.params = params

    def set_model(self, model) -> None:
        self.model = model

    def on_train_begin(self, logs=None): ...
    def on_train_end(self, logs=None): ...
    def on_eval_begin(self, logs=None): ...
    def on_eval_end(self, logs=None): ...
    def on_predict_begin(self, logs=None): ...
    def on_predict_end(self, logs=None): ...
    def on_epoch_begin(self, epoch, logs=None): ...
    def on_epoch_end(self, epoch, logs=None): ...
    def on_train_batch_begin(self, step, logs=None): ...
    def on_train_batch_end(self, step, logs=None): ...
    def on_eval_batch_begin(self, step, logs=None): ...
    def on_eval_batch_end(self, step, logs=None): ...
    def on_predict_batch_begin(self, step, logs=None): ...
    def on_predict_batch_end(self, step, logs=None): ...


def _format(value) -> str:
    """A logged value as Paddle's progress bar prints it."""
    values = value if isinstance(value, list) else [value]
    parts = []
    for v in values:
        if isinstance(v, np.ndarray) and v.size == 1:
            v = float(v.reshape(-1)[0])
        if isinstance(v, numbers.Real) and not isinstance(v, (bool, numbers.Integral)):
            parts.append(f"{v:.4f}" if abs(v) > 1e-3 else f"{v:.4e}")
        else:
            parts.append(str(v))
    return " ".join(parts)


class ProgBarLogger(Callback):
    """Prints 'Epoch i/n' and, every log_freq steps, 'step k/N - loss: ... - acc: ... - x ms/step'
    (verbose 2, Paddle's default; 1 rewrites one line; 0 prints nothing)."""

    def __init__(self, log_freq=1, verbose=2) -> None:
        super().__init__()
        self.log_freq, self.verbose = int(log_freq), int(verbose)

    def _line(self, step, steps, logs, keys, started) -> None:
        count = f"step {step:{len(str(steps))}d}/{steps}" if steps else f"step {step:3d}"
        info = "".join(f" - {k}: {_format(logs[k])}" for k in keys if k in logs)
        per_step = (time.time() - started) / max(step, 1) * 1000
        end = "\r" if self.verbose == 1 and steps and step < steps else "\n"
        sys.stdout.write(f"{count}{info} - {per_step:.0f}ms/step{end}")
        sys.stdout.flush()

    def on_train_begin(self, logs=None) -> None:
        self.epochs, self.train_metrics = self.params.get("epochs"), self.params.get("metrics", [])

    def on_epoch_begin(self, epoch, logs=None) -> None:
        self.steps, self.train_step, self._started = self.params.get("steps"), 0, time.time()
        if self.verbose and self.epochs:
            print(f"Epoch {epoch + 1}/{self.epochs}")

    def on_train_batch_end(self, step, logs=None) -> None:
        self.train_step += 1
        if self.verbose and self.train_step % self.log_freq == 0 and (not self.steps or self.train_step < self.steps):
            self._line(self.train_step, self.steps, logs or {}, self.train_metrics, self._started)

    def on_epoch_end(self, epoch, logs=None) -> None:
        if self.verbose and self.steps:
            self._line(self.train_step, self.steps, logs or {}, self.train_metrics, self._started)

    def on_eval_begin(self, logs=None) -> None:
        logs = logs or {}
        self.eval_steps, self.eval_metrics = logs.get("steps"), logs.get("metrics", [])
        self.eval_step, self._eval_started = 0, time.time()
        if self.verbose:
            print("Eval begin...")

    def on_eval_batch_end(self, step, logs=None) -> None:
        self.eval_step += 1
        if (
            self.verbose
            and self.eval_step % self.log_freq == 0
            and (not self.eval_steps or self.eval_step < self.eval_steps)
        ):
            self._line(self.eval_step, self.eval_steps, logs or {}, self.eval_metrics, self._eval_started)

    def on_eval_end(self, logs=None) -> None:
        if self.verbose:
            self._line(self.eval_step, self.eval_steps, logs or {}, self.eval_metrics, self._eval_started)
            print(f"Eval samples: {(logs or {}).get('samples', 0)}")

    def on_predict_begin(self, logs=None) -> None:
        self.test_step, self._test_started = 0, time.time()
        if self.verbose:
            print("Predict begin...")

    def on_predict_batch_end(self, step, logs=None) -> None:
        self.test_step += 1

    def on_predict_end(self, logs=None) -> None:
        if self.verbose:
            print(f"Predict samples: {(logs or {}).get('samples', 0)}")


class ModelCheckpoint(Callback):
    """Saves the model (model.save) to save_dir/<epoch> every save_freq epochs and to save_dir/final."""

    def __init__(self, save_freq=1, save_dir=None) -> None:
        super().__init__()
        self.save_freq, self.save_dir = int(save_freq), save_dir

    def on_epoch_end(self, epoch, logs=None) -> None:
        if self.save_dir and epoch % self.save_freq == 0:
            self.model.save(os.path.join(self.save_dir, str(epoch)))

    def on_train_end(self, logs=None) -> None:
        if self.save_dir:
            self.model.save(os.path.join(self.save_dir, "final"))


class LRScheduler(Callback):
    """Steps the optimizer's paddle.optimizer.lr scheduler after each batch (by_step) or epoch."""

    def __init__(self, by_step=True, by_epoch=False) -> None:
        super().__init__()
        if by_step == by_epoch:
            raise ValueError("by_step option is mutually exclusive with by_epoch")
        self.by_step, self.by_epoch = by_step, by_epoch

    def _step(self) -> None:
        from ..optimizer.lr import LRScheduler as Schedule

        rate = getattr(getattr(self.model, "_optimizer", None), "_learning_rate", None)
        if isinstance(rate, Schedule):
            rate.step()

    def on_train_batch_end(self, step, logs=None) -> None:
        if self.by_step:
            self._step()

    def on_epoch_end(self, epoch, logs=None) -> None:
        if self.by_epoch:
            self._step()


class EarlyStopping(Callback):
    """Stops training when `monitor` (an eval log: 'loss', 'acc'...) stops improving by min_delta for
    `patience` evaluations; saves the best model to save_dir/best_model when asked."""

    def __init__(
        self, monitor="loss", mode="auto", patience=0, verbose=1, min_delta=0, baseline=None, save_best_model=True
    ):
        super().__init__()
        if mode not in ("auto", "min", "max"):
            warnings.warn(f"EarlyStopping mode {mode} is unknown, fallback to auto mode.", stacklevel=2)
            mode = "auto"
        if mode == "auto":
            mode = "max" if "acc" in monitor else "min"
        self.monitor, self.patience, self.verbose, self.baseline = monitor, int(patience), verbose, baseline
        self.min_delta, self.save_best_model = abs(min_delta), save_best_model
        self._better = (lambda a, b: a < b - self.min_delta) if mode == "min" else (lambda a, b: a > b + self.min_delta)
        self.wait_epoch, self.stopped_epoch = 0, 0
        self.best_value = None

    def on_train_begin(self, logs=None) -> None:
        self.wait_epoch, self.stopped_epoch = 0, 0
        self.best_value = self.baseline
        self.save_dir = self.params.get("save_dir")

    def on_eval_end(self, logs=None) -> None:
        if not logs or self.monitor not in logs:
            warnings.warn("Monitor of EarlyStopping should be loss or metric name.", stacklevel=2)
            return
        current = logs[self.monitor]
        current = float(np.asarray(current[0] if isinstance(current, list) else current).reshape(-1)[0])
        if self.best_value is None or self._better(current, self.best_value):
            self.best_value, self.wait_epoch = current, 0
            if self.save_best_model and self.save_dir:
                self.model.save(os.path.join(self.save_dir, "best_model"))
            return
        self.wait_epoch += 1
        if self.wait_epoch > self.patience:
            self.model.stop_training = True
            if self.verbose > 0:
                print(f"Epoch {self.stopped_epoch + 1}: Early stopping.")
                if self.save_best_model and self.save_dir:
                    print(f"Best checkpoint has been saved at {os.path.join(self.save_dir, 'best_model')}")
        self.stopped_epoch += 1


class VisualDL(Callback):
    """Paddle's callback writing VisualDL logs: not built here (fleetgraph does not depend on visualdl)."""

    def __init__(self, log_dir) -> None:
        raise NotImplementedError(
            "paddle.callbacks.VisualDL: writing VisualDL logs is not built in fleetgraph; ProgBarLogger prints "
            "the same values"
        )
