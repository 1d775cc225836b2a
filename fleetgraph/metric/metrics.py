"""`paddle.metric.metrics`: Paddle 2.0's metrics (python/paddle/metric/metrics.py), each with
`compute` (a graph step, on Tensors or static Variables), `update` (a batch's NumPy results into the
running counts), `accumulate` (the value so far), `reset` and `name`. Precision, Recall and Auc count
as fluid.metrics' accumulators do, whose counting they reuse."""

from __future__ import annotations

import abc

import numpy as np

from .. import layers
from ..dygraph.tensor import Tensor
from ..fluid import metrics as fluid_metrics
from ..layers.nn import accuracy_v2 as accuracy

__all__ = ["Metric", "Accuracy", "Precision", "Recall", "Auc", "accuracy"]


def _numpy(value, what: str) -> np.ndarray:
    """A Tensor's or an array's values (what Paddle 2.0's update takes), anything else refused."""
    if isinstance(value, Tensor):
        return value.numpy()
    if not isinstance(value, (np.ndarray, np.generic)):
        raise ValueError(f"The '{what}' must be a numpy ndarray or Tensor.")
    return value


class Metric(abc.ABC):
    """The base of paddle.metric's metrics: subclasses define reset, update, accumulate and name;
    `compute` (the step that runs in the graph) hands its arguments on to update unchanged."""

    @abc.abstractmethod
    def reset(self):
        raise NotImplementedError(f"function 'reset' not implemented in {type(self).__name__}.")

    @abc.abstractmethod
    def update(self, *args):
        raise NotImplementedError(f"function 'update' not implemented in {type(self).__name__}.")

    @abc.abstractmethod
    def accumulate(self):
        raise NotImplementedError(f"function 'accumulate' not implemented in {type(self).__name__}.")

    @abc.abstractmethod
    def name(self):
        raise NotImplementedError(f"function 'name' not implemented in {type(self).__name__}.")

    def compute(self, *args):
        return args


class Accuracy(Metric):
    """Top-k accuracy for each k of `topk`: compute marks, per sample, which of the maxk best
    classes is the label (float32, [..., maxk]); update counts them."""

    def __init__(self, topk=(1,), name=None):
        self.topk = topk
        self.maxk = max(topk)
        name = name or "acc"
        self._name = [f"{name}_top{k}" for k in topk] if self.maxk != 1 else [name]
        self.reset()

    def compute(self, pred, label, *args):
        _, order = layers.argsort(pred, descending=True)
        pred = layers.slice(order, axes=[len(pred.shape) - 1], starts=[0], ends=[self.maxk])
        if len(label.shape) == 1 or (len(label.shape) == 2 and label.shape[-1] == 1):
            label = layers.reshape(label, (-1, 1))
        elif label.shape[-1] != 1:  # one-hot (or soft) labels: the best class
            label = layers.unsqueeze(layers.argmax(label, axis=-1), [-1])
        correct = layers.equal(pred, layers.cast(label, order.dtype))
        return layers.cast(correct, "float32")

    def update(self, correct, *args):
        correct = correct.numpy() if isinstance(correct, Tensor) else correct
        num_samples = np.prod(np.array(correct.shape[:-1]))
        accs = []
        for i, k in enumerate(self.topk):
            num_corrects = correct[..., :k].sum()
            accs.append(float(num_corrects) / num_samples)
            self.total[i] += num_corrects
            self.count[i] += num_samples
        return accs[0] if len(self.topk) == 1 else accs

    def reset(self):
        self.total = [0.0] * len(self.topk)
        self.count = [0] * len(self.topk)

    def accumulate(self):
        res = [float(t) / c if c > 0 else 0.0 for t, c in zip(self.total, self.count)]
        return res[0] if len(self.topk) == 1 else res

    def name(self):
        return self._name


class _Counted(Metric):
    """Paddle 2.0's face on a fluid.metrics accumulator (the other base): its eval is accumulate,
    reset zeroes its public counts."""

    def reset(self):
        fluid_metrics.MetricBase.reset(self)

    def accumulate(self):
        return self.eval()

    def name(self):
        return self._name


class Precision(_Counted, fluid_metrics.Precision):
    """tp / (tp + fp) of a binary classifier; a prediction counts as positive from 0.5 up (Paddle
    2.0 rounds with floor(p + 0.5), where fluid's rint sends 0.5 to 0)."""

    def __init__(self, name="precision"):
        fluid_metrics.Precision.__init__(self, name)

    def update(self, preds, labels):
        preds = np.floor(_numpy(preds, "preds") + 0.5)
        fluid_metrics.Precision.update(self, preds, _numpy(labels, "labels"))


class Recall(_Counted, fluid_metrics.Recall):
    """tp / (tp + fn) of a binary classifier, its predictions rounded to 0 or 1."""

    def __init__(self, name="recall"):
        fluid_metrics.Recall.__init__(self, name)

    def update(self, preds, labels):
        fluid_metrics.Recall.update(self, _numpy(preds, "preds"), _numpy(labels, "labels"))


class Auc(_Counted, fluid_metrics.Auc):
    """ROC AUC of the positive-class scores `preds[:, 1]`, bucketed into num_thresholds + 1 bins."""

    def __init__(self, curve="ROC", num_thresholds=4095, name="auc"):
        if curve != "ROC":
            raise NotImplementedError(f"Auc: curve={curve!r}; only 'ROC' is computed (as Paddle 2.0's update)")
        fluid_metrics.Auc.__init__(self, name, curve, num_thresholds)
        self.reset()

    def update(self, preds, labels):
        fluid_metrics.Auc.update(self, _numpy(preds, "preds"), _numpy(labels, "labels"))

    def reset(self):
        self._stat_pos = np.zeros(self._num_thresholds + 1)
        self._stat_neg = np.zeros(self._num_thresholds + 1)
