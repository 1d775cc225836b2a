"""`paddle.Model`, `paddle.summary` and `paddle.callbacks` (Paddle 2.0's high-level API)."""

from . import callbacks
from .flops import flops
from .model import Model
from .summary import summary

__all__ = ["Model", "callbacks", "flops", "summary"]
