"""Cases for the ops between LoD tensors and padded batches: sequence_pad, sequence_unpad,
sequence_expand_as, sequence_enumerate."""

import numpy as np

from fleetgraph.ops.lod_tensor import LoDTensor, create_lod_tensor

from . import case, rand

# -- naive references: one Python loop over the sequences -----------------------------------------


def _split(x: LoDTensor) -> list[np.ndarray]:
    offsets = x.levels[-1]
    return [x.data[a:b] for a, b in zip(offsets[:-1], offsets[1:])]


def naive_sequence_pad(X, PadValue, padded_length, **a):
    seqs = _split(X)
    width = padded_length if padded_length >= 0 else max(len(s) for s in seqs)
    out = np.empty((len(seqs), width, *X.data.shape[1:]))
    out[...] = PadValue if PadValue.size > 1 else PadValue.ravel()[0]
    for i, s in enumerate(seqs):
        out[i, : len(s)] = s
    return {"Out": out, "Length": np.array([len(s) for s in seqs], dtype=np.int64)}


def naive_sequence_unpad(X, Length, **a):
    rows = np.concatenate([X[i, :n] for i, n in enumerate(Length)])
    return {"Out": LoDTensor(rows.reshape(-1, 1) if X.ndim == 2 else rows, [np.cumsum([0, *Length])])}


# -- sequence_pad: Paddle's test LoDs, a row-shaped PadValue, a fixed padded_length -----------------

for _name, _lod, _shape, _pad, _length in (
    ("longest", [[2, 3, 4, 3]], (12, 10), np.array([1.0]), -1),
    ("row_pad_value", [[2, 3, 4, 3]], (12, 3, 2), rand(3, 2, seed=2), -1),
    ("padded_length", [[2, 0, 4, 3]], (9, 2), np.array([0.5]), 7),
):
    case(
        "sequence_pad",
        {"X": create_lod_tensor(rand(*_shape), _lod), "PadValue": _pad},
        attrs={"padded_length": _length},
        outputs={"Out": 1, "Length": 1},
        name=_name,
        no_grad=("PadValue",),
        loss_outputs=("Out",),
        reference=naive_sequence_pad,
    )

# -- sequence_unpad: Paddle's test shapes ------------------------------------------------------------

for _name, _length, _shape in (
    ("rank2", [2, 3, 4], (3, 5)),
    ("rank3", [0, 4, 1], (3, 5, 2)),
):
    case(
        "sequence_unpad",
        {"X": rand(*_shape), "Length": np.array(_length, dtype=np.int64)},
        name=_name,
        no_grad=("Length",),
        reference=naive_sequence_unpad,
    )


def naive_sequence_expand_as(X, Y, **a):
    lengths = np.diff(Y.levels[-1])
    return {"Out": LoDTensor(np.repeat(X, lengths, axis=0), Y.levels)}


# -- sequence_expand_as: Paddle's test shapes, one with an empty sequence ----------------------------

for _name, _lod, _shape in (
    ("rows", [[1, 3, 4]], (3, 4)),
    ("with_empty", [[2, 0, 3, 1]], (4, 2, 2)),
):
    case(
        "sequence_expand_as",
        {"X": rand(*_shape), "Y": create_lod_tensor(rand(sum(_lod[0]), 1, seed=1), _lod)},
        name=_name,
        no_grad=("Y",),
        reference=naive_sequence_expand_as,
    )


def naive_sequence_enumerate(X, win_size, pad_value, **a):
    windows = []
    for s in _split(X):
        ids = np.concatenate([s.ravel(), np.full(win_size, pad_value, dtype=s.dtype)])
        windows += [ids[r : r + win_size] for r in range(len(s))]
    return {"Out": LoDTensor(np.array(windows, dtype=X.data.dtype).reshape(-1, win_size), X.levels)}


# -- sequence_enumerate: Paddle's test LoD and windows, one longer than a sequence ----------------

_ids = np.random.default_rng(3).integers(1, 100, size=(18, 1)).astype(np.int32)
for _name, _win, _pad in (("win2", 2, 0), ("longer_than_a_sequence", 5, 7)):
    case(
        "sequence_enumerate",
        {"X": create_lod_tensor(_ids, [[9, 4, 0, 5]])},
        attrs={"win_size": _win, "pad_value": _pad},
        name=_name,
        reference=naive_sequence_enumerate,
    )
