"""Cases for the tensor array and rank table ops. A list given to a slot that is not duplicable is a
tensor array (the harness writes its elements with write_to_array); a RankTable input is given as
the LoDTensor whose level 0 the harness ranks with lod_rank_table."""

import numpy as np

from fleetgraph.ops.lod_tensor import LoDTensor, create_lod_tensor

from . import NOT_DIFFERENTIABLE, NOT_EAGER, NOT_EXPORTED, case, rand

# -- naive references: Python loops over the sequences --------------------------------------------


def _ranked(x: LoDTensor) -> list[tuple[int, int]]:
    """(index, length) of x's level-0 sequences, longest first, ties in batch order."""
    lengths = x.recursive_sequence_lengths()[0]
    return sorted(enumerate(lengths), key=lambda item: -item[1])


def naive_lod_rank_table(X, level, **a):
    lengths = X.recursive_sequence_lengths()[level]
    return {"Out": np.array(sorted(enumerate(lengths), key=lambda item: -item[1]), dtype=np.int64).reshape(-1, 2)}


def naive_max_sequence_len(RankTable, **a):
    return {"Out": np.array([max(RankTable.recursive_sequence_lengths()[0])])}


def naive_write_to_array(X, **a):
    return {"Out": [None] * int(a["I"][0]) + [X]}


def naive_read_from_array(X, **a):
    return {"Out": X[int(a["I"][0])]}


def naive_tensor_array_to_tensor(X, axis, use_stack, **a):
    rows = [np.asarray(e) for e in X]
    joined = np.stack(rows, axis=axis) if use_stack else np.concatenate(rows, axis=axis)
    return {"Out": joined, "OutIndex": np.array([1 if use_stack else r.shape[axis] for r in rows], dtype=np.int32)}


def naive_lod_array_length(X, **a):
    return {"Out": np.array([len(X)])}


def _steps(x: LoDTensor) -> list[list[np.ndarray]]:
    """The rows of each level-0 sequence of a one-level x."""
    offsets = x.lod()[0]
    return [x.data[a:b] for a, b in zip(offsets[:-1], offsets[1:])]


def naive_lod_tensor_to_array(X, RankTable, **a):
    sequences = _steps(X)
    ranked = _ranked(RankTable)
    return {
        "Out": [
            np.stack([sequences[i][t] for i, n in ranked if n > t])
            for t in range(ranked[0][1])  # one-level X: elements carry no LoD
        ]
    }


def naive_array_to_lod_tensor(X, RankTable, **a):
    ranked = _ranked(RankTable)
    position = {i: p for p, (i, _) in enumerate(ranked)}
    lengths = RankTable.recursive_sequence_lengths()[0]
    rows = [X[t][position[i]] for i, n in enumerate(lengths) for t in range(n)]
    return {"Out": create_lod_tensor(np.stack(rows), [lengths])}


def naive_shrink_rnn_memory(X, RankTable, **a):
    running = sum(1 for _, n in _ranked(RankTable) if n > int(a["I"][0]))
    if not isinstance(X, LoDTensor):
        return {"Out": X[:running]}
    lengths = X.recursive_sequence_lengths()[0][:running]
    return {"Out": create_lod_tensor(X.data[: sum(lengths)], [lengths])}


def naive_reorder_lod_tensor_by_rank(X, RankTable, **a):
    order = [i for i, _ in _ranked(RankTable)]
    if not isinstance(X, LoDTensor):
        return {"Out": X[order]}
    sequences = _steps(X)
    lengths = X.recursive_sequence_lengths()[0]
    return {"Out": create_lod_tensor(np.concatenate([sequences[i] for i in order]), [[lengths[i] for i in order]])}


def _ranked_case(op_type: str, inputs: dict, **kw):
    """A case of an op that reads a rank table, which carries no gradient."""
    return case(op_type, inputs, no_grad=("RankTable",), **kw)


# -- cases -----------------------------------------------------------------------------------------

_I0, _I1, _I2 = (np.array([k], dtype=np.int64) for k in range(3))
_batch = create_lod_tensor(rand(10, 3), [[3, 1, 2, 4]])  # ranked: 3 (4 steps), 0 (3), 2 (2), 1 (1)
_ties = create_lod_tensor(rand(7, 2, seed=1), [[2, 0, 3, 2]])  # an empty sequence, equal lengths

