"""Logging of dygraph-to-static conversion (Paddle 2.0's dygraph_to_static/logging_utils.py):
`set_verbosity` for messages about what is converted, `set_code_level` for the converted code.

Each setting wins over its environment variable (TRANSLATOR_VERBOSITY, TRANSLATOR_CODE_LEVEL), read
when a message is due. Paddle converts a function through a chain of numbered AST transformers and
can print the code after any one of them; fleetgraph converts it in one pass (dy2static.py), so the
one code there is to print is the final one, Paddle's level 100 (LOG_AllTransformer).
"""

from __future__ import annotations

import logging
import os

VERBOSITY_ENV_NAME, CODE_LEVEL_ENV_NAME = "TRANSLATOR_VERBOSITY", "TRANSLATOR_CODE_LEVEL"
LOG_AllTransformer = 100

_LOGGER_NAME = "Dynamic-to-Static"
_logger = logging.getLogger(_LOGGER_NAME)
_settings: dict = {"verbosity": None, "code_level": None, "log_to_stdout": False, "code_to_stdout": False}


def _check_level(level, where: str) -> None:
    if level is not None and (not isinstance(level, int) or isinstance(level, bool)):
        raise TypeError(f"{where}: level; expected an int (or None: the environment's), got {level!r}")


def _level(key: str, env: str) -> int:
    return _settings[key] if _settings[key] is not None else int(os.getenv(env, "-1"))


def set_verbosity(level=0, also_to_stdout=False) -> None:
    """Log (logger 'Dynamic-to-Static', INFO) each conversion message of level <= `level`; 0 logs none."""
    _check_level(level, "set_verbosity")
    _settings["verbosity"], _settings["log_to_stdout"] = level, bool(also_to_stdout)


def get_verbosity() -> int:
    return _level("verbosity", VERBOSITY_ENV_NAME)


def set_code_level(level=LOG_AllTransformer, also_to_stdout=False) -> None:
    """Log the code of each function dy2static converts when `level` is 100 (the final code; a
    level <= 0 logs none). The levels in between name Paddle's intermediate transformers, which
    fleetgraph does not have: they are refused."""
    _check_level(level, "set_code_level")
    if level is not None and 0 < level != LOG_AllTransformer:
        raise NotImplementedError(
            f"set_code_level: level {level} names one of Paddle's intermediate AST transformers; fleetgraph "
            f"converts in one pass, expected {LOG_AllTransformer} (the final code) or <= 0 (none)"
        )
    _settings["code_level"], _settings["code_to_stdout"] = level, bool(also_to_stdout)


def get_code_level() -> int:
    return _level("code_level", CODE_LEVEL_ENV_NAME)


def _emit(message: str, to_stdout: bool) -> None:
    _logger.info(message)
    if to_stdout:
        print(f"{_LOGGER_NAME} INFO: {message}")


def log(level: int, message: str) -> None:
    """A conversion message, logged when the verbosity is at least `level` (Paddle's format)."""
    if get_verbosity() >= level:
        _emit(f"(Level {level}) {message}", _settings["log_to_stdout"])


def log_transformed_code(source: str) -> None:
    """The converted code of one function, logged when the code level is 100."""
    if get_code_level() == LOG_AllTransformer:
        header = "After the last level ast transformer: 'All Transformers', the transformed code:\n"
        _emit(header + source, _settings["code_to_stdout"])
