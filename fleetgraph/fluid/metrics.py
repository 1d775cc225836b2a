"""`fluid.metrics`: Python-side metrics that accumulate over mini-batches (Paddle 1.8's
python/paddle/fluid/metrics.py): each keeps its counts in public attributes, which `reset` zeroes
and `get_config` copies, `update` adds a batch's NumPy results and `eval` says the value so far."""

from __future__ import annotations

import copy

import numpy as np

from .. import absent, layers  # noqa: F401  (Paddle's module imports these, and so exports them)
from ..initializer import Constant  # noqa: F401
from ..ir import Program, Variable, program_guard, unique_name  # noqa: F401

__all__ = [
    "MetricBase",
    "CompositeMetric",
    "Precision",
    "Recall",
    "Accuracy",
    "ChunkEvaluator",
    "EditDistance",
    "Auc",
]


def _is_numpy_(var) -> bool:
    return isinstance(var, (np.ndarray, np.generic))


def _is_number_(var) -> bool:
    return isinstance(var, (int, float, np.int64)) or (isinstance(var, np.ndarray) and var.shape == (1,))


def _is_number_or_matrix_(var) -> bool:
    return _is_number_(var) or isinstance(var, np.ndarray)


def _check(value, test, message: str) -> None:
    if not test(value):
        raise ValueError(message)


class MetricBase:
    """The base of the metrics: its public attributes are its state."""

    def __init__(self, name):
        self._name = str(name) if name is not None else self.__class__.__name__

    def __str__(self) -> str:
        return self._name

    def _states(self) -> dict:
        return {attr: value for attr, value in self.__dict__.items() if not attr.startswith("_")}

    def reset(self) -> None:
        """Each state back to zero of its kind (None for one that is no number or array)."""
        for attr, value in self._states().items():
            if isinstance(value, int):
                setattr(self, attr, 0)
            elif isinstance(value, float):
                setattr(self, attr, 0.0)
            elif isinstance(value, (np.ndarray, np.generic)):
                setattr(self, attr, np.zeros_like(value))
            else:
                setattr(self, attr, None)

    def get_config(self) -> dict:
        return {"name": self._name, "states": copy.deepcopy(self._states())}

    def update(self, preds, labels):
        raise NotImplementedError("Should not use it directly, please extend it.")

    def eval(self):
        raise NotImplementedError("Should not use it directly, please extend it.")


class CompositeMetric(MetricBase):
    """Several metrics updated with the same arguments; eval lists their values."""

    def __init__(self, name=None):
        super().__init__(name)
        self._metrics = []

    def add_metric(self, metric) -> None:
        if not isinstance(metric, MetricBase):
            raise ValueError("SubMetric should be inherit from MetricBase.")
        self._metrics.append(metric)

    def update(self, preds, labels) -> None:
        for m in self._metrics:
            m.update(preds, labels)

    def eval(self) -> list:
        return [m.eval() for m in self._metrics]


def _binary_counts(preds, labels):
    """(rounded predictions, labels) per sample of a binary classifier's NumPy outputs."""
    _check(preds, _is_numpy_, "The 'preds' must be a numpy ndarray.")
    _check(labels, _is_numpy_, "The 'labels' must be a numpy ndarray.")
    rounded = np.rint(preds).astype("int32")
    return [(rounded[i], labels[i]) for i in range(labels.shape[0])]


class Precision(MetricBase):
    """tp / (tp + fp) of a binary classifier, its predictions rounded to 0 or 1."""

    def __init__(self, name=None):
        super().__init__(name)
        self.tp = 0  # true positives
        self.fp = 0  # false positives

    def update(self, preds, labels) -> None:
        for pred, label in _binary_counts(preds, labels):
            if pred == 1:
                if pred == label:
                    self.tp += 1
                else:
                    self.fp += 1

    def eval(self) -> float:
        ap = self.tp + self.fp
        return float(self.tp) / ap if ap != 0 else 0.0


class Recall(MetricBase):
    """tp / (tp + fn) of a binary classifier, its predictions rounded to 0 or 1."""

    def __init__(self, name=None):
        super().__init__(name)
        self.tp = 0  # true positives
        self.fn = 0  # false negatives

    def update(self, preds, labels) -> None:
        for pred, label in _binary_counts(preds, labels):
            if label == 1:
                if pred == label:
                    self.tp += 1
                else:
                    self.fn += 1

    def eval(self) -> float:
        recall = self.tp + self.fn
        return float(self.tp) / recall if recall != 0 else 0.0


