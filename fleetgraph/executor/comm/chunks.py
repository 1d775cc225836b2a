"""How a ring cuts a flattened array into chunks and pieces, and the order it sends them in."""

from __future__ import annotations

# Pieces of a chunk: PIECES_PER_CHUNK of them, so that a rank adds piece i while piece i+1 is on
# the wire, but none smaller than MIN_PIECE_BYTES, where the per-message costs (thread wake-ups,
# Python) start to outweigh the overlap, nor larger than PIECE_BYTES, so that ZeroMQ's receive
# buffers stay small. Measured on 2 cores: 1 MiB pieces cost 25% more CPU per 64 MB all-reduce
# than these; 2 to 4 MiB pieces, two or four per chunk, differed by less than the noise. The
# kernel's socket buffers are left to its autotuning: fixing them (SNDBUF/RCVBUF) measured no
# better.
PIECE_BYTES = 4 << 20
MIN_PIECE_BYTES = 2 << 20
PIECES_PER_CHUNK = 4


def split(start: int, stop: int, count: int) -> list[tuple[int, int]]:
    """[start, stop) in `count` near-equal ranges, the longer ones first (as np.array_split)."""
    q, rem = divmod(stop - start, count)
    bounds, at = [], start
    for i in range(count):
        end = at + q + (i < rem)
        bounds.append((at, end))
        at = end
    return bounds


def pieces_of(size: int, itemsize: int) -> int:
    """How many pieces `size` values travel in: PIECES_PER_CHUNK where that keeps them between
    MIN_PIECE_BYTES and PIECE_BYTES, else as few as keep them within those bounds."""
    nbytes = size * itemsize
    return max(1, -(-nbytes // PIECE_BYTES), min(PIECES_PER_CHUNK, nbytes // MIN_PIECE_BYTES))


def pieces(size: int, nranks: int, itemsize: int) -> list[list[tuple[int, int]]]:
    """Per chunk (np.array_split of `size` into `nranks`), the element ranges of its pieces: the
    same number of pieces in every chunk, so that every rank follows the same schedule."""
    chunks = split(0, size, nranks)
    count = pieces_of(chunks[0][1] - chunks[0][0], itemsize)
    return [split(a, b, count) for a, b in chunks]


def schedule(steps: int, count: int, window: int) -> list[tuple[int, int]]:
    """The (step, piece) messages of an all-reduce in the order a rank sends them, which is the
    order it receives them in too: `window` pieces of its own chunk, then, for each message
    received, the message it lets this rank send (the same piece one step on) and, for a step-0
    message, the next piece of its own chunk. All-gather pieces thus leave right after their sum
    is computed, interleaved with the rest of the reduce-scatter, rather than after all of it."""
    order = [(0, p) for p in range(window)]
    for step, p in order:  # grows while it is walked
        if step + 1 < steps:
            order.append((step + 1, p))
        if step == 0 and p + window < count:
            order.append((0, p + window))
    return order
