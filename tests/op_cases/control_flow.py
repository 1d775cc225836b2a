"""Cases for the control-flow ops a single op can show (select_input, select_output, the logical
ops); the sub-block ops are covered by tests/test_control_flow.py."""

import numpy as np

from fleetgraph.ops.lod_tensor import LoDTensor, create_lod_tensor

from . import COVERED_ELSEWHERE, NOT_DIFFERENTIABLE, NOT_EAGER, NOT_EXPORTED, case, rand

_A, _B = rand(2, 3, seed=1), rand(2, 3, seed=2)
for _pick in (0, 1):
    case(
        "select_input",
        {"X": [_A, _B], "Mask": np.array([_pick], dtype="int32")},
        reference=lambda X, Mask, **a: {"Out": X[int(Mask[0])]},
        no_grad=("Mask",),
        name=f"pick{_pick}",
    )
    case(
        "select_output",
        {"X": _A, "Mask": np.array([_pick], dtype="int32")},
        outputs={"Out": 2},
        reference=lambda X, Mask, **a: {"Out": [X if i == int(Mask[0]) else np.zeros_like(X) for i in range(2)]},
        no_grad=("Mask",),
        name=f"pick{_pick}",
    )

_P = np.array([[True, False, True], [False, False, True]])
_Q = np.array([[True, True, False], [False, True, True]])
for _name, _fn in (("and", np.logical_and), ("or", np.logical_or), ("xor", np.logical_xor)):
    case(f"logical_{_name}", {"X": _P, "Y": _Q}, reference=lambda X, Y, fn=_fn, **a: {"Out": fn(X, Y)})
case("logical_not", {"X": _P}, reference=lambda X, **a: {"Out": np.logical_not(X)})

for _phase in ("BOTH", "FORWARD", "BACKWARD"):
    case(
        "print",
        {"In": rand(2, 3, seed=3)},
        attrs={"message": "case", "print_phase": _phase, "summarize": 4},
        reference=lambda In, **a: {"Out": In},
        name=_phase.lower(),
    )

_SUB_BLOCK = "tests/test_control_flow.py: values and gradients against NumPy and central differences"
COVERED_ELSEWHERE.update(dict.fromkeys(("conditional_block", "while"), _SUB_BLOCK))
NOT_DIFFERENTIABLE.update(
    dict.fromkeys(("logical_and", "logical_or", "logical_xor", "logical_not"), "bool in, bool out")
)
NOT_EAGER.update(
    {
        **dict.fromkeys(
            ("conditional_block", "while"),
            "eager mode has no blocks: cond, while_loop and friends run Python's if and while there, as Paddle's",
        ),
        **dict.fromkeys(
            ("select_input", "select_output"),
            "cond's plumbing between blocks: in eager mode cond is Python's if, and select_output writes into the "
            "op's variables, which an eager call does not have",
        ),
        "print": "dynamic mode's Print writes the tensor at once, in Python (layers.control_flow.Print)",
    }
)
# -- split_lod_tensor / merge_lod_tensor: rows, and sequences of a LoD ------------------------------
_M = np.array([[True], [False], [False], [True]])
_ROWS = rand(4, 3, seed=4)


def _split_ref(X, Mask, **a):
    m = Mask.reshape(-1)
    if isinstance(X, LoDTensor):
        offsets = X.levels[0]
        parts = []
        for want in (True, False):
            seqs = [X.data[offsets[j] : offsets[j + 1]] for j in range(len(m)) if m[j] == want]
            lengths = [[len(s) for s in seqs]]
            parts.append(create_lod_tensor(np.concatenate(seqs) if seqs else X.data[:0], lengths))
        return {"OutTrue": parts[0], "OutFalse": parts[1]}
    return {"OutTrue": X[m], "OutFalse": X[~m]}


case(
    "split_lod_tensor",
    {"X": _ROWS, "Mask": _M},
    outputs={"OutTrue": 1, "OutFalse": 1},
    reference=_split_ref,
    no_grad=("Mask",),
    name="rows",
)
case(
    "split_lod_tensor",
    {"X": create_lod_tensor(rand(6, 2, seed=5), [[1, 2, 1, 2]]), "Mask": _M},
    outputs={"OutTrue": 1, "OutFalse": 1},
    reference=_split_ref,
    no_grad=("Mask",),
    name="sequences",
)


def _merge_ref(X, Mask, InTrue, InFalse, **a):
    m = Mask.reshape(-1)
    out = np.zeros((len(m), *InTrue.shape[1:]), InTrue.dtype)
    out[m], out[~m] = InTrue, InFalse
    return {"Out": out}


case(
    "merge_lod_tensor",
    {"X": _ROWS, "Mask": _M, "InTrue": rand(2, 5, seed=6), "InFalse": rand(2, 5, seed=7)},
    reference=_merge_ref,
    no_grad=("X", "Mask"),
)
NOT_EXPORTED.update(dict.fromkeys(("split_lod_tensor", "merge_lod_tensor"), "IfElse's row split: no ONNX exporter yet"))
