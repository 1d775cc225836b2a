"""`fluid.log_helper.get_logger`: a named logger with its own handler, as Paddle's."""

from __future__ import annotations

import logging

__all__ = ["get_logger"]


def get_logger(name: str, level, fmt: str | None = None) -> logging.Logger:
    """A logger `name` at `level` writing to stderr in `fmt`, not propagating to the root logger
    (so a script's logging.basicConfig does not print each record twice)."""
    logger = logging.getLogger(name)
    logger.setLevel(level)
    handler = logging.StreamHandler()
    if fmt:
        handler.setFormatter(logging.Formatter(fmt=fmt))
    logger.addHandler(handler)
    logger.propagate = False
    return logger
