"""`fluid.io`: saving and loading variables and inference models, and the DataLoader."""

from ..io.loader import DataLoader
from ..store.persistence import (
    load_inference_model,
    load_params,
    load_persistables,
    load_vars,
    save_inference_model,
    save_params,
    save_persistables,
    save_vars,
)

__all__ = [
    "DataLoader",
    "load_inference_model",
    "load_params",
    "load_persistables",
    "load_vars",
    "save_inference_model",
    "save_params",
    "save_persistables",
    "save_vars",
]
