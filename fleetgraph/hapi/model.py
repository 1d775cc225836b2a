"""`paddle.Model` (Paddle 2.0's hapi): a network with its optimizer, loss and metrics, trained by fit,
checked by evaluate, run by predict, saved and loaded, in dynamic mode and (static_adapter.py) in static
mode.

Each batch a loader yields is split as Paddle's Model splits it: the first len(inputs) fields feed the
network, the rest are the labels given to the loss and the metrics (without `inputs`, every field but
the last len(labels), default one, is an input; predict feeds forward's positional parameters).

Under the launcher (several trainers), as Paddle's: the network trains through paddle.DataParallel
(static mode: the train program from Fleet's collective optimizer, gradients all-reduced in it), each
trainer reads its share of a Dataset (DistributedBatchSampler), the metrics see every trainer's
batch (all_gather), and only trainer 0 prints and saves.
"""

from __future__ import annotations

import inspect
import os

import numpy as np

from ..dygraph.mode import in_dynamic_mode, no_grad
from ..dygraph.parallel import ParallelEnv, init_parallel_env
from ..dygraph.save_load import load as _load
from ..dygraph.save_load import save as _save
from ..dygraph.tensor import Tensor, to_tensor
from ..io import DataLoader, Dataset, DistributedBatchSampler
from ..io.map_loader import MapDataLoader
from ..ir import FleetgraphError
from .callbacks import Callback, ProgBarLogger
from .summary import summary as _summary


def _list(value) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [value]


def _shapes_of(input_size) -> list[tuple]:
    """Model.summary's input_size (a shape, an InputSpec, or a list of them) as shape tuples."""
    one = isinstance(input_size, tuple) or hasattr(input_size, "shape")
    if one or (isinstance(input_size, list) and input_size and all(isinstance(d, int) for d in input_size)):
        input_size = [input_size]
    return [tuple(getattr(size, "shape", size)) for size in input_size]


def _numpy(value) -> np.ndarray:
    return value.numpy() if isinstance(value, Tensor) else np.asarray(value)


