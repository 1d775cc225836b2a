"""paddle.metric as Paddle 2.0's: Accuracy's compute in dynamic and static mode, and the values of
Accuracy, Precision, Recall and Auc on the cases of Paddle 2.0's python/paddle/tests/test_metrics.py."""

from __future__ import annotations

import numpy as np
import pytest

import fleetgraph as paddle
import fleetgraph.fluid as fluid

_X = np.array([[0.1, 0.2, 0.3, 0.4], [0.1, 0.4, 0.3, 0.2], [0.1, 0.2, 0.4, 0.3], [0.1, 0.2, 0.3, 0.4]])
_AUC_X = np.array(
    [[0.78, 0.22], [0.62, 0.38], [0.55, 0.45], [0.30, 0.70], [0.14, 0.86], [0.59, 0.41], [0.91, 0.08], [0.16, 0.84]]
)
_AUC_Y = np.array([[0], [1], [1], [0], [1], [0], [0], [1]])


def _numpy_accuracy(pred, label, topk):
    """test_metrics.py's reference: the share of samples whose label is among the k best classes."""
    pred = np.argsort(pred)[..., ::-1][..., : max(topk)]
    if len(label.shape) == 1:
        label = label.reshape(-1, 1)
    elif label.shape[-1] != 1:
        label = np.argmax(label, axis=-1)[..., np.newaxis]
    correct = pred == label
    total = np.prod(label.shape[:-1])
    return [float(correct[..., :k].sum()) / total for k in topk]


@pytest.mark.parametrize("label_shape", [(4, 1), (4,)])
def test_accuracy_computes_updates_and_accumulates_over_batches(label_shape):
    m = paddle.metric.Accuracy(name="my_acc")
    assert m.name() == ["my_acc"]
    correct = m.compute(paddle.to_tensor(_X), paddle.to_tensor(np.arange(4).reshape(label_shape)))
    assert correct.shape == [4, 1] and correct.dtype == paddle.float32
    assert m.update(correct) == 0.75 and m.accumulate() == 0.75
    x2 = _X.copy()
    x2[1] = [0.1, 0.3, 0.4, 0.2]
    m.update(m.compute(paddle.to_tensor(x2), paddle.to_tensor(np.arange(4).reshape(-1, 1))))
    assert m.accumulate() == 0.625
    m.reset()
    assert m.total == [0.0] and m.count == [0]


def test_accuracy_of_3d_scores_and_one_hot_labels_is_numpys():
    rng = np.random.default_rng(0)
    x = rng.random((2, 3, 4))
    y = rng.integers(4, size=(2, 3))
    m = paddle.metric.Accuracy(topk=(1, 2), name="acc")
    assert m.name() == ["acc_top1", "acc_top2"]
    correct = m.compute(paddle.to_tensor(x), paddle.to_tensor(np.eye(4)[y]))
    assert correct.shape == [2, 3, 2]
    assert m.update(correct) == _numpy_accuracy(x, y[..., None], (1, 2)) == m.accumulate()


def test_accuracy_compute_in_a_static_program_fetches_the_correct_marks():
    paddle.enable_static()
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        pred = fluid.data(name="pred", shape=[None, 10], dtype="float32")
        label = fluid.data(name="label", shape=[None, 1], dtype="int64")
        acc = paddle.metric.Accuracy(topk=(1, 5))
        state = acc.compute(pred, label)
    exe = fluid.Executor(fluid.CPUPlace())
    rng = np.random.default_rng(1)
    x = rng.permuted(np.tile(np.arange(10, dtype="float32") / 10, (50, 1)), axis=1)
    y = rng.integers(10, size=(50, 1)).astype("int64")
    (correct,) = exe.run(main, feed={"pred": x, "label": y}, fetch_list=[state.name])
    assert correct.shape == (50, 5)
    assert acc.update(correct) == _numpy_accuracy(x, y, (1, 5)) == acc.accumulate()


def test_precision_counts_half_as_positive_on_arrays_and_tensors():
    m = paddle.metric.Precision()
    m.update(np.array([0.1, 0.5, 0.6, 0.7]), np.array([1, 0, 1, 1]))
    assert m.accumulate() == pytest.approx(2 / 3)
    m.update(paddle.to_tensor(np.array([0.1, 0.5, 0.6, 0.7, 0.2])), paddle.to_tensor(np.array([1, 0, 1, 1, 1])))
    assert m.accumulate() == pytest.approx(4 / 6)
    m.reset()
    assert (m.tp, m.fp, m.accumulate(), m.name()) == (0, 0, 0.0, "precision")


def test_recall_of_arrays_and_tensors():
    m = paddle.metric.Recall()
    m.update(np.array([0.1, 0.5, 0.6, 0.7]), np.array([1, 0, 1, 1]))
    assert m.accumulate() == pytest.approx(2 / 3)
    m.update(paddle.to_tensor(np.array([0.1, 0.5, 0.6, 0.7])), paddle.to_tensor(np.array([1, 0, 0, 1])))
    assert m.accumulate() == pytest.approx(3 / 5)
    m.reset()
    assert (m.tp, m.fn, m.accumulate(), m.name()) == (0, 0, 0.0, "recall")


@pytest.mark.parametrize("wrap", [np.asarray, paddle.to_tensor])
def test_auc_of_test_metrics_example_and_reset(wrap):
    m = paddle.metric.Auc()
    m.update(wrap(_AUC_X), wrap(_AUC_Y))
    assert m.accumulate() == pytest.approx(0.8125)
    m.reset()
    assert m.accumulate() == 0.0 and m.name() == "auc"


def test_metrics_refuse_what_they_cannot_do():
    with pytest.raises(ValueError, match="'preds' must be a numpy ndarray or Tensor"):
        paddle.metric.Precision().update([0.2], np.array([1]))
    with pytest.raises(NotImplementedError, match="curve='PR'"):
        paddle.metric.Auc(curve="PR")
    with pytest.raises(TypeError):
        paddle.metric.Metric()  # abstract: reset, update, accumulate and name are the subclass's


def test_base_compute_hands_its_arguments_on_and_the_module_is_exported():
    class Count(paddle.metric.Metric):
        reset = update = accumulate = name = lambda self, *a: None

    assert Count().compute(1, 2) == (1, 2)
    assert paddle.metric.metrics.Accuracy is paddle.metric.Accuracy
    assert paddle.metric.accuracy is paddle.metric.metrics.accuracy
