"""`deprecated` and `try_import` (Paddle 2.0's utils/deprecated.py and utils/lazy_import.py)."""

from __future__ import annotations

import importlib


def deprecated(update_to="", since="", reason=""):
    """Mark a function or class deprecated as Paddle 2.0.0 does: its docstring gets a leading
    'Warning: API "module.name" is deprecated ...' notice, and calls stay silent (2.0.0's decorator
    returns the function before its warning wrapper, so no DeprecationWarning is raised)."""
    for label, value in (("update_to", update_to), ("since", since), ("reason", reason)):
        if not isinstance(value, str):
            raise TypeError(f"deprecated: {label}; expected a str, got {type(value).__name__}")
    if update_to.strip() and not update_to.strip().startswith("paddle."):
        raise ValueError(f'deprecated: Argument update_to must start with "paddle.", your value is "{update_to}"')

    def decorator(func):
        msg = f'API "{func.__module__}.{func.__name__}" is deprecated'
        if since.strip():
            msg += f" since {since.strip()}"
        msg += ", and will be removed in future versions."
        if update_to.strip():
            msg += f' Please use "{update_to.strip()}" instead.'
        if reason.strip():
            msg += f"\n reason: {reason.strip()}"
        if func.__doc__:
            func.__doc__ = "\n\nWarning: " + msg + "\n" + func.__doc__
        return func

    return decorator


def try_import(module_name: str):
    """The module `module_name`, imported; an ImportError saying which package to pip install when
    it is not installed (the top-level name; opencv-python for cv2), as Paddle's."""
    install_name = "opencv-python" if module_name == "cv2" else module_name.split(".")[0]
    try:
        return importlib.import_module(module_name)
    except ImportError as exc:
        raise ImportError(
            f"Failed importing {module_name}. This likely means that some paddle modules require additional "
            f"dependencies that have to be manually installed (usually with `pip install {install_name}`). "
        ) from exc