class Model:
    """`paddle.Model(network, inputs=None, labels=None)`; prepare(optimizer, loss, metrics) first."""

    def __init__(self, network, inputs=None, labels=None) -> None:
        self.network, self._inputs, self._labels = network, inputs, labels
        self._optimizer, self._loss, self._metrics = None, None, []
        self.stop_training = False
        env = ParallelEnv()
        self._nranks, self._rank, self._forward = env.world_size, env.rank, network
        self._adapter = None  # static mode: the programs (static_adapter.py), made by prepare
        if self._nranks > 1 and in_dynamic_mode():  # static mode: Fleet's collective programs (the adapter)
            from ..distributed.parallel import DataParallel

            init_parallel_env()
            self._forward = DataParallel(network)

    # -- setting up --------------------------------------------------------------------------------
    def prepare(self, optimizer=None, loss=None, metrics=None) -> None:
        if loss is not None and not callable(loss):
            raise TypeError("'loss' must be sub classes of `paddle.nn.Layer` or any callable function.")
        self._optimizer, self._loss = optimizer, loss
        self._metrics = _list(metrics) if metrics is not None else []
        for metric in self._metrics:
            if not all(hasattr(metric, a) for a in ("update", "accumulate", "reset", "name")):
                raise TypeError(f"{type(metric).__name__} is not sub class of paddle.metric.Metric")
        if not in_dynamic_mode():
            from .static_adapter import StaticAdapter

            self._adapter = StaticAdapter(self)

    def parameters(self, *args, **kwargs) -> list:
        return self.network.parameters(*args, **kwargs)

    def summary(self, input_size=None, dtype=None) -> dict:
        """paddle.summary of the network over input_size (shapes or InputSpecs), by default the input specs."""
        size = _shapes_of(input_size if input_size is not None else self._inputs or [])
        if not size:
            raise ValueError("Model.summary: expected input_size (or inputs given to Model)")
        return _summary(self.network, size if len(size) > 1 else size[0], dtype)

    def _forward_arity(self) -> int | None:
        """How many inputs forward takes (Paddle builds the inputs from its parameters), None for *args."""
        params = inspect.signature(self.network.forward).parameters.values()
        if any(p.kind == p.VAR_POSITIONAL for p in params):
            return None
        return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty for p in params)

    def _split(self, batch) -> tuple[list, list]:
        fields = _list(batch)
        if self._adapter is not None:  # arrays for the feed
            n = len(_list(self._inputs))
            return fields[:n], fields[n:]
        if self._inputs is not None:
            n = len(_list(self._inputs))
        else:
            n = len(fields) - (len(_list(self._labels)) if self._labels is not None else (1 if self._loss else 0))
        return [f if isinstance(f, Tensor) else to_tensor(f) for f in fields[:n]], [
            f if isinstance(f, Tensor) else to_tensor(f) for f in fields[n:]
        ]

    # -- one batch ---------------------------------------------------------------------------------
    def _gathered(self, value) -> np.ndarray:
        """value's rows from every trainer, in rank order (the value itself with one trainer)."""
        if self._nranks == 1:
            return _numpy(value)
        from ..distributed.collective import all_gather

        init_parallel_env()  # static mode: joined already when the startup program trains (else here)
        parts: list = []
        all_gather(parts, value if isinstance(value, Tensor) else Tensor(np.asarray(value)))
        return np.concatenate([p.numpy() for p in parts])

    def _metric_logs(self, outputs, labels, logs) -> None:
        for metric in self._metrics:
            computed = metric.compute(*(outputs + labels)) if hasattr(metric, "compute") else outputs + labels
            result = metric.update(*[self._gathered(m) for m in _list(computed)])
            names = _list(metric.name())
            results = _list(result)
            for name, value in zip(names, results):
                logs[name] = value

    def _static_batch(self, mode: str, inputs, labels):
        losses, groups = self._adapter.run(mode, _list(inputs) + (_list(labels) if labels is not None else []))
        logs: dict = {}
        for metric, computed in zip(self._metrics, groups):
            for name, value in zip(_list(metric.name()), _list(metric.update(*map(self._gathered, computed)))):
                logs[name] = value
        return [np.asarray(loss) for loss in losses], logs

    def train_batch(self, inputs, labels=None):
        """One step: forward, loss, backward, optimizer step; ([loss], metrics) as Paddle's."""
        if self._adapter is not None:
            return self._static_batch("train", inputs, labels)
        self.network.train()
        outputs = _list(self._forward(*_list(inputs)))
        labels = _list(labels) if labels is not None else []
        losses = _list(self._loss(*(outputs + labels)))
        total = losses[0] if len(losses) == 1 else sum(losses[1:], losses[0])
        total.backward()
        self._optimizer.step()
        self._optimizer.clear_grad()
        logs: dict = {}
        self._metric_logs(outputs, labels, logs)
        return [_numpy(loss) for loss in losses], logs

    @no_grad()
    def eval_batch(self, inputs, labels=None):
        if self._adapter is not None:
            return self._static_batch("eval", inputs, labels)
        self.network.eval()
        outputs = _list(self.network(*_list(inputs)))
        labels = _list(labels) if labels is not None else []
        losses = _list(self._loss(*(outputs + labels))) if self._loss else []
        logs: dict = {}
        self._metric_logs(outputs, labels, logs)
        return [_numpy(loss) for loss in losses], logs

    @no_grad()
    def predict_batch(self, inputs):
        if self._adapter is not None:
            return [np.asarray(o) for o in self._adapter.run("predict", _list(inputs))[0]]
        self.network.eval()
        return [_numpy(o) for o in _list(self.network(*_list(inputs)))]

    # -- loops -------------------------------------------------------------------------------------
    def _loader(self, data, batch_size, shuffle, drop_last, num_workers):
        if data is None or isinstance(data, (DataLoader, MapDataLoader)):
            return data
        if isinstance(data, Dataset) and self._nranks > 1:  # each trainer its share
            sampler = DistributedBatchSampler(data, batch_size, shuffle=shuffle, drop_last=drop_last)
            return DataLoader(data, batch_sampler=sampler, num_workers=num_workers)
        if isinstance(data, Dataset):
            return DataLoader(
                data, batch_size=batch_size, shuffle=shuffle, drop_last=drop_last, num_workers=num_workers
            )
        raise TypeError(f"Model: expected a paddle.io.Dataset or DataLoader, got {type(data).__name__}")

    def _callbacks(self, callbacks, verbose, log_freq, params) -> list[Callback]:
        cbks = _list(callbacks) if callbacks is not None else []
        if not any(isinstance(c, ProgBarLogger) for c in cbks):
            cbks.insert(0, ProgBarLogger(log_freq, verbose=verbose if self._rank == 0 else 0))
        for c in cbks:
            c.set_model(self)
            c.set_params(params)
        return cbks

    def _metric_names(self) -> list[str]:
        return ["loss"] + [n for m in self._metrics for n in _list(m.name())]

    def fit(self, train_data=None, eval_data=None, batch_size=1, epochs=1, eval_freq=1, log_freq=10, save_dir=None,
            save_freq=1, verbose=2, drop_last=False, shuffle=True, num_workers=0, callbacks=None):  # fmt: skip
        """Train for `epochs` over train_data (a Dataset or DataLoader), evaluating on eval_data every
        eval_freq epochs and saving to save_dir every save_freq epochs, with a progress line per log_freq steps."""
        if self._optimizer is None or self._loss is None:
            raise FleetgraphError("Model.fit: call prepare(optimizer, loss, metrics) first")
        loader = self._loader(train_data, batch_size, shuffle, drop_last, num_workers)
        eval_loader = self._loader(eval_data, batch_size, False, False, num_workers)
        steps = len(loader) if hasattr(loader, "__len__") else None
        params = {"batch_size": batch_size, "epochs": epochs, "steps": steps, "verbose": verbose,
                  "metrics": self._metric_names(), "save_dir": save_dir}  # fmt: skip
        cbks = self._callbacks(callbacks, verbose, log_freq, params)
        if save_dir:
            from .callbacks import ModelCheckpoint

            if not any(isinstance(c, ModelCheckpoint) for c in cbks):
                cbks.append(ModelCheckpoint(save_freq, save_dir))
                cbks[-1].set_model(self)
                cbks[-1].set_params(params)
        self.stop_training = False
        for c in cbks:
            c.on_train_begin()
        for epoch in range(epochs):
            for c in cbks:
                c.on_epoch_begin(epoch)
            for m in self._metrics:
                m.reset()
            logs: dict = {}
            for step, batch in enumerate(loader):
                for c in cbks:
                    c.on_train_batch_begin(step)
                losses, logs = self.train_batch(*self._split(batch))
                logs.update(loss=losses, step=step, batch_size=len(_numpy(_list(batch)[0])))
                for c in cbks:
                    c.on_train_batch_end(step, logs)
            for c in cbks:
                c.on_epoch_end(epoch, logs)
            if eval_loader is not None and (epoch + 1) % eval_freq == 0:
                self._evaluate(eval_loader, cbks, verbose)
            if self.stop_training:
                break
        for c in cbks:
            c.on_train_end()

    def evaluate(self, eval_data, batch_size=1, log_freq=10, verbose=2, num_workers=0, callbacks=None) -> dict:
        """The loss and metrics over eval_data: {'loss': [value], 'acc': value, ...}."""
        loader = self._loader(eval_data, batch_size, False, False, num_workers)
        params = {"batch_size": batch_size, "verbose": verbose, "metrics": self._metric_names()}
        return self._evaluate(loader, self._callbacks(callbacks, verbose, log_freq, params), verbose)

    def _evaluate(self, loader, cbks, verbose) -> dict:
        steps = len(loader) if hasattr(loader, "__len__") else None
        for c in cbks:
            c.on_eval_begin({"steps": steps, "metrics": self._metric_names()})
        for m in self._metrics:
            m.reset()
        total, count, samples, logs = 0.0, 0, 0, {}
        for step, batch in enumerate(loader):
            for c in cbks:
                c.on_eval_batch_begin(step)
            losses, logs = self.eval_batch(*self._split(batch))
            if losses:
                total, count = total + float(np.sum([loss.sum() for loss in losses])), count + 1
                logs["loss"] = losses
            samples += len(_numpy(_list(batch)[0]))
            for c in cbks:
                c.on_eval_batch_end(step, logs)
        result = {"loss": [total / max(count, 1)]} if count else {}
        for m in self._metrics:
            for name, value in zip(_list(m.name()), _list(m.accumulate())):
                result[name] = value
        for c in cbks:
            c.on_eval_end({**result, "samples": samples})
        return result

    def predict(self, test_data, batch_size=1, num_workers=0, stack_outputs=False, verbose=1, callbacks=None) -> list:
        """The network's outputs over test_data: one list per output, of batches (or stacked)."""
        loader = self._loader(test_data, batch_size, False, False, num_workers)
        cbks = self._callbacks(callbacks, verbose, 10, {"batch_size": batch_size, "verbose": verbose})
        for c in cbks:
            c.on_predict_begin()
        outputs, samples = None, 0
        for step, batch in enumerate(loader):
            fields = _list(batch)
            count = len(_list(self._inputs)) if self._inputs is not None else self._forward_arity()
            inputs = fields if count is None else fields[:count]
            outs = self.predict_batch(
                inputs if self._adapter else [f if isinstance(f, Tensor) else to_tensor(f) for f in inputs]
            )
            outputs = [[] for _ in outs] if outputs is None else outputs
            for held, out in zip(outputs, outs):
                held.append(out)
            samples += len(outs[0])
            for c in cbks:
                c.on_predict_batch_end(step)
        for c in cbks:
            c.on_predict_end({"samples": samples})
        outputs = outputs or []
        return [np.vstack(o) for o in outputs] if stack_outputs else outputs

    # -- saving ------------------------------------------------------------------------------------
    def save(self, path: str, training: bool = True) -> None:
        """training: path.pdparams (and path.pdopt); else an inference model of the network, the files
        paddle.static.save_inference_model writes (paddle.jit.save in dynamic mode, the predict program
        in static mode). Under the launcher only trainer 0 writes."""
        if self._rank != 0:
            return
        if not os.path.basename(path):
            raise ValueError(f"Model.save: path expected 'dirname/file_prefix' or 'file_prefix', got {path!r}")
        if os.path.dirname(path):
            os.makedirs(os.path.dirname(path), exist_ok=True)
        if self._adapter is not None:
            if training:
                self._adapter.save(path)
            else:
                self._adapter.save_inference_model(path)
            return
        if not training:
            from ..jit import save as jit_save

            if self._inputs is None:
                raise ValueError("Model.save(training=False): expected Model(network, inputs=[InputSpec...])")
            jit_save(self.network, path, input_spec=_list(self._inputs))
            return
        _save(self.network.state_dict(), path + ".pdparams")
        if self._optimizer is not None:
            _save(self._optimizer.state_dict(), path + ".pdopt")

    def load(self, path: str, skip_mismatch: bool = False, reset_optimizer: bool = False) -> None:
        if self._adapter is not None:
            if skip_mismatch or reset_optimizer:
                raise NotImplementedError("Model.load in static mode: skip_mismatch and reset_optimizer are not built")
            self._adapter.load(path)
            return
        state = _load(path + ".pdparams")
        own = self.network.state_dict()
        if skip_mismatch:
            state = {k: v for k, v in state.items() if k in own and tuple(np.shape(_numpy(v))) == tuple(own[k].shape)}
        self.network.set_state_dict(state)
        if not reset_optimizer and self._optimizer is not None and os.path.exists(path + ".pdopt"):
            self._optimizer.set_state_dict(_load(path + ".pdopt"))
