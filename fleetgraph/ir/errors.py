"""Error types and message helpers shared by every layer."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class FleetgraphError(Exception):
    """Base class of every error fleetgraph raises on purpose."""


class FleetgraphTypeError(FleetgraphError, TypeError):
    """An argument of the wrong type, where Paddle raises TypeError: both `except`s catch it."""


class FleetgraphValueError(FleetgraphError, ValueError):
    """An argument of the right type and a wrong value, where Paddle raises ValueError."""


class ShapeError(FleetgraphError, ValueError):
    """A shape does not fit what an op or a feed expects."""


class DTypeError(FleetgraphError, TypeError):
    """A dtype does not fit what an op or a feed expects."""


class UnknownNameError(FleetgraphError, KeyError):
    """A name (op type, variable, slot, attr) is not known; the message lists close matches."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class VerifyError(FleetgraphError):
    """A program breaks an invariant that `verify` checks."""


class KernelError(FleetgraphError, RuntimeError):
    """An exception raised inside a kernel, re-raised with the op that ran it."""


class EOFException(FleetgraphError):
    """A reader op found its data source exhausted (Paddle's `core.EOFException`): the end of an
    epoch, not a fault, so the executor lets it through as it is."""


def close_matches(name: str, candidates: Iterable[str], n: int = 3) -> str:
    """'; did you mean a, b?' or '' when nothing is close."""
    found = difflib.get_close_matches(name, list(candidates), n=n, cutoff=0.6)
    return f"; did you mean {', '.join(repr(f) for f in found)}?" if found else ""


def unknown(kind: str, name: str, candidates: Iterable[str], where: str = "") -> UnknownNameError:
    prefix = f"{where}: " if where else ""
    return UnknownNameError(f"{prefix}unknown {kind} {name!r}{close_matches(name, candidates)}")


def fmt_shape(shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"
