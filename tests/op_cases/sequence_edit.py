"""Cases for the sequence editing ops: sequence_erase, sequence_slice and
sequence_scatter (Paddle's unit-test LoDs)."""

import numpy as np

from fleetgraph.ops.lod_tensor import LoDTensor, create_lod_tensor

from . import NOT_DIFFERENTIABLE, NOT_EXPORTED, case, rand


def naive_sequence_erase(X, tokens, **a):
    """One Python loop over the sequences, as Paddle's test_sequence_erase_op builds its reference."""
    offsets, rows, lengths = X.levels[-1], [], []
    for a_, b_ in zip(offsets[:-1], offsets[1:]):
        kept = [v for v in X.data[a_:b_, 0] if v not in tokens]
        rows += kept
        lengths.append(len(kept))
    data = np.asarray(rows, dtype=X.data.dtype).reshape(-1, 1)
    return {"Out": LoDTensor(data, (*X.levels[:-1], np.concatenate(([0], np.cumsum(lengths)))))}


_ids = np.random.default_rng(0).integers(0, 10, size=(30, 1))
for _name, _dtype, _lod, _tokens in (
    ("int32", "int32", [[9, 4, 11, 6]], [2, 3, 5]),
    ("int64", "int64", [[9, 4, 11, 6]], [2, 3, 5]),
    ("no_tokens", "int64", [[9, 4, 11, 6]], []),
    ("empty_sequence", "int64", [[0, 9, 0, 21]], [0, 1, 9]),
    ("two_levels", "int64", [[2, 1], [9, 4, 17]], [7]),
):
    case(
        "sequence_erase",
        {"X": create_lod_tensor(_ids.astype(_dtype), _lod)},
        attrs={"tokens": _tokens},
        name=_name,
        reference=naive_sequence_erase,
    )

NOT_DIFFERENTIABLE.update({"sequence_erase": "integer token ids in and out; Paddle registers no gradient"})
NOT_EXPORTED.update({"sequence_erase": "its output LoD is data dependent; ONNX tensors carry no LoD to shorten"})


def naive_sequence_slice(X, Offset, Length, **a):
    """Paddle's test_seq_slice reference: each sequence's window, one at a time."""
    starts = X.levels[0][:-1]
    rows = [X.data[s + o : s + o + n] for s, o, n in zip(starts, Offset.ravel(), Length.ravel())]
    return {"Out": LoDTensor(np.concatenate(rows), [np.concatenate(([0], np.cumsum(Length.ravel())))])}


for _name, _lod, _offset, _length in (
    ("paddles_test", [[10, 10, 10, 10, 10]], [[1], [2], [3], [4], [5]], [[2], [1], [4], [3], [2]]),
    ("empty_window", [[3, 4]], [[0], [4]], [[3], [0]]),
):
    _rows = sum(_lod[0])
    case(
        "sequence_slice",
        {
            "X": create_lod_tensor(rand(_rows, 3), _lod),
            "Offset": np.array(_offset, dtype="int64"),
            "Length": np.array(_length, dtype="int64"),
        },
        name=_name,
        reference=naive_sequence_slice,
    )
NOT_EXPORTED.update({"sequence_slice": "its output LoD comes from Offset and Length values; ONNX tensors carry no LoD"})


def naive_sequence_scatter(X, Ids, Updates, **a):
    """Paddle's test_sequence_scatter_op reference: += per id, sequence by sequence."""
    out = np.array(X, copy=True)
    offsets = Ids.levels[0]
    for i, (a_, b_) in enumerate(zip(offsets[:-1], offsets[1:])):
        for j in range(a_, b_):
            out[i, Ids.data[j, 0]] += Updates.data[j, 0]
    return {"Out": out}


for _name, _lengths, _ids in (
    ("paddles_test", [[3, 5, 4]], [0, 1, 2, 5, 4, 3, 2, 1, 3, 2, 5, 4]),
    ("repeated_id", [[2, 0, 3]], [1, 1, 0, 4, 0]),
):
    _ids_t = np.array(_ids, dtype="int64").reshape(-1, 1)
    case(
        "sequence_scatter",
        {
            "X": rand(3, 6),
            "Ids": create_lod_tensor(_ids_t, _lengths),
            "Updates": create_lod_tensor(rand(len(_ids), 1, seed=2), _lengths),
        },
        name=_name,
        reference=naive_sequence_scatter,
    )
NOT_EXPORTED.update({"sequence_scatter": "its rows come from Ids' LoD, which ONNX tensors do not carry"})
