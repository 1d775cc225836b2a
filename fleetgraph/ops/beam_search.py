"""Beam search decoding, as Paddle's seq2seq models run it: beam_search (one step: each source
sentence's best `beam_size` extensions of its prefixes, over a 2-level LoD), beam_search_decode
(the hypotheses traced back through the steps' tensor arrays) and gather_tree (the same backtrace
over padded [time, batch, beam] ids and parents). None has a gradient, as in Paddle.

beam_search and beam_search_decode work on the host, as Paddle's kernels do (their outputs are
small and their LoD lives there); the candidates are ranked in one sort for every source at once.
gather_tree stays on the array module: one gather per time step over every batch and beam."""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, register_op
from ..ir.errors import FleetgraphError, fmt_shape
from ._xp import astype, dtype_name, reshape
from ._xp import host as _host
from .lod_tensor import LoDTensor, strip
from .sequence import _offsets, _sequences, _tensor
from .tensor_array import _array


def _absolute(levels) -> list[np.ndarray]:
    """Paddle's ToAbsOffset: every level's offsets as row offsets."""
    out = list(levels)
    for i in range(len(out) - 2, -1, -1):
        out[i] = out[i + 1][out[i]]
    return out


# -- beam_search ----------------------------------------------------------------------------------


def _candidates(pre_ids, pre_scores, ids, scores, end_id: int, is_accumulated: bool):
    """Each prefix row's candidates as flat (row, column, id, score, valid) arrays: every column of
    its scores (accumulated, or pre_score + log(score)), or, for a prefix that has ended, only
    (end_id, its pre_score) in column 0."""
    rows = scores.shape[0]
    s = scores.reshape(rows, -1)
    width = s.shape[1]
    pre_ids, pre_scores = pre_ids.reshape(-1), pre_scores.reshape(-1)
    ended = (pre_ids == end_id)[:, None]
    column = np.broadcast_to(np.arange(width), (rows, width))
    word = np.broadcast_to(column if ids is None else ids.reshape(rows, -1), (rows, width))
    with np.errstate(divide="ignore"):
        score = s if is_accumulated else pre_scores[:, None] + np.log(s)
    score = np.where(ended, pre_scores[:, None], score)
    word = np.where(ended, end_id, word)
    valid = ~ended | (column == 0)
    row = np.broadcast_to(np.arange(rows)[:, None], (rows, width))
    return row.ravel(), column.ravel(), word.ravel(), score.ravel(), valid.ravel()


def _beam_search(xp, pre_ids, pre_scores, ids, scores, *, level, beam_size, end_id, is_accumulated, need):
    """Paddle's BeamSearchFunctor: per source sentence (LoD level `level` of scores), the top
    beam_size candidates over all its prefixes (ties: the later prefix, then the lower column);
    each prefix's picks in score order become its rows of selected_ids/selected_scores, parent_idx
    the prefix row of each. A source whose every pick is end_id after an ended prefix is dropped."""
    seq = _sequences(scores, "beam_search: scores")
    high = _absolute(seq.levels)[level]
    values, prefix_ids = _host(seq.data), _host(strip(pre_ids)).reshape(-1)
    row, column, word, score, valid = _candidates(
        prefix_ids,
        _host(strip(pre_scores)),
        None if ids is None else _host(strip(ids)),
        values,
        end_id,
        is_accumulated,
    )
    source = np.searchsorted(high, row, side="right") - 1
    order = np.lexsort((column, -row, -score, ~valid, source))
    ranked = source[order]
    rank = np.arange(order.size) - np.searchsorted(ranked, ranked, side="left")
    picked = order[(rank < beam_size) & valid[order]]
    picked = picked[np.argsort(row[picked], kind="stable")]  # grouped by prefix, each in score order
    finished = (word[picked] == end_id) & (prefix_ids[row[picked]] == end_id)
    running = np.bincount(source[picked], weights=~finished, minlength=len(high) - 1) > 0
    picked = picked[running[source[picked]]]
    lod = (high, _offsets(np.bincount(row[picked], minlength=values.shape[0])))
    out_ids = _tensor(xp.asarray(word[picked].astype(np.int64).reshape(-1, 1)), lod)
    out_scores = _tensor(xp.asarray(score[picked].astype(values.dtype).reshape(-1, 1)), lod)
    parents = xp.asarray(row[picked].astype(np.int32)) if "parent_idx" in need else None
    return out_ids, out_scores, parents


def _beam_search_infer(ctx: InferContext) -> None:
    pre_ids, scores = ctx.input_var("pre_ids"), ctx.input_var("scores")
    if pre_ids.dtype != "int64":
        raise ctx.error(f"pre_ids '{pre_ids.name}' is {pre_ids.dtype}; expected int64")
    if ctx.attr("beam_size") < 1:
        raise ctx.error(f"beam_size {ctx.attr('beam_size')}: expected 1 or more")
    ctx.set_output("selected_ids", (-1, 1), "int64", lod_level=2)
    ctx.set_output("selected_scores", (-1, 1), scores.dtype, lod_level=2)
    ctx.set_output("parent_idx", (-1,), "int32")


register_op(
    "beam_search",
    inputs=("pre_ids", "pre_scores", "ids?", "scores"),
    outputs=("selected_ids", "selected_scores", "parent_idx?"),
    attrs={"level": 0, "beam_size": 1, "end_id": 0, "is_accumulated": True},
    infer_shape=_beam_search_infer,
    kernel=_beam_search,
    wants_outputs=True,
    takes_lod=True,
)

# -- beam_search_decode ---------------------------------------------------------------------------


