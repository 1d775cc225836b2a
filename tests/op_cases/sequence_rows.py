"""Cases for the row-wise sequence ops: sequence_softmax, sequence_reverse, sequence_mask."""

import numpy as np

from fleetgraph.ops.lod_tensor import LoDTensor, create_lod_tensor

from . import case, rand

# -- naive references: one Python loop over the sequences -----------------------------------------


def _map_sequences(x: LoDTensor, f) -> LoDTensor:
    """`f` applied to each sequence's rows, under x's LoD."""
    offsets = x.levels[-1]
    return LoDTensor(np.concatenate([f(x.data[a:b]) for a, b in zip(offsets[:-1], offsets[1:])]), x.levels)


def _softmax(s):
    e = np.exp(s - s.max()) if len(s) else s
    return e / e.sum()


def naive_sequence_softmax(X, **a):
    return {"Out": _map_sequences(X, _softmax)}


def naive_sequence_reverse(X, **a):
    return {"Y": _map_sequences(X, lambda s: s[::-1])}


def naive_sequence_mask(X, maxlen, out_dtype, MaxLenTensor=None, **a):
    width = int(MaxLenTensor[0]) if MaxLenTensor is not None else maxlen if maxlen >= 0 else int(X.max())
    mask = np.zeros((*X.shape, width), dtype=out_dtype)
    for idx in np.ndindex(X.shape):
        mask[idx][: X[idx]] = 1
    return {"Y": mask}


# -- sequence_softmax: Paddle's test LoDs, one with empty sequences --------------------------------

for _name, _lod, _shape in (
    ("n_by_1", [[4, 1, 3, 3]], (11, 1)),
    ("with_empty", [[4, 0, 0, 7]], (11, 1)),
    ("rank1", [[3, 2]], (5,)),
):
    case(
        "sequence_softmax",
        {"X": create_lod_tensor(rand(*_shape, low=0.1, high=1.0), _lod)},
        name=_name,
        reference=naive_sequence_softmax,
    )
case(
    "sequence_softmax",
    {"X": create_lod_tensor(rand(6, 1, seed=1), [[1, 2], [2, 0, 4]])},
    name="last_of_two_levels",
    reference=naive_sequence_softmax,
)

# -- sequence_reverse ------------------------------------------------------------------------------

for _name, _lod, _shape in (
    ("rows", [[2, 3, 5]], (10, 3)),
    ("with_empty", [[0, 2, 6, 0]], (8, 2)),
    ("rank3", [[1, 3]], (4, 2, 2)),
):
    case(
        "sequence_reverse",
        {"X": create_lod_tensor(rand(*_shape), _lod)},
        outputs={"Y": 1},
        name=_name,
        reference=naive_sequence_reverse,
    )

# -- sequence_mask ---------------------------------------------------------------------------------

_lengths = np.array([[3, 1, 4, 0], [2, 2, 1, 5]], dtype=np.int64)
case("sequence_mask", {"X": _lengths}, outputs={"Y": 1}, name="longest", reference=naive_sequence_mask)
case(
    "sequence_mask",
    {"X": np.array([4, 1, 3], dtype=np.int32)},
    attrs={"maxlen": 6, "out_dtype": "float32"},
    outputs={"Y": 1},
    name="maxlen_float32",
    reference=naive_sequence_mask,
)
case(
    "sequence_mask",
    {"X": _lengths, "MaxLenTensor": np.array([7], dtype=np.int32)},
    attrs={"maxlen": 2},
    outputs={"Y": 1},
    name="maxlen_tensor",
    reference=naive_sequence_mask,
)
