"""The errors of the data layer: a bad setting, a malformed line, a failed pipe_command, a stalled read."""

from __future__ import annotations

from ..ir.errors import FleetgraphError


class DatasetError(FleetgraphError, ValueError):
    """A dataset setting that cannot work (an unknown option, a dtype the MultiSlot format cannot carry)."""


class BadLineError(FleetgraphError, ValueError):
    """A line that is not in the MultiSlot format; the message starts with `file:line:`."""

    def __init__(self, source: str, line: int, reason: str) -> None:
        super().__init__(f"{source}:{line}: {reason}")
        self.source, self.line, self.reason = source, line, reason


class PipeCommandError(FleetgraphError, RuntimeError):
    """A pipe_command that exited with a non-zero status (or could not be started)."""


class DatasetTimeoutError(FleetgraphError, TimeoutError):
    """No batch arrived from the reader threads within the allowed time."""
