"""Paddle's data generators: a user's `generate_sample` turns raw lines into samples, written as MultiSlot
lines, so that a script run as a dataset's pipe_command feeds it (`fleet.MultiSlotDataGenerator`).

A sample is `[(name, [value, ...]), ...]`; it is written as each slot's `count v1 v2 ...`, slots
joined by spaces, one line per sample, with Paddle's checks and messages (a slot with no values, a
value neither int nor float, slots whose names change between samples are errors).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable


class DataGenerator:
    """Subclass it and override `generate_sample(line)` (and optionally `generate_batch(samples)`)."""

    def __init__(self) -> None:
        self._proto_info: list[tuple[str, str]] | None = None
        self.batch_size_ = 32

    def set_batch(self, batch_size: int) -> None:
        """How many samples `generate_batch` receives at a time."""
        self.batch_size_ = batch_size

    def _set_line_limit(self, line_limit: int) -> None:
        if not isinstance(line_limit, int):
            raise ValueError(f"line_limit{type(line_limit)} must be in int type")
        if line_limit < 1:
            raise ValueError("line_limit can not less than 1")
        self._line_limit = line_limit

    def run_from_memory(self) -> None:
        """Write the samples of `generate_sample(None)` to stdout (for debugging and benchmarks)."""
        self._write_all([self.generate_sample(None)])

    def run_from_stdin(self) -> None:
        """Read raw lines from stdin, write MultiSlot lines to stdout: a dataset's pipe_command."""
        self._write_all(self.generate_sample(line) for line in sys.stdin)

    def _write_all(self, iterators: Iterable[Callable]) -> None:
        batch = []
        for make in iterators:
            for sample in make():
                if sample is None:
                    continue
                batch.append(sample)
                if len(batch) == self.batch_size_:
                    self._write_batch(batch)
                    batch = []
        if batch:
            self._write_batch(batch)

    def _write_batch(self, samples: list) -> None:
        for sample in self.generate_batch(samples)():
            sys.stdout.write(self._gen_str(sample))

    def _gen_str(self, line) -> str:
        raise NotImplementedError("pls use MultiSlotDataGenerator or PairWiseDataGenerator")

    def generate_sample(self, line):
        """Override: return a function that yields samples `[(name, [value, ...]), ...]` for `line`."""
        raise NotImplementedError(
            "Please rewrite this function to return a list or tuple: "
            "[(name, [feasign, ...]), ...] or ((name, [feasign, ...]), ...)"
        )

    def generate_batch(self, samples):
        """Override to rework a batch of samples (padding, for example); the default yields them as they are."""

        def local_iter():
            yield from samples

        return local_iter


def _slot_list(line, example: str):
    """A sample as its (slot, values) pairs; Paddle's message for anything else."""
    if isinstance(line, zip):
        line = list(line)
    if not isinstance(line, (list, tuple)):
        raise ValueError(f"the output of process() must be in list or tuple type{example}")
    return line


class MultiSlotStringDataGenerator(DataGenerator):
    """Values given as strings, written as they are (no type checks, as in Paddle)."""

    def _gen_str(self, line) -> str:
        line = _slot_list(line, "Examples: [('words', ['1926', '08', '17']), ('label', ['1'])]")
        slots = []
        for _name, elements in line:
            slots.append(" ".join([str(len(elements)), *elements]))
        return " ".join(slots) + "\n"


class MultiSlotDataGenerator(DataGenerator):
    """Values given as ints or floats; the first sample fixes the slot names, a float makes a slot float."""

    def _gen_str(self, line) -> str:
        line = _slot_list(line, "Example: [('words', [1926, 08, 17]), ('label', [1])]")
        first = self._proto_info is None
        if first:
            self._proto_info = []
        elif len(line) != len(self._proto_info):
            raise ValueError("the complete field set of two given line are inconsistent.")
        slots = []
        for index, (name, elements) in enumerate(line):
            _check_slot(name, elements)
            if first:
                self._proto_info.append((name, "uint64"))
            elif name != self._proto_info[index][0]:
                want = self._proto_info[index][0]
                raise ValueError(f"the field name of two given line are not match: require<{want}>, get<{name}>.")
            for elem in elements:
                # after the first sample, Paddle checks a slot's values only until one is a float
                if not first and self._proto_info[index][1] == "float":
                    continue
                if isinstance(elem, float):
                    self._proto_info[index] = (name, "float")
                elif not isinstance(elem, int):
                    raise ValueError(f"the type of element{type(elem)} must be in int or float")
            slots.append(" ".join([str(len(elements)), *map(str, elements)]))
        return " ".join(slots) + "\n"


def _check_slot(name, elements) -> None:
    if not isinstance(name, str):
        raise ValueError(f"name{type(name)} must be in str type")
    if not isinstance(elements, list):
        raise ValueError(f"elements{type(elements)} must be in list type")
    if not elements:
        raise ValueError("the elements of each field can not be empty, you need padding it in process().")