case("write_to_array", {"X": rand(2, 3), "I": _I0}, reference=naive_write_to_array)
case(
    "write_to_array",
    {"X": create_lod_tensor(rand(5, 2), [[2, 3]]), "I": _I0},
    name="lod_element",
    reference=naive_write_to_array,
)
case(
    "read_from_array",
    {"X": [rand(2, 3), rand(4, 3, seed=1), rand(1, 3, seed=2)], "I": _I1},
    reference=naive_read_from_array,
)
case(
    "read_from_array",
    {"X": [rand(3, 2), create_lod_tensor(rand(3, 2, seed=3), [[1, 2]])], "I": _I1},
    name="lod_element",
    reference=naive_read_from_array,
)
for _op in ("read_from_array", "tensor_array_to_tensor"):  # one write: gradients unblocked
    case(
        _op,
        {"X": [rand(2, 3, seed=5)], **({"I": _I0} if _op == "read_from_array" else {})},
        outputs={"Out": 1} if _op == "read_from_array" else {"Out": 1, "OutIndex": 1},
        loss_outputs=("Out",),
        name="one_element",
        reference=naive_read_from_array if _op == "read_from_array" else naive_tensor_array_to_tensor,
    )
case("lod_array_length", {"X": [rand(2, 2), rand(2, 2, seed=1), rand(2, 2, seed=2)]}, reference=naive_lod_array_length)
for _name, _attrs, _x in (
    ("rows", {}, [rand(2, 3), rand(1, 3, seed=1), rand(3, 3, seed=2)]),
    ("columns", {"axis": 1}, [rand(2, 1), rand(2, 3, seed=1)]),
    ("stack", {"axis": -1, "use_stack": True}, [rand(2, 3), rand(2, 3, seed=1)]),
):
    case(
        "tensor_array_to_tensor",
        {"X": _x},
        attrs=_attrs,
        outputs={"Out": 1, "OutIndex": 1},
        loss_outputs=("Out",),
        name=_name,
        reference=naive_tensor_array_to_tensor,
    )
for _name, _x in (("four", _batch), ("ties_and_empty", _ties)):
    case("lod_rank_table", {"X": _x}, name=_name, reference=naive_lod_rank_table)
    _ranked_case("max_sequence_len", {"RankTable": _x}, name=_name, reference=naive_max_sequence_len)
    _ranked_case("lod_tensor_to_array", {"X": _x, "RankTable": _x}, name=_name, reference=naive_lod_tensor_to_array)
    _ranked_case(
        "array_to_lod_tensor",
        {"X": naive_lod_tensor_to_array(_x, _x)["Out"], "RankTable": _x},
        name=_name,
        reference=naive_array_to_lod_tensor,
    )
    _ranked_case(
        "reorder_lod_tensor_by_rank", {"X": _x, "RankTable": _x}, name=_name, reference=naive_reorder_lod_tensor_by_rank
    )
case(
    "lod_rank_table",
    {"X": create_lod_tensor(rand(6, 1), [[1, 2], [3, 1, 2]])},
    attrs={"level": 1},
    name="level_1",
    reference=naive_lod_rank_table,
)
_ranked_case(
    "reorder_lod_tensor_by_rank",
    {"X": rand(4, 3, seed=4), "RankTable": _batch},
    name="rows",
    reference=naive_reorder_lod_tensor_by_rank,
)
for _name, _i in (("step_0", _I0), ("step_2", _I2)):
    _ranked_case(
        "shrink_rnn_memory",
        {"X": rand(4, 3), "RankTable": _batch, "I": _i},
        name=_name,
        reference=naive_shrink_rnn_memory,
    )
_ranked_case(
    "shrink_rnn_memory",
    {"X": create_lod_tensor(rand(6, 2), [[3, 1, 2]]), "RankTable": _batch, "I": _I1},
    name="lod_memory",
    reference=naive_shrink_rnn_memory,
)

NOT_DIFFERENTIABLE.update(
    {
        "lod_array_length": "an array's length: an integer loop bound, and Paddle registers no grad for it",
        "lod_rank_table": "ranks sequences by length: host data about the LoD, no values",
        "max_sequence_len": "the longest length in a rank table: an integer loop bound",
    }
)
_ARRAY_OPS = ("write_to_array", "read_from_array", "lod_array_length", "tensor_array_to_tensor")
_TABLE_OPS = (
    "lod_rank_table",
    "max_sequence_len",
    "lod_tensor_to_array",
    "array_to_lod_tensor",
    "shrink_rnn_memory",
    "reorder_lod_tensor_by_rank",
)
NOT_EAGER.update(
    {
        **dict.fromkeys(
            _ARRAY_OPS,
            "a tensor array is a Python list in eager mode (Paddle 2.0's dygraph array_write appends); no op runs",
        ),
        **dict.fromkeys(_TABLE_OPS, "a rank table is host data about a batch's LoD, which eager Tensors do not carry"),
    }
)
NOT_EXPORTED.update(
    dict.fromkeys(
        _ARRAY_OPS + _TABLE_OPS,
        "ONNX has sequences of tensors but no LoD; DynamicRNN's arrays and rank tables have no counterpart",
    )
)
