"""`fluid.contrib.op_freq_statistic`: how often each op type, and each producer->consumer pair of op
types, occurs in a program's global block (parameters left out), most frequent first."""

from __future__ import annotations

from collections import Counter

from ...ir import Program

__all__ = ["op_freq_statistic"]


def op_freq_statistic(program) -> tuple[list[tuple[str, int]], list[tuple[str, int]]]:
    """(single-op counts, 'producer->consumer' counts), each sorted by count, descending. An op
    counts once if it writes anything besides parameters; a pair counts once per input the consumer
    reads from the latest op that wrote it, as Paddle's."""
    if not isinstance(program, Program):
        raise TypeError(f"The input type should be Porgram.But you passed in {type(program)}")
    block = program.global_block()
    parameters = {p.name for p in block.all_parameters()}
    single: Counter = Counter()
    for op in block.ops:
        if any(name not in parameters for name in op.output_arg_names):
            single[op.type] += 1
    producer: dict[str, str] = {}
    consumed_from: dict[str, list[str]] = {}  # consumer type -> producer types, in Paddle's order
    for op in block.ops:
        for name in op.input_arg_names:
            if name not in parameters and name in producer:
                consumed_from.setdefault(op.type, []).append(producer[name])
        for name in op.output_arg_names:
            producer[name] = op.type
    pairs: Counter = Counter(f"{p}->{c}" for c, producers in consumed_from.items() for p in producers)
    by_count = lambda items: sorted(items, key=lambda item: item[1], reverse=True)  # noqa: E731  (stable)
    return by_count(single.items()), by_count(pairs.items())
