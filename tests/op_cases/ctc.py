"""Registry cases for the ops of ops/ctc.py, with the NumPy references of Paddle 1.8's
test_warpctc_op.py (CTCForward, in log space), test_ctc_align.py and test_edit_distance_op.py."""

import numpy as np

from fleetgraph.ops.lod_tensor import LoDTensor

from . import NOT_DIFFERENTIABLE, NOT_EXPORTED, case

NOT_EXPORTED.update(
    {
        "warpctc": "training only: a loss the inference program does not compute; export prunes the program to "
        "inference (ir/prune.py)",
        "ctc_align": "its output lengths (LoD, or OutputLength) depend on the token values; ONNX tensors carry no LoD",
        "edit_distance": "an evaluation metric over token sequences of data-dependent lengths; export prunes it",
    }
)
NOT_DIFFERENTIABLE.update(
    {
        "ctc_align": "integer token ids in and out; Paddle registers no gradient",
        "edit_distance": "integer token ids in, a count out; Paddle registers no gradient",
    }
)


def _log_add(a, b):
    if a == -np.inf:
        return b
    if b == -np.inf:
        return a
    return max(a, b) + np.log1p(np.exp(-abs(a - b)))


def _ctc_loss(logits, labels, blank):
    """test_warpctc_op.py's CTCForward for one sequence: -log p(labels | softmax(logits)), 0 when
    the sequence is too short for its labels (warp-ctc's convention)."""
    log_p = logits - logits.max(1, keepdims=True)
    log_p = log_p - np.log(np.exp(log_p).sum(1, keepdims=True))
    steps, ext = logits.shape[0], [blank]
    for token in labels:
        ext += [int(token), blank]
    repeats = sum(1 for i in range(1, len(labels)) if labels[i] == labels[i - 1])
    if steps < len(labels) + repeats:
        return 0.0
    alpha = np.full(len(ext), -np.inf)
    alpha[0] = log_p[0, blank]
    if len(ext) > 1:
        alpha[1] = log_p[0, ext[1]]
    for t in range(1, steps):
        new = np.full(len(ext), -np.inf)
        for s in range(len(ext)):
            v = _log_add(alpha[s], alpha[s - 1] if s > 0 else -np.inf)
            if s > 1 and ext[s] != blank and ext[s] != ext[s - 2]:
                v = _log_add(v, alpha[s - 2])
            new[s] = v + log_p[t, ext[s]]
        alpha = new
    return -_log_add(alpha[-1], alpha[-2] if len(ext) > 1 else -np.inf)


def _warpctc_lod(Logits, Label, blank, **_):
    lo, la = Logits.levels[0], Label.levels[0]
    losses = [
        _ctc_loss(Logits.data[lo[i] : lo[i + 1]], Label.data[la[i] : la[i + 1], 0], blank) for i in range(len(lo) - 1)
    ]
    return {"Loss": np.array(losses).reshape(-1, 1)}


def _warpctc_padded(Logits, Label, LogitsLength, LabelLength, blank, **_):
    losses = [
        _ctc_loss(Logits[: LogitsLength[b], b], Label[b, : LabelLength[b]], blank) for b in range(Logits.shape[1])
    ]
    return {"Loss": np.array(losses).reshape(-1, 1)}


_rng = np.random.default_rng(5)
# TestWarpCTCOp's shapes: the third sequence (3 steps, 4 labels) is too short and costs 0
_LOGITS_LOD, _LABELS_LOD = [4, 1, 3, 3], [3, 1, 4, 2]
_labels = _rng.integers(0, 5, (sum(_LABELS_LOD), 1)).astype(np.int32)
_labels[[3, 8]] = _labels[[2, 9]]  # a repeated label needs a blank between its copies
for _name, _blank in (("lod_blank_last", 5), ("lod_blank_first", 0)):
    case(
        "warpctc",
        {
            "Logits": LoDTensor(_rng.uniform(0.1, 1.0, (sum(_LOGITS_LOD), 6)), [np.cumsum([0] + _LOGITS_LOD)]),
            "Label": LoDTensor(_labels + (_blank == 0), [np.cumsum([0] + _LABELS_LOD)]),
        },
        attrs={"blank": _blank, "norm_by_times": False},
        outputs={"WarpCTCGrad": 1, "Loss": 1},
        reference=_warpctc_lod,
        loss_outputs=("Loss",),
        atol=1e-6,
        name=_name,
    )
_padded_labels = np.zeros((4, 4), dtype=np.int32)
for _b, _n in enumerate(_LABELS_LOD):
    _padded_labels[_b, :_n] = _rng.integers(0, 7, _n)
case(
    "warpctc",
    {
        "Logits": _rng.uniform(0.1, 1.0, (5, 4, 8)),
        "Label": _padded_labels,
        "LogitsLength": np.array([5, 1, 3, 4], dtype=np.int64),
        "LabelLength": np.array(_LABELS_LOD, dtype=np.int64),
    },
    attrs={"blank": 7, "norm_by_times": False},
    outputs={"WarpCTCGrad": 1, "Loss": 1},
    reference=_warpctc_padded,
    loss_outputs=("Loss",),
    name="padded",
)