class Accuracy(MetricBase):
    """The weighted mean of the batches' accuracies (layers.accuracy's output, weighted by batch size)."""

    def __init__(self, name=None):
        super().__init__(name)
        self.value = 0.0
        self.weight = 0.0

    def update(self, value, weight) -> None:
        _check(value, _is_number_or_matrix_, "The 'value' must be a number(int, float) or a numpy ndarray.")
        _check(weight, _is_number_, "The 'weight' must be a number(int, float).")
        if weight < 0:
            raise ValueError("The 'weight' can not be negative")
        self.value += value * weight
        self.weight += weight

    def eval(self):
        if self.weight == 0:
            raise ValueError(
                "There is no data in Accuracy Metrics. Please check layers.accuracy output has added to Accuracy."
            )
        return self.value / self.weight


class ChunkEvaluator(MetricBase):
    """Precision, recall and F1 of chunks summed over batches (layers.chunk_eval's counts)."""

    def __init__(self, name=None):
        super().__init__(name)
        self.num_infer_chunks = 0
        self.num_label_chunks = 0
        self.num_correct_chunks = 0

    def update(self, num_infer_chunks, num_label_chunks, num_correct_chunks) -> None:
        for what, v in (
            ("num_infer_chunks", num_infer_chunks),
            ("num_label_chunks", num_label_chunks),
            ("num_correct_chunks", num_correct_chunks),
        ):
            _check(v, _is_number_or_matrix_, f"The '{what}' must be a number(int) or a numpy ndarray.")
        self.num_infer_chunks += num_infer_chunks
        self.num_label_chunks += num_label_chunks
        self.num_correct_chunks += num_correct_chunks

    def eval(self) -> tuple:
        precision = float(self.num_correct_chunks) / self.num_infer_chunks if self.num_infer_chunks else 0
        recall = float(self.num_correct_chunks) / self.num_label_chunks if self.num_label_chunks else 0
        f1 = float(2 * precision * recall) / (precision + recall) if self.num_correct_chunks else 0
        return precision, recall, f1


class EditDistance(MetricBase):
    """The mean edit distance per sequence and the fraction of sequences not exactly right
    (layers.edit_distance's outputs)."""

    def __init__(self, name):
        super().__init__(name)
        self.total_distance = 0.0
        self.seq_num = 0
        self.instance_error = 0

    def update(self, distances, seq_num) -> None:
        _check(distances, _is_numpy_, "The 'distances' must be a numpy ndarray.")
        _check(seq_num, _is_number_, "The 'seq_num' must be a number(int, float).")
        self.seq_num += seq_num
        self.instance_error += seq_num - np.sum(distances == 0)
        self.total_distance += np.sum(distances)

    def eval(self) -> tuple:
        if self.seq_num == 0:
            raise ValueError(
                "There is no data in EditDistance Metric. Please check layers.edit_distance output has been "
                "added to EditDistance."
            )
        return self.total_distance / self.seq_num, self.instance_error / float(self.seq_num)


class Auc(MetricBase):
    """ROC AUC from histograms of the positive-class scores `preds[:, 1]` in num_thresholds + 1
    buckets, integrated by trapezoids from the highest bucket down (as the auc op)."""

    def __init__(self, name, curve="ROC", num_thresholds=4095):
        super().__init__(name=name)
        self._curve = curve
        self._num_thresholds = num_thresholds
        self._stat_pos = [0] * (num_thresholds + 1)
        self._stat_neg = [0] * (num_thresholds + 1)

    def update(self, preds, labels) -> None:
        _check(labels, _is_numpy_, "The 'labels' must be a numpy ndarray.")
        _check(preds, _is_numpy_, "The 'predictions' must be a numpy ndarray.")
        for i, label in enumerate(labels):
            bucket = int(preds[i, 1] * self._num_thresholds)
            if not 0 <= bucket <= self._num_thresholds:
                raise ValueError(f"Auc.update: preds[{i}, 1] is {preds[i, 1]}; expected a probability in [0, 1]")
            if label:
                self._stat_pos[bucket] += 1.0
            else:
                self._stat_neg[bucket] += 1.0

    @staticmethod
    def trapezoid_area(x1, x2, y1, y2):
        return abs(x1 - x2) * (y1 + y2) / 2.0

    def eval(self) -> float:
        tot_pos = tot_neg = auc = 0.0
        for idx in range(self._num_thresholds, -1, -1):
            prev_pos, prev_neg = tot_pos, tot_neg
            tot_pos += self._stat_pos[idx]
            tot_neg += self._stat_neg[idx]
            auc += self.trapezoid_area(tot_neg, prev_neg, tot_pos, prev_pos)
        return auc / tot_pos / tot_neg if tot_pos > 0.0 and tot_neg > 0.0 else 0.0


__getattr__ = absent.getattr_for(__name__)  # DetectionMAP and detection: no detection ops here
