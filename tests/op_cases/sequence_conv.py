"""Cases for sequence_conv: zero padding and trainable padding, windows reaching before and past
short sequences, an empty sequence; a naive reference that walks each row's window."""

import numpy as np

from fleetgraph.ops.lod_tensor import LoDTensor, create_lod_tensor

from . import NOT_EXPORTED, case, rand


def naive_sequence_conv(X, Filter, PaddingData=None, *, contextStart, contextLength, paddingTrainable, **a):
    rows, width = X.data.shape
    up = max(0, -contextStart)
    offsets = X.levels[-1]
    cols = np.zeros((rows, contextLength * width))
    for a_, b_ in zip(offsets[:-1], offsets[1:]):
        n = b_ - a_
        for p in range(n):
            for j in range(contextLength):
                q = p + contextStart + j
                if 0 <= q < n:
                    row = X.data[a_ + q]
                elif paddingTrainable:
                    row = PaddingData[up + q] if q < 0 else PaddingData[up + q - n]
                else:
                    continue
                cols[a_ + p, j * width : (j + 1) * width] = row
    return {"Out": LoDTensor(cols @ Filter, X.levels)}


_X = create_lod_tensor(rand(9, 3, seed=1), [[2, 4, 0, 3]])
for _start, _length in ((-1, 3), (-2, 4), (0, 2), (1, 2)):
    case(
        "sequence_conv",
        {"X": _X, "Filter": rand(_length * 3, 2, seed=2)},
        attrs={"contextStart": _start, "contextLength": _length},
        reference=naive_sequence_conv,
        name=f"zeros_{_start}_{_length}",
    )
for _start, _length in ((-2, 3), (-1, 4), (2, 2)):
    _up, _down = max(0, -_start), max(0, _start + _length - 1)
    case(
        "sequence_conv",
        {"X": _X, "Filter": rand(_length * 3, 2, seed=3), "PaddingData": rand(_up + _down, 3, seed=4)},
        attrs={"contextStart": _start, "contextLength": _length, "paddingTrainable": True},
        reference=naive_sequence_conv,
        name=f"trainable_{_start}_{_length}",
    )
NOT_EXPORTED["sequence_conv"] = "no ONNX exporter: its windows stop at the LoD's offsets, which are not a graph input"
