"""fluid.metrics as Paddle 1.8's: the accumulators' values on the examples of Paddle's docstrings,
their state (reset, get_config), their argument checks, and Auc agreeing with the auc op."""

from __future__ import annotations

import numpy as np
import pytest

import fleetgraph.fluid as fluid
from fleetgraph.ir import Program, program_guard

M = fluid.metrics

# the docstrings' binary predictions: 3 of the 5 predicted positives are right, 3 of the 4 positives found
_PREDS = np.array([[0.1], [0.7], [0.8], [0.9], [0.2], [0.2], [0.3], [0.5], [0.8], [0.6]])
_LABELS = np.array([[0], [1], [1], [1], [1], [0], [0], [0], [0], [0]])


def test_precision_and_recall_of_the_docstring_example():
    precision, recall = M.Precision(), M.Recall()
    precision.update(preds=_PREDS, labels=_LABELS)
    recall.update(preds=_PREDS, labels=_LABELS)
    assert precision.eval() == pytest.approx(3.0 / 5.0)
    assert recall.eval() == pytest.approx(3.0 / 4.0)
    assert (precision.tp, precision.fp, recall.tp, recall.fn) == (3, 2, 3, 1)


def test_composite_metric_updates_and_evaluates_each_metric():
    comp = M.CompositeMetric()
    comp.add_metric(M.Precision())
    comp.add_metric(M.Recall())
    comp.update(preds=_PREDS, labels=_LABELS)
    assert comp.eval() == pytest.approx([0.6, 0.75])
    with pytest.raises(ValueError, match="MetricBase"):
        comp.add_metric(object())


def test_accuracy_is_the_batch_weighted_mean_and_reset_starts_over():
    acc = M.Accuracy()
    acc.update(value=0.9, weight=128)
    assert acc.eval() == pytest.approx(0.9)
    acc.update(value=0.8, weight=128)
    assert acc.eval() == pytest.approx(0.85)
    acc.reset()
    assert (acc.value, acc.weight) == (0.0, 0.0)
    with pytest.raises(ValueError, match="no data"):
        acc.eval()
    acc.update(value=0.8, weight=128)
    assert acc.eval() == pytest.approx(0.8)
    with pytest.raises(ValueError, match="negative"):
        acc.update(value=0.5, weight=-1)


def test_chunk_evaluator_accumulates_chunk_counts():
    metric = M.ChunkEvaluator()
    metric.update(10, 9, 8)
    precision, recall, f1 = metric.eval()
    assert (precision, recall) == pytest.approx((0.8, 8 / 9))
    assert f1 == pytest.approx(2 * 0.8 * (8 / 9) / (0.8 + 8 / 9))
    metric.update(3, 3, 3)
    assert metric.eval() == pytest.approx((11 / 13, 11 / 12, 2 * (11 / 13) * (11 / 12) / (11 / 13 + 11 / 12)))
    assert M.ChunkEvaluator().eval() == (0, 0, 0)


def test_edit_distance_averages_distances_and_counts_wrong_sequences():
    metric = M.EditDistance("edit")
    metric.update(np.array([[0.0], [2.0], [1.0], [0.0]]), 4)
    assert metric.eval() == pytest.approx((0.75, 0.5))
    metric.update(np.array([[3.0]]), 1)
    assert metric.eval() == pytest.approx((6 / 5, 3 / 5))
    with pytest.raises(ValueError, match="seq_num"):
        metric.update(np.array([[1.0]]), "one")


def test_auc_metric_agrees_with_the_auc_layer():
    rng = np.random.default_rng(0)
    p = rng.uniform(0, 1, 64)
    preds = np.stack([1 - p, p], axis=1)
    labels = (rng.uniform(0, 1, (64, 1)) < p[:, None]).astype("int64")
    metric = M.Auc("auc", num_thresholds=200)
    metric.update(preds=preds, labels=labels)
    main, startup = Program(), Program()
    with program_guard(main, startup):
        auc, _, _ = fluid.layers.auc(
            fluid.data("p", [-1, 2], "float64"), fluid.data("l", [-1, 1], "int64"), num_thresholds=200
        )
    exe = fluid.Executor()
    exe.run(startup)
    (want,) = exe.run(main, feed={"p": preds, "l": labels}, fetch_list=[auc])
    assert metric.eval() == pytest.approx(float(want[0]))
    assert 0.5 < metric.eval() < 1.0


def test_metric_state_is_its_public_attributes():
    metric = M.Precision("my_precision")
    metric.update(_PREDS, _LABELS)
    assert str(metric) == "my_precision"
    assert metric.get_config() == {"name": "my_precision", "states": {"tp": 3, "fp": 2}}
    metric.reset()
    assert (metric.tp, metric.fp) == (0, 0)
    assert str(M.Recall()) == "Recall"


def test_metric_base_and_detection_map_say_what_they_lack():
    with pytest.raises(NotImplementedError):
        M.MetricBase("base").eval()
    with pytest.raises(NotImplementedError, match="DetectionMAP.*detection"):
        M.DetectionMAP(None, None, None, class_num=21)
    with pytest.raises(ValueError, match="numpy"):
        M.Precision().update([[1]], _LABELS)


def test_module_exports_paddles_names():
    paddles = "MetricBase CompositeMetric Precision Recall Accuracy ChunkEvaluator EditDistance Auc"
    assert M.__all__ == paddles.split()
    assert M.Program is Program and callable(M.program_guard) and M.Constant is not None
