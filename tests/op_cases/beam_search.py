"""Cases for beam_search, beam_search_decode and gather_tree, with Paddle's unit-test values and
naive references that follow Paddle's kernels step by step (its sorted insert, its backtrace)."""

import numpy as np

from fleetgraph.ops.lod_tensor import LoDTensor

from . import NOT_DIFFERENTIABLE, NOT_EAGER, NOT_EXPORTED, case

# -- naive references ------------------------------------------------------------------------------


def _insert(top: list, item: tuple, beam_size: int) -> None:
    """Paddle's BeamSearchFunctor::Insert: `top` kept in descending (score, offset) order."""
    less = lambda a, b: a[2] < b[2] or (a[2] == b[2] and a[0] < b[0])  # noqa: E731
    if len(top) < beam_size:
        top.append(item)
    elif less(item, top[-1]):
        return
    for k in range(len(top) - 2, -1, -1):
        if less(top[k], item):
            top[k + 1] = top[k]
        else:
            top[k + 1] = item
            return
    top[0] = item


def naive_beam_search(pre_ids, pre_scores, scores, level, beam_size, end_id, is_accumulated, ids=None, **a):
    lod = scores.lod()
    absolute = [lod[-1]]
    for offsets in reversed(lod[:-1]):
        absolute.insert(0, [absolute[0][k] for k in offsets])
    high = absolute[level]
    pre_ids, pre_scores = pre_ids.reshape(-1), pre_scores.reshape(-1)
    values = np.asarray(scores).reshape(len(pre_ids), -1)
    by_row = [[] for _ in pre_ids]
    for s in range(len(high) - 1):
        top = []
        for row in range(high[s], high[s + 1]):
            if pre_ids[row] == end_id:
                _insert(top, (row, end_id, pre_scores[row]), beam_size)
                continue
            for d, v in enumerate(values[row]):
                word = d if ids is None else np.asarray(ids).reshape(len(pre_ids), -1)[row, d]
                _insert(top, (row, word, v if is_accumulated else pre_scores[row] + np.log(v)), beam_size)
        for item in top:
            by_row[item[0]].append(item)
        if all(
            item[1] == end_id and pre_ids[row] == end_id for row in range(high[s], high[s + 1]) for item in by_row[row]
        ):
            for row in range(high[s], high[s + 1]):
                by_row[row] = []
    items = [item for row in by_row for item in row]
    levels = [high, np.concatenate([[0], np.cumsum([len(r) for r in by_row])])]
    return {
        "selected_ids": LoDTensor(np.array([[i[1]] for i in items], dtype=np.int64).reshape(-1, 1), levels),
        "selected_scores": LoDTensor(np.array([[i[2]] for i in items], dtype=values.dtype).reshape(-1, 1), levels),
        "parent_idx": np.array([i[0] for i in items], dtype=np.int32),
    }


def naive_beam_search_decode(Ids, Scores, beam_size, end_id, **a):
    sources = len(Ids[0].lod()[0]) - 1
    hyps = [None] * sources  # per source: [(candidate, words, scores)]
    for t in range(len(Ids) - 1, -1, -1):
        lod0, lod1 = Ids[t].lod()
        word, score = np.asarray(Ids[t]).ravel(), np.asarray(Scores[t]).ravel()
        for s in range(sources):
            if not hyps[s]:
                hyps[s] = [[c, [], []] for p in range(lod0[s], lod0[s + 1]) for c in range(lod1[p], lod1[p + 1])]
            for h in hyps[s]:
                c = h[0]
                if word[c] != end_id or not h[1]:
                    h[1].append(word[c])
                    h[2].append(score[c])
                h[0] = next(p for p in range(len(lod1) - 1) if lod1[p] <= c < lod1[p + 1])
    ids, marks, lengths, counts = [], [], [], []
    for per_source in hyps:
        ranked = sorted((h for h in per_source or [] if h[1]), key=lambda h: -h[2][0])
        for _, w, m in ranked:
            ids.extend(reversed(w))
            marks.extend(reversed(m))
            lengths.append(len(w))
        counts.append(len(ranked))
    levels = [np.concatenate([[0], np.cumsum(counts)]), np.concatenate([[0], np.cumsum(lengths)])]
    dtype = np.asarray(Scores[0]).dtype
    return {
        "SentenceIds": LoDTensor(np.array(ids, dtype=np.int64), levels),
        "SentenceScores": LoDTensor(np.array(marks, dtype=dtype), levels),
    }


def naive_gather_tree(Ids, Parents, **a):
    out = np.zeros_like(Ids)
    steps, batch, beam = Ids.shape
    for b in range(batch):
        for k in range(beam):
            out[steps - 1, b, k] = Ids[steps - 1, b, k]
            parent = Parents[steps - 1, b, k]
            for t in range(steps - 2, -1, -1):
                out[t, b, k] = Ids[t, b, parent]
                parent = Parents[t, b, parent]
    return {"Out": out}


