"""`paddle.amp.decorate` (Paddle 2.3's amp_decorate) for bfloat16 on the CPU: at level O2 the models'
floating parameters and buffers become bfloat16 (batch norms' stay float32, as Paddle's) and the
optimizers keep float32 master weights of them (optimizer/master_weights.py); level O1 changes
nothing. float16 parameters would need float16 kernels, which fleetgraph's CPU places (as Paddle's
CPU build) lack, so O2 with float16 is refused."""

from __future__ import annotations

from ..dygraph import mode
from ..dygraph.tensor import Tensor
from ..ir.dtypes import BFLOAT16
from ..nn import BatchNorm, BatchNorm1D, BatchNorm2D, BatchNorm3D, Layer, SyncBatchNorm
from ..optimizer.base import Optimizer
from .auto_cast import require_dynamic_mode

_KEEP_FLOAT32 = (BatchNorm, BatchNorm1D, BatchNorm2D, BatchNorm3D, SyncBatchNorm)
_OPTIMIZERS = "optimizers must be either a single optimizer or a list of optimizers."


def decorate(models, optimizers=None, level="O1", dtype="float16", master_weight=None, save_dtype=None):
    """Models (and optimizers) for mixed-precision training, returned as given (one or a list each):
    O1 leaves them as they are; O2 with dtype='bfloat16' casts the models' float32 parameters to
    bfloat16 and, unless master_weight is False, has the optimizers update float32 master weights."""
    require_dynamic_mode("amp_decorate")
    if level not in ("O1", "O2"):
        raise ValueError("level should be O1 or O2, O1 represent AMP train mode, O2 represent Pure fp16 train mode.")
    if dtype not in ("float16", "bfloat16"):
        raise ValueError("dtype only support float16 or bfloat16.")
    if save_dtype is not None:
        raise NotImplementedError(
            f"decorate: save_dtype={save_dtype!r} (casting state_dict on save) is not built; expected None"
        )
    if level == "O1":
        return models if optimizers is None else (models, optimizers)
    if dtype == "float16":
        raise NotImplementedError(
            "decorate(level='O2', dtype='float16'): float16 parameters need float16 kernels, which fleetgraph's "
            "CPU places (as Paddle's CPU build) have none of; use dtype='bfloat16'"
        )
    if mode.array_module().__name__ != "numpy":
        raise RuntimeError(
            "decorate(dtype='bfloat16'): bfloat16 parameters live on the CPU place (NumPy with ml_dtypes); the "
            f"current place computes with {mode.array_module().__name__}"
        )
    model_list = _as_list(models, Layer, "models must be either a single model or a list of models.")
    opt_list = [] if optimizers is None else _as_list(optimizers, Optimizer, _OPTIMIZERS)
    for model in model_list:  # checked all before changing any
        for layer in model.sublayers(include_self=True):
            if not isinstance(layer, _KEEP_FLOAT32):
                _cast_floats(layer)
    for opt in opt_list:
        opt._multi_precision = master_weight is not False
    return models if optimizers is None else (models, optimizers)


def _as_list(value, kind, message: str) -> list:
    values = value if isinstance(value, list) else [value]
    for v in values:
        if not isinstance(v, kind):
            raise TypeError(f"{message} Got {type(v).__name__}")
    # DataParallel (distributed's, fluid.dygraph's) sits above or beside amp: known by its name here
    if kind is Layer and any(type(v).__name__ == "DataParallel" for v in values):
        raise RuntimeError(
            "For distributed AMP training, you should first use paddle.amp.decorate() to decorate origin model, "
            "and then call paddle.DataParallel get distributed model."
        )
    return values


def _cast_floats(layer: Layer) -> None:
    """The layer's own float32 parameters and buffers, as bfloat16 in place (the same Tensors, so the
    optimizers' parameter lists still hold them)."""
    for t in list(layer._parameters.values()) + list(layer._buffers.values()):
        if isinstance(t, Tensor) and t.value is not None and t.dtype == "float32":
            t.value = t.value.astype(BFLOAT16)
    layer._dtype = "bfloat16"
