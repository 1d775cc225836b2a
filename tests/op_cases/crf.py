"""Cases for the linear-chain CRF ops: linear_chain_crf, crf_decoding, chunk_eval. The references
follow Paddle's unit tests (test_linear_chain_crf_op.py, test_crf_decoding_op.py,
test_chunk_eval_op.py): one Python loop per sequence and per step."""

import numpy as np

from fleetgraph.ops.lod_tensor import LoDTensor, create_lod_tensor

from . import NOT_DIFFERENTIABLE, NOT_EXPORTED, case, rand

NOT_DIFFERENTIABLE.update(
    {
        "crf_decoding": "an argmax path of integer tags: piecewise constant, and Paddle registers no grad for it",
        "chunk_eval": "a metric over integer tags: piecewise constant, and Paddle registers no grad for it",
    }
)
NOT_EXPORTED.update(
    dict.fromkeys(
        ("linear_chain_crf", "crf_decoding", "chunk_eval"),
        "no ONNX exporter yet: it runs per sequence, and the LoD's offsets (or Length) bound a loop over steps",
    )
)

# -- naive references -------------------------------------------------------------------------------


def _sequences(x, length):
    """Each sequence's rows: from a LoD tensor, or the first length[i] steps of a padded batch."""
    if length is None:
        offsets = x.levels[-1]
        return [x.data[a:b] for a, b in zip(offsets[:-1], offsets[1:])]
    return [x[i, :n] for i, n in enumerate(np.ravel(length))]


def _padded_like(x, length, seqs, fill=0.0):
    """Per-sequence results laid out as `x` is: rows in order for LoD, a padded batch otherwise."""
    if length is None:
        return np.concatenate(seqs) if seqs else np.zeros((0,))
    out = np.full(np.shape(x)[:2] + np.shape(seqs[0])[1:], fill)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = s
    return out


def _crf_sequence(x, w, labels):
    """Paddle's forward for one sequence: normalised forward vectors and -log p(labels)."""
    x_max = x.max(axis=1, keepdims=True)
    x_exps, w_exps = np.exp(x - x_max), np.exp(w)
    alpha = np.zeros_like(x)
    log_p = 0.0
    for k in range(len(x)):
        prev = w_exps[0] if k == 0 else alpha[k - 1] @ w_exps[2:]
        alpha[k] = x_exps[k] * prev
        norm = alpha[k].sum()
        alpha[k] /= norm
        log_p -= x_max[k, 0] + np.log(norm)
    log_p -= np.log(alpha[-1] @ w_exps[1])
    log_p += w[0, labels[0]] + w[1, labels[-1]] + sum(x[k, labels[k]] for k in range(len(x)))
    log_p += sum(w[2 + labels[k - 1], labels[k]] for k in range(1, len(x)))
    return alpha, -log_p


def naive_linear_chain_crf(Emission, Transition, Label, Length=None, **a):
    xs, labels = _sequences(Emission, Length), _sequences(Label, Length)
    alphas, nll = [], []
    for x, y in zip(xs, labels):
        alpha, cost = _crf_sequence(x, Transition, np.ravel(y)) if len(x) else (x, 0.0)
        alphas.append(alpha)
        nll.append(cost)
    rows = Emission.data if Length is None else Emission
    exps = np.exp(rows - rows.max(axis=-1, keepdims=True))
    return {
        "Alpha": _padded_like(Emission, Length, alphas),
        "EmissionExps": exps,
        "TransitionExps": np.exp(Transition),
        "LogLikelihood": np.array(nll).reshape(-1, 1),
    }


def _viterbi(x, w):
    """Paddle's Viterbi for one sequence: the first of equal scores wins."""
    score, track = w[0] + x[0], np.zeros(x.shape, dtype=np.int64)
    for k in range(1, len(x)):
        candidates = score[:, None] + w[2:]
        track[k] = candidates.argmax(axis=0)
        score = candidates.max(axis=0) + x[k]
    path = [int(np.argmax(score + w[1]))]
    for k in range(len(x) - 1, 0, -1):
        path.insert(0, int(track[k, path[0]]))
    return np.array(path, dtype=np.int64)