# -- beam_search: Paddle's test_beam_search_op.py, then ended prefixes and a finished source -------

_BEAM_OUTS = {"selected_ids": 1, "selected_scores": 1, "parent_idx": 1}
_lod = [[0, 2, 4], [0, 1, 2, 3, 4]]
_scores = np.array([[0.5, 0.3, 0.2], [0.6, 0.3, 0.1], [0.9, 0.5, 0.1], [0.7, 0.5, 0.1]], dtype=np.float32)
case(
    "beam_search",
    {
        "pre_ids": np.array([[1, 2, 3, 4]], dtype=np.int64),
        "pre_scores": np.array([[0.1, 0.2, 0.3, 0.4]], dtype=np.float32),
        "ids": LoDTensor(np.array([[4, 2, 5], [2, 1, 3], [3, 5, 2], [8, 2, 1]], dtype=np.int64), _lod),
        "scores": LoDTensor(_scores, _lod),
    },
    attrs={"beam_size": 2, "end_id": 0},
    outputs=_BEAM_OUTS,
    name="paddle",
    reference=naive_beam_search,
)
case(
    "beam_search",
    {
        "pre_ids": np.array([[0], [5], [0], [0], [7]], dtype=np.int64),
        "pre_scores": np.array([[-0.5], [-0.7], [-0.2], [-0.4], [-1.0]], dtype=np.float32),
        "scores": LoDTensor(
            np.random.default_rng(3).uniform(0.05, 1.0, (5, 4)).astype(np.float32), [[0, 2, 4, 5], [0, 1, 2, 3, 4, 5]]
        ),
    },
    attrs={"beam_size": 2, "end_id": 0, "is_accumulated": False},
    outputs=_BEAM_OUTS,
    name="ended_and_finished_log_scores",
    reference=naive_beam_search,
)
case(
    "beam_search",
    {
        "pre_ids": np.array([[3], [4], [5]], dtype=np.int64),
        "pre_scores": np.zeros((3, 1), dtype=np.float64),
        "ids": LoDTensor(np.array([[1, 2], [3, 4], [5, 6]], dtype=np.int64), [[0, 1, 3], [0, 1, 2, 3]]),
        "scores": LoDTensor(np.array([[0.4, 0.4], [0.4, 0.9], [0.4, 0.1]]), [[0, 1, 3], [0, 1, 2, 3]]),
    },
    attrs={"beam_size": 3, "end_id": 9},
    outputs=_BEAM_OUTS,
    name="ties",
    reference=naive_beam_search,
)

# -- beam_search_decode: Paddle's test_beam_search_decode_op.py -----------------------------------

_steps = [
    ([[0, 1, 2], [0, 1, 2]], [0, 0]),
    ([[0, 1, 2], [0, 2, 4]], [2, 3, 4, 5]),
    ([[0, 2, 4], [0, 2, 2, 4, 4]], [3, 1, 5, 4]),
    ([[0, 2, 4], [0, 1, 2, 3, 4]], [1, 1, 3, 5]),
    ([[0, 2, 4], [0, 0, 0, 2, 2]], [5, 1]),
]
case(
    "beam_search_decode",
    {
        "Ids": [LoDTensor(np.array(d, dtype=np.int64), lod) for lod, d in _steps],
        "Scores": [LoDTensor(np.array(d, dtype=np.float32) / 10, lod) for lod, d in _steps],
    },
    attrs={"beam_size": 2, "end_id": 1},
    outputs={"SentenceIds": 1, "SentenceScores": 1},
    name="paddle",
    reference=naive_beam_search_decode,
)

# -- gather_tree: Paddle's test_gather_tree_op.py shapes -------------------------------------------

_rng = np.random.default_rng(5)
for _name, _shape in (("paddle", (5, 2, 2)), ("wide_beam", (4, 3, 5))):
    case(
        "gather_tree",
        {
            "Ids": _rng.integers(0, 10, _shape).astype(np.int64),
            "Parents": _rng.integers(0, _shape[2], _shape).astype(np.int64),
        },
        name=_name,
        reference=naive_gather_tree,
    )

_OPS = ("beam_search", "beam_search_decode", "gather_tree")
NOT_DIFFERENTIABLE.update(dict.fromkeys(_OPS, "picks and traces back integer ids: no gradient, as in Paddle"))
NOT_EAGER.update(
    dict.fromkeys(
        ("beam_search", "beam_search_decode"), "reads and writes 2-level LoD, which eager Tensors do not carry"
    )
)
NOT_EXPORTED.update(
    dict.fromkeys(_OPS, "decoding over LoD beams (or a data-dependent backtrace) has no ONNX op; export the step model")
)
