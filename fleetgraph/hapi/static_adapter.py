"""paddle.Model in static mode, as Paddle 2.0's StaticGraphAdapter: the network, loss and metrics built
once per mode into programs over the input and label specs (train: with the optimizer's ops; eval and
predict: the forward cloned for test), run by one Executor on the model's own scope.

Under the launcher the train program is made as Paddle's adapter makes it, by Fleet's collective
optimizer: each gradient is all-reduced and averaged in the program, and the startup program joins
the trainers' ring and broadcasts trainer 0's parameters, so every trainer steps the same parameters."""

from __future__ import annotations

import numpy as np

from ..executor import Executor, Scope, scope_guard
from ..ir import FleetgraphError, default_main_program, default_startup_program, program_guard
from ..ir.clone import clone_program
from ..ir.prune import prune_for_inference
from ..layers.io import data


def _list(value) -> list:
    return list(value) if isinstance(value, (list, tuple)) else [value]


class StaticAdapter:
    def __init__(self, model) -> None:
        if model._inputs is None:
            raise FleetgraphError("paddle.Model in static mode: expected inputs=[InputSpec, ...] (and labels)")
        self.model, self.scope, self.exe = model, Scope(), Executor()
        # the network's parameters live in the default programs, where the layers made them (Paddle's
        # adapter builds on them likewise): each mode's program starts as a copy of the default main
        self.base, self.startup = default_main_program(), default_startup_program()
        self.programs = {}  # mode -> (program, feed names, fetches, metric fetches)
        self._started = False

    def _specs_as_data(self, specs, prefix):
        return [data(s.name or f"{prefix}_{i}", list(s.shape), s.dtype) for i, s in enumerate(_list(specs or []))]

    def _build(self) -> None:
        """The forward once; eval and predict clone it for test; train adds the loss's backward and updates."""
        m = self.model
        main = clone_program(self.base)
        with program_guard(main, self.startup):
            inputs = self._specs_as_data(m._inputs, "input")
            labels = self._specs_as_data(m._labels, "label")
            outputs = _list(m.network(*inputs))
            losses = _list(m._loss(*(outputs + labels))) if m._loss else []
            computed = [_list(metric.compute(*(outputs + labels))) for metric in m._metrics]
        feeds = [v.name for v in inputs + labels]
        test = clone_program(main, for_test=True)
        self.programs["eval"] = (test, feeds, losses, computed)
        predict = prune_for_inference(test, [v.name for v in inputs], [o.name for o in outputs])  # no labels
        self.programs["predict"] = (predict, [v.name for v in inputs], [o.name for o in outputs], [])
        if m._optimizer is not None and losses:
            with program_guard(main, self.startup):
                total = losses[0] if len(losses) == 1 else sum(losses[1:], losses[0])
                self._minimizer().minimize(total, self.startup)
        self.programs["train"] = (main, feeds, losses, computed)

    def _minimizer(self):
        """The model's optimizer; under the launcher, Fleet's collective one wrapping it."""
        if self.model._nranks == 1:
            return self.model._optimizer
        from ..distributed import fleet

        fleet.init(is_collective=True)
        return fleet.distributed_optimizer(self.model._optimizer)

    def _ready(self) -> None:
        """The programs built and the startup program run, once."""
        if not self.programs:
            self._build()
        if not self._started:
            self.exe.run(self.startup, scope=self.scope)
            self._started = True

    def run(self, mode: str, fields: list):
        self._ready()
        program, feeds, fetches, computed = self.programs[mode]
        feed = {name: np.asarray(f.numpy() if hasattr(f, "numpy") else f) for name, f in zip(feeds, fields)}
        flat = [v for group in computed for v in group]
        with scope_guard(self.scope):
            values = self.exe.run(program, feed=feed, fetch_list=list(fetches) + flat, scope=self.scope)
        head, rest = values[: len(fetches)], values[len(fetches) :]
        groups, at = [], 0
        for group in computed:
            groups.append(rest[at : at + len(group)])
            at += len(group)
        return head, groups

    def state_dict(self) -> dict:
        self._ready()
        program = self.programs["train"][0]
        return {p.name: np.array(self.scope.vars[p.name]) for p in program.all_parameters()}

    def save(self, path: str) -> None:
        from ..store.persistence import save

        self._ready()
        with scope_guard(self.scope):
            save(self.programs["train"][0], path)

    def load(self, path: str) -> None:
        from ..store.persistence import load

        self._ready()
        with scope_guard(self.scope):
            load(self.programs["train"][0], path, self.exe)

    def save_inference_model(self, path: str) -> None:
        """The predict program and its parameters as paddle.static.save_inference_model writes them
        (Paddle's adapter saves its test program likewise)."""
        from ..store.persistence import static_save_inference_model

        self._ready()
        program, feeds, fetches, _ = self.programs["predict"]
        with scope_guard(self.scope):
            static_save_inference_model(path, feeds, fetches, self.exe, program)