def naive_crf_decoding(Emission, Transition, Label=None, Length=None, **a):
    paths = [_viterbi(x, Transition) if len(x) else np.zeros(0, np.int64) for x in _sequences(Emission, Length)]
    if Label is not None:
        paths = [(np.ravel(y) == p).astype(np.int64) for y, p in zip(_sequences(Label, Length), paths)]
    if Length is None:
        return {"ViterbiPath": LoDTensor(np.concatenate(paths).reshape(-1, 1), Emission.levels)}
    return {"ViterbiPath": _padded_like(Emission, Length, paths).astype(np.int64)}


_TAGS = {"IOB": (2, 0, 1, -1, -1), "IOE": (2, -1, 0, 1, -1), "IOBES": (4, 0, 1, 2, 3), "plain": (1, -1, -1, -1, -1)}


def _segments(ids, num_chunk_types, scheme):
    """Paddle's GetSegments: (begin, end, type) of each chunk, a step at a time."""
    n, begin, inside, end, single = _TAGS[scheme]
    other = num_chunk_types
    chunks, start, in_chunk, tag, kind = [], 0, False, -1, other
    for i, label in enumerate(ids):
        prev_tag, prev_kind, tag, kind = tag, kind, label % n, label // n
        if in_chunk and (
            kind == other
            or kind != prev_kind
            or (prev_tag in (begin, inside) and tag in (begin, single))
            or prev_tag in (end, single)
        ):
            chunks.append((start, i - 1, prev_kind))
            in_chunk = False
        if prev_kind == other:
            begins = kind != other
        else:
            begins = kind != other and (
                kind != prev_kind or tag in (begin, single) or (tag in (inside, end) and prev_tag in (end, single))
            )
        if begins:
            start, in_chunk = i, True
    if in_chunk:
        chunks.append((start, len(ids) - 1, kind))
    return chunks


def naive_chunk_eval(Inference, Label, num_chunk_types, chunk_scheme, excluded_chunk_types, SeqLength=None, **a):
    n_infer = n_label = n_correct = 0
    for out, lab in zip(_sequences(Inference, SeqLength), _sequences(Label, SeqLength)):
        chunks = [_segments(np.ravel(s).tolist(), num_chunk_types, chunk_scheme) for s in (out, lab)]
        found, truth = ({c for c in cs if c[2] not in excluded_chunk_types} for cs in chunks)
        n_infer, n_label, n_correct = n_infer + len(found), n_label + len(truth), n_correct + len(found & truth)
    precision = n_correct / n_infer if n_infer else 0.0
    recall = n_correct / n_label if n_label else 0.0
    f1 = 2 * precision * recall / (precision + recall) if n_correct else 0.0
    return {
        "Precision": np.float32([precision]),
        "Recall": np.float32([recall]),
        "F1-Score": np.float32([f1]),
        "NumInferChunks": np.int64([n_infer]),
        "NumLabelChunks": np.int64([n_label]),
        "NumCorrectChunks": np.int64([n_correct]),
    }


def _pad(x, lengths, fill=0):
    """Rows of consecutive sequences as a padded batch (Paddle's seq_pad in its tests)."""
    out = np.full((len(lengths), max(lengths), *x.shape[1:]), fill, dtype=x.dtype)
    for i, (a, n) in enumerate(zip(np.cumsum([0, *lengths]), lengths)):
        out[i, :n] = x[a : a + n]
    return out


# -- linear_chain_crf: Paddle's LoD and padded tests, smaller; an empty sequence ----------------------

_CRF_OUTPUTS = {"Alpha": 1, "EmissionExps": 1, "TransitionExps": 1, "LogLikelihood": 1}
_rng = np.random.default_rng(22)
for _name, _lod, _tags in (("lod", [3, 1, 4], 4), ("with_empty", [2, 0, 3], 3)):
    _labels = _rng.integers(0, _tags, size=(sum(_lod), 1))
    _emission, _transition = rand(sum(_lod), _tags), rand(_tags + 2, _tags, low=-0.5, high=0.5)
    case(
        "linear_chain_crf",
        {
            "Emission": create_lod_tensor(_emission, [_lod]),
            "Transition": _transition,
            "Label": create_lod_tensor(_labels, [_lod]),
        },
        outputs=_CRF_OUTPUTS,
        name=_name,
        loss_outputs=("LogLikelihood",),
        reference=naive_linear_chain_crf,
    )
