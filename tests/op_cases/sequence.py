"""Cases for the sequence ops over LoD tensors: sequence_pool, sequence_concat, sequence_reshape, sequence_expand."""

import numpy as np

from fleetgraph.ops.lod_tensor import LoDTensor, create_lod_tensor

from . import case, rand

# -- naive references: one Python loop over the sequences -----------------------------------------


def _split(t: LoDTensor) -> list[np.ndarray]:
    """The rows of each sequence of the last LoD level."""
    offsets = t.levels[-1]
    return [t.data[a:b] for a, b in zip(offsets[:-1], offsets[1:])]


def _joined(sequences, lod_above=()) -> LoDTensor:
    """Sequences stacked into a LoDTensor whose last level gives their lengths."""
    lengths = [len(s) for s in sequences]
    return create_lod_tensor(np.concatenate(sequences), [*lod_above, lengths])


def _pool_one(s, pooltype):
    if pooltype == "AVERAGE":
        return s.mean(axis=0)
    if pooltype == "SUM":
        return s.sum(axis=0)
    if pooltype == "SQRT":
        return s.sum(axis=0) / np.sqrt(len(s))
    if pooltype == "FIRST":
        return s[0]
    if pooltype == "LAST":
        return s[-1]
    return s.max(axis=0)


def naive_sequence_pool(X, pooltype, pad_value, **a):
    """Out (with X's upper LoD levels) and, for MAX, the first row of X holding each maximum."""
    out, index = [], []
    for start, s in zip(X.levels[-1], _split(X)):
        if not len(s):
            out.append(np.full(X.data.shape[1:], pad_value))
            index.append(np.full(X.data.shape[1:], -1))
            continue
        out.append(_pool_one(s, pooltype))
        index.append(start + s.argmax(axis=0))
    pooled = np.array(out)
    result = {"Out": LoDTensor(pooled, X.levels[:-1]) if len(X.levels) > 1 else pooled}
    if pooltype == "MAX":
        result["MaxIndex"] = np.array(index, dtype=np.int32)
    return result


def naive_sequence_concat(X, **a):
    return {"Out": _joined([np.concatenate(group) for group in zip(*(_split(x) for x in X))])}


def naive_sequence_reshape(X, new_dim, **a):
    return {"Out": _joined([s.reshape(-1, new_dim) for s in _split(X)])}


def naive_sequence_expand(X, Y, ref_level, **a):
    repeats = np.diff(Y.levels[ref_level])
    if isinstance(X, LoDTensor):
        return {"Out": _joined([s for s, r in zip(_split(X), repeats) for _ in range(r)])}
    return {"Out": np.array([row for row, r in zip(X, repeats) for _ in range(r)])}


# -- sequence_pool --------------------------------------------------------------------------------

_with_empty = create_lod_tensor(rand(7, 3), [[2, 0, 3, 1, 1]])
for _type in ("AVERAGE", "SUM", "SQRT", "LAST", "FIRST", "MAX"):
    case(
        "sequence_pool",
        {"X": _with_empty},
        attrs={"pooltype": _type, "pad_value": 0.25},
        outputs={"Out": 1, "MaxIndex": 1} if _type == "MAX" else {"Out": 1},
        loss_outputs=("Out",),
        name=_type.lower(),
        reference=naive_sequence_pool,
    )
case(
    "sequence_pool",
    {"X": create_lod_tensor(rand(4, 2, seed=1), [[0, 3, 0, 1, 0]])},
    attrs={"pooltype": "LAST"},
    name="last_empty_at_both_ends",
    reference=naive_sequence_pool,
)
case(
    "sequence_pool",
    {"X": create_lod_tensor(rand(7, 2, seed=2), [[2, 1, 2], [2, 0, 3, 1, 1]])},
    attrs={"pooltype": "SUM"},
    name="sum_two_levels",
    reference=naive_sequence_pool,
)
case(
    "sequence_pool",
    {"X": create_lod_tensor(rand(6, 2, seed=3), [[1, 2], [3, 0, 3]])},
    attrs={"pooltype": "MAX"},
    outputs={"Out": 1, "MaxIndex": 1},
    loss_outputs=("Out",),
    name="max_two_levels",
    reference=naive_sequence_pool,
)
case(
    "sequence_pool",
    {"X": create_lod_tensor(rand(5, 2, 2, seed=4), [[3, 2]])},
    attrs={"pooltype": "AVERAGE"},
    name="average_rank3_rows",
    reference=naive_sequence_pool,
)

# -- sequence_concat ------------------------------------------------------------------------------

case(
    "sequence_concat",
    {"X": [create_lod_tensor(rand(3, 2), [[2, 0, 1]]), create_lod_tensor(rand(4, 2, seed=1), [[1, 2, 1]])]},
    reference=naive_sequence_concat,
)
case(
    "sequence_concat",
    {
        "X": [
            create_lod_tensor(rand(2, 3, seed=2), [[1, 1]]),
            create_lod_tensor(rand(3, 3, seed=3), [[0, 3]]),
            create_lod_tensor(rand(2, 3, seed=4), [[2, 0]]),
        ]
    },
    name="three_inputs",
    reference=naive_sequence_concat,
)

# -- sequence_reshape -----------------------------------------------------------------------------

for _new_dim in (4, 1, 2):
    case(
        "sequence_reshape",
        {"X": create_lod_tensor(rand(6, 2), [[2, 0, 4]])},
        attrs={"new_dim": _new_dim},
        name=f"new_dim_{_new_dim}",
        reference=naive_sequence_reshape,
    )

# -- sequence_expand ------------------------------------------------------------------------------

_y_two_levels = create_lod_tensor(rand(8, 1, seed=5), [[2, 2], [3, 3, 1, 1]])
case(
    "sequence_expand",
    {"X": create_lod_tensor(rand(4, 2), [[2, 2]]), "Y": _y_two_levels},
    attrs={"ref_level": 0},
    no_grad=("Y",),
    name="sequences_by_level_0",
    reference=naive_sequence_expand,
)
case(
    "sequence_expand",
    {"X": create_lod_tensor(rand(4, 2, seed=1), [[1, 0, 3]]), "Y": create_lod_tensor(rand(4, 1), [[2, 0, 2]])},
    no_grad=("Y",),
    name="sequences_with_empty",
    reference=naive_sequence_expand,
)
case(
    "sequence_expand",
    {"X": create_lod_tensor(rand(4, 2, seed=2), [[1, 1, 1, 1]]), "Y": _y_two_levels},
    no_grad=("Y",),
    name="sequences_by_last_level",
    reference=naive_sequence_expand,
)
case(
    "sequence_expand",
    {"X": rand(3, 2, seed=3), "Y": create_lod_tensor(rand(6, 1), [[2, 1, 3]])},
    no_grad=("Y",),
    name="rows",
    reference=naive_sequence_expand,
)
case(
    "sequence_expand",
    {"X": rand(2, 2, 1, seed=4), "Y": create_lod_tensor(rand(3, 1), [[1, 2]])},
    no_grad=("Y",),
    name="rank3_rows",
    reference=naive_sequence_expand,
)