def _align(tokens, blank, merge_repeated):
    out, prev = [], -1
    for t in tokens:
        if t != blank and not (merge_repeated and t == prev):
            out.append(t)
        prev = t
    return out


def _ctc_align_lod(Input, blank, merge_repeated, **_):
    """test_ctc_align.py's CTCAlign: a sequence's tokens merged and without blanks; [[-1]] if none are left."""
    offsets = Input.levels[0]
    parts = [_align(Input.data[offsets[i] : offsets[i + 1], 0], blank, merge_repeated) for i in range(len(offsets) - 1)]
    rows = [t for p in parts for t in p] or [-1]
    lod = np.cumsum([0] + [len(p) for p in parts])
    return {"Output": LoDTensor(np.array(rows, dtype=Input.data.dtype).reshape(-1, 1), [lod])}


def _ctc_align_padded(Input, InputLength, blank, merge_repeated, padding_value, **_):
    out = np.full(Input.shape, padding_value, dtype=Input.dtype)
    lengths = np.zeros((Input.shape[0], 1), dtype=Input.dtype)
    for b in range(Input.shape[0]):
        kept = _align(Input[b, : InputLength[b, 0]], blank, merge_repeated)
        out[b, : len(kept)], lengths[b, 0] = kept, len(kept)
    return {"Output": out, "OutputLength": lengths}


_TOKENS = np.array([[0, 1, 2, 2, 0, 4, 0, 4, 5, 0, 6, 6, 0, 0, 7, 7, 7, 0]], dtype=np.int32).reshape(-1, 1)
for _merge in (True, False):
    case(
        "ctc_align",
        {"Input": LoDTensor(_TOKENS, [[0, 11, 18]])},
        attrs={"blank": 0, "merge_repeated": _merge},
        outputs={"Output": 1},
        reference=_ctc_align_lod,
        name="lod_merged" if _merge else "lod_unmerged",
    )
case(
    "ctc_align",
    {"Input": LoDTensor(np.array([[0], [0]], dtype=np.int32), [[0, 1, 2]])},
    attrs={"blank": 0, "merge_repeated": True},
    outputs={"Output": 1},
    reference=_ctc_align_lod,
    name="lod_all_blank",
)
case(
    "ctc_align",
    {
        "Input": np.array([[0, 1, 2, 2, 0, 4], [0, 4, 5, 0, 6, 0], [0, 7, 7, 7, 0, 0]], dtype=np.int32),
        "InputLength": np.array([[6], [5], [4]], dtype=np.int32),
    },
    attrs={"blank": 0, "merge_repeated": True, "padding_value": -1},
    outputs={"Output": 1, "OutputLength": 1},
    reference=_ctc_align_padded,
    name="padded",
)


def _levenshtein(h, r):
    d = np.zeros((len(h) + 1, len(r) + 1))
    d[:, 0], d[0, :] = np.arange(len(h) + 1), np.arange(len(r) + 1)
    for i in range(1, len(h) + 1):
        for j in range(1, len(r) + 1):
            d[i, j] = min(d[i - 1, j] + 1, d[i, j - 1] + 1, d[i - 1, j - 1] + (h[i - 1] != r[j - 1]))
    return d[-1, -1]


def _edit_distance(Hyps, Refs, normalized, HypsLength=None, RefsLength=None, **_):
    if HypsLength is None:
        ho, ro = Hyps.levels[0], Refs.levels[0]
        pairs = [(Hyps.data[ho[i] : ho[i + 1], 0], Refs.data[ro[i] : ro[i + 1], 0]) for i in range(len(ho) - 1)]
    else:
        pairs = [(Hyps[b, : HypsLength[b]], Refs[b, : RefsLength[b]]) for b in range(Hyps.shape[0])]
    out = [_levenshtein(h, r) / (len(r) if normalized else 1) for h, r in pairs]
    return {"Out": np.array(out, dtype=np.float32).reshape(-1, 1), "SequenceNum": np.array([len(pairs)])}


# test_edit_distance_op.py's TestEditDistanceOp: x1 = [[12, 3, 5, 8, 2]], x2 = [[12, 4, 7, 8]]
_hyps = np.array([[12, 3, 5, 8, 2], [0, 0, 0, 0, 0]], dtype=np.int64)
_refs = np.array([[12, 4, 7, 8], [2, 0, 0, 0]], dtype=np.int64)
for _norm in (False, True):
    case(
        "edit_distance",
        {
            "Hyps": LoDTensor(np.array([1, 12, 3, 5, 8, 2], dtype=np.int64).reshape(-1, 1), [[0, 1, 6]]),
            "Refs": LoDTensor(np.array([2, 12, 4, 7, 8], dtype=np.int64).reshape(-1, 1), [[0, 1, 5]]),
        },
        attrs={"normalized": _norm},
        outputs={"SequenceNum": 1, "Out": 1},
        reference=_edit_distance,
        name="lod_normalized" if _norm else "lod",
    )
case(
    "edit_distance",
    {
        "Hyps": _hyps,
        "Refs": _refs,
        "HypsLength": np.array([5, 0], dtype=np.int64),
        "RefsLength": np.array([4, 1], dtype=np.int64),
    },
    attrs={"normalized": True},
    outputs={"SequenceNum": 1, "Out": 1},
    reference=_edit_distance,
    name="padded_with_empty_hyp",
)
