"""Fleet metrics: each reads a worker's statistic (an array, a Variable or a variable's name in the
scope), all-reduces it over the workers with `fleet.util`, and computes the job's value, as Paddle's
`paddle.distributed.fleet.metrics` does."""

from __future__ import annotations

import builtins

import numpy as np

from ....executor import global_scope
from ....ir.program import Variable
from ..instance import fleet


def _value(x, scope) -> np.ndarray:
    if isinstance(x, (Variable, str)):
        name = x.name if isinstance(x, Variable) else x
        found = (scope or global_scope()).find_var(name)
        if found is None:
            raise KeyError(f"fleet.metrics: variable {name!r} has no value in the scope")
        return np.array(found.get_tensor())
    return np.asarray(x)


def _reduced(x, scope, util, mode: str = "sum") -> np.ndarray:
    if util is None:
        util = fleet.util
    value = _value(x, scope)
    return np.asarray(util.all_reduce(value.reshape(-1), mode)).reshape(value.shape)


def sum(input, scope=None, util=None) -> np.ndarray:  # noqa: A001
    return _reduced(input, scope, util, "sum")


def max(input, scope=None, util=None) -> np.ndarray:  # noqa: A001
    return _reduced(input, scope, util, "max")


def min(input, scope=None, util=None) -> np.ndarray:  # noqa: A001
    return _reduced(input, scope, util, "min")


def auc(stat_pos, stat_neg, scope=None, util=None) -> float:
    """The ROC AUC of every worker's histograms (paddle.static.auc's stat_pos / stat_neg); 0.5 when
    either class is absent, as Paddle's."""
    pos = _reduced(stat_pos, scope, util).reshape(-1, np.shape(_value(stat_pos, scope))[-1]).sum(axis=0)
    neg = _reduced(stat_neg, scope, util).reshape(-1, np.shape(_value(stat_neg, scope))[-1]).sum(axis=0)
    tp, fp = np.cumsum(pos[::-1], dtype=np.float64), np.cumsum(neg[::-1], dtype=np.float64)
    if tp[-1] == 0 or fp[-1] == 0:
        return 0.5
    area = ((fp - np.concatenate([[0.0], fp[:-1]])) * (tp + np.concatenate([[0.0], tp[:-1]])) / 2).sum()
    return float(area / (tp[-1] * fp[-1]))


def _ratio(numerator, denominator, scope, util) -> float:
    total = float(np.asarray(_reduced(denominator, scope, util)).reshape(-1)[0])
    return float(np.asarray(_reduced(numerator, scope, util)).reshape(-1)[0]) / builtins.max(total, 1e-12)


def mae(abserr, total_ins_num, scope=None, util=None) -> float:
    return _ratio(abserr, total_ins_num, scope, util)


def mse(sqrerr, total_ins_num, scope=None, util=None) -> float:
    return _ratio(sqrerr, total_ins_num, scope, util)


def rmse(sqrerr, total_ins_num, scope=None, util=None) -> float:
    return float(np.sqrt(mse(sqrerr, total_ins_num, scope, util)))


def acc(correct, total, scope=None, util=None) -> float:
    return _ratio(correct, total, scope, util)
