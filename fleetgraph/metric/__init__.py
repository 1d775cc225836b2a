"""`paddle.metric`: Paddle 2.0's metrics (Accuracy, Precision, Recall, Auc on the Metric base) and
the accuracy layer function."""

from . import metrics
from .metrics import Accuracy, Auc, Metric, Precision, Recall, accuracy

__all__ = ["Metric", "Accuracy", "Precision", "Recall", "Auc", "accuracy", "metrics"]