_lod = [2, 4, 0, 1]
case(
    "linear_chain_crf",
    {
        "Emission": _pad(rand(7, 3, seed=4), _lod),
        "Transition": rand(5, 3, low=-0.5, high=0.5, seed=4),
        "Label": _pad(_rng.integers(0, 3, size=(7, 1)), _lod),
        "Length": np.array(_lod, dtype=np.int64),
    },
    outputs=_CRF_OUTPUTS,
    name="padded",
    loss_outputs=("LogLikelihood",),
    reference=naive_linear_chain_crf,
)

# -- crf_decoding: random weights (Paddle's TestCRFDecodingOp1/5), ties (Op2-4/6) with and without Label

_lod = [3, 1, 5]
_emission, _transition = rand(9, 6, seed=5), rand(8, 6, low=-0.5, high=0.5, seed=5)
case(
    "crf_decoding",
    {"Emission": create_lod_tensor(_emission, [_lod]), "Transition": _transition},
    outputs={"ViterbiPath": 1},
    name="lod",
    reference=naive_crf_decoding,
)
case(
    "crf_decoding",
    {"Emission": _pad(_emission, _lod), "Transition": _transition, "Length": np.array(_lod, dtype=np.int64)},
    outputs={"ViterbiPath": 1},
    name="padded",
    reference=naive_crf_decoding,
)
_ramp = np.tile(np.arange(5.0), (7, 1))  # every tag 4 in Paddle's tests with a label: ties elsewhere
_labels = _rng.integers(3, 5, size=(4, 1))
for _name, _lod in (("label", [1, 0, 0, 3]), ("label_empty_first", [0, 2, 2, 0])):
    case(
        "crf_decoding",
        {
            "Emission": create_lod_tensor(_ramp[:4], [_lod]),
            "Transition": _ramp,
            "Label": create_lod_tensor(_labels, [_lod]),
        },
        outputs={"ViterbiPath": 1},
        name=_name,
        reference=naive_crf_decoding,
    )
_lod = [1, 2, 3, 1]
case(
    "crf_decoding",
    {
        "Emission": _pad(_ramp, _lod),
        "Transition": _ramp,
        "Label": _pad(_rng.integers(3, 5, size=(7, 1)), _lod)[..., 0],
        "Length": np.array(_lod, dtype=np.int64).reshape(-1, 1),
    },
    outputs={"ViterbiPath": 1},
    name="padded_label",
    reference=naive_crf_decoding,
)

# -- chunk_eval: each scheme over random tags, an excluded type, a padded batch ------------------------

_CHUNK_OUTPUTS = dict.fromkeys(
    ("Precision", "Recall", "F1-Score", "NumInferChunks", "NumLabelChunks", "NumCorrectChunks"), 1
)
_lod = [9, 1, 0, 14, 6]
for _scheme, _types, _excluded in (("IOB", 2, []), ("IOE", 3, [1]), ("IOBES", 2, []), ("plain", 3, [0])):
    _top = _types * _TAGS[_scheme][0]  # the "other" id
    _ids = _rng.integers(0, _top + 1, size=(2, sum(_lod), 1))
    _label = np.where(_rng.random((sum(_lod), 1)) < 0.75, _ids[0], _ids[1])  # mostly right, as a tagger
    case(
        "chunk_eval",
        {"Inference": create_lod_tensor(_ids[0], [_lod]), "Label": create_lod_tensor(_label, [_lod])},
        attrs={"num_chunk_types": _types, "chunk_scheme": _scheme, "excluded_chunk_types": _excluded},
        outputs=_CHUNK_OUTPUTS,
        name=_scheme,
        reference=naive_chunk_eval,
    )
case(
    "chunk_eval",
    {
        "Inference": _pad(_ids[0], _lod, fill=-1),
        "Label": _pad(_label, _lod, fill=-1),
        "SeqLength": np.array(_lod, dtype=np.int64),
    },
    attrs={"num_chunk_types": 3, "chunk_scheme": "plain", "excluded_chunk_types": []},
    outputs=_CHUNK_OUTPUTS,
    name="padded",
    reference=naive_chunk_eval,
)