def _step(value, where: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A step's (source offsets, prefix offsets, flat values) on the host."""
    if not isinstance(value, LoDTensor) or len(value.levels) != 2:
        raise FleetgraphError(f"{where}: expected a LoDTensor with 2 LoD levels (sources, prefixes)")
    return value.levels[0], value.levels[1], _host(value.data).reshape(-1)


def _backtrace(ids: list, scores: list, end_id: int):
    """Paddle's BeamSearchDecoder::Backtrace: from the last step back, each source's hypotheses
    start at its candidates of the last step it has any, and follow each candidate's prefix to
    the step before; end_id is kept only as a hypothesis' last word."""
    n_sources = len(ids[0].levels[0]) - 1
    words = [[] for _ in range(n_sources)]  # per source: per hypothesis, its words last first
    marks = [[] for _ in range(n_sources)]
    at = [np.zeros(0, np.int64) for _ in range(n_sources)]  # each hypothesis' candidate at this step
    for t in range(len(ids) - 1, -1, -1):
        sources, prefixes, word = _step(ids[t], "beam_search_decode: Ids")
        _, _, score = _step(scores[t], "beam_search_decode: Scores")
        for s in range(n_sources):
            if not at[s].size:  # no hypothesis yet: they start at this step's candidates
                at[s] = np.arange(prefixes[sources[s]], prefixes[sources[s + 1]])
                words[s] = [[] for _ in at[s]]
                marks[s] = [[] for _ in at[s]]
            for h, c in enumerate(at[s]):
                if word[c] != end_id or not words[s][h]:
                    words[s][h].append(word[c])
                    marks[s][h].append(score[c])
            at[s] = np.searchsorted(prefixes, at[s], side="right") - 1  # the prefix each came from
    return words, marks


def _decode(xp, ids, scores, *, beam_size, end_id):
    """SentenceIds/SentenceScores: each source's hypotheses, best final score first (a stable sort),
    words in order, under LoD [sources, sentences]."""
    ids, scores = _array(ids, "beam_search_decode: Ids"), _array(scores, "beam_search_decode: Scores")
    if not ids or len(ids) != len(scores):
        raise FleetgraphError(
            f"beam_search_decode: Ids holds {len(ids)} steps and Scores {len(scores)}; expected as many, at least one"
        )
    words, marks = _backtrace(ids, scores, end_id)
    sentences, lengths, per_source = [], [], []
    for hyp_words, hyp_marks in zip(words, marks):
        kept = [(w[::-1], m[::-1]) for w, m in zip(hyp_words, hyp_marks) if w]
        kept.sort(key=lambda wm: -wm[1][-1])
        sentences.extend(kept)
        lengths.extend(len(w) for w, _ in kept)
        per_source.append(len(kept))
    lod = (_offsets(np.array(per_source, np.int64)), _offsets(np.array(lengths, np.int64)))
    dtype = _host(strip(scores[0])).dtype
    flat_ids = np.array([x for w, _ in sentences for x in w], dtype=np.int64)
    flat_scores = np.array([x for _, m in sentences for x in m], dtype=dtype)
    return _tensor(xp.asarray(flat_ids), lod), _tensor(xp.asarray(flat_scores), lod)


def _decode_infer(ctx: InferContext) -> None:
    ids, scores = ctx.input_var("Ids"), ctx.input_var("Scores")
    ctx.set_output("SentenceIds", (-1,), ids.dtype, lod_level=2)
    ctx.set_output("SentenceScores", (-1,), scores.dtype, lod_level=2)


register_op(
    "beam_search_decode",
    inputs=("Ids", "Scores"),
    outputs=("SentenceIds", "SentenceScores"),
    attrs={"beam_size": 1, "end_id": 0},
    infer_shape=_decode_infer,
    kernel=_decode,
    takes_lod=True,
)

# -- gather_tree ----------------------------------------------------------------------------------


def _gather_tree(xp, ids, parents):
    """Out[t, b, k]: the id at step t on the path that ends in beam k of batch b at the last step,
    following Parents back (Paddle's gather_tree), every batch and beam at once."""
    steps, batch, beam = ids.shape
    if steps == 0:
        return ids
    base = reshape(xp, xp.arange(batch, dtype=parents.dtype) * beam, (batch, 1))
    out = [ids[steps - 1, ...]]
    parent = parents[steps - 1, ...]
    for t in range(steps - 2, -1, -1):
        index = reshape(xp, base + parent, (-1,))
        out.append(reshape(xp, xp.take(reshape(xp, ids[t, ...], (-1,)), index), (batch, beam)))
        parent = reshape(xp, xp.take(reshape(xp, parents[t, ...], (-1,)), index), (batch, beam))
    return xp.stack(out[::-1], axis=0)


def _gather_tree_infer(ctx: InferContext) -> None:
    ids, parents = ctx.check_rank("Ids", (3,)), ctx.check_rank("Parents", (3,))
    if ids != parents and all(d >= 0 for d in ids + parents):
        raise ctx.error(f"Ids {fmt_shape(ids)} and Parents {fmt_shape(parents)}: expected one shape")
    for slot in ("Ids", "Parents"):
        dtype = ctx.input_dtype(slot)
        if dtype not in ("int32", "int64"):
            raise ctx.error(f"{slot} is {dtype}; expected int32 or int64")
    ctx.set_output("Out", ids, ctx.input_dtype("Ids"))


register_op(
    "gather_tree",
    inputs=("Ids", "Parents"),
    outputs=("Out",),
    infer_shape=_gather_tree_infer,
    kernel=lambda xp, ids, parents: _gather_tree(xp, ids, astype(xp, parents, dtype_name(ids.dtype))),
)
