"""`paddle.distributed.fleet.metrics`: metrics over every worker's statistics."""

from .metric import acc, auc, mae, max, min, mse, rmse, sum  # noqa: A004

__all__ = ["acc", "auc", "mae", "max", "min", "mse", "rmse", "sum"]
