"""Linear-chain CRF ops: linear_chain_crf (the negative log-likelihood of the label paths and its
gradient), crf_decoding (the Viterbi path) and chunk_eval (chunk precision, recall and F1).

Each takes LoD sequences or a padded batch with its lengths, and runs over time steps with every
sequence of the batch at once: a LoD input is laid out padded first (the gather sequence_pad uses),
and a mask of each sequence's steps keeps the padding out of every sum."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import FleetgraphValueError, fmt_shape
from ._xp import astype, pad, reshape
from .lod_tensor import LoDError, LoDTensor, strip
from .sequence import _sequence_var, _sequences, _tensor
from .sequence_pad import _host_ints, _unpadded
from .sequence_rows import _padded, _segments

# -- the batch: where each sequence's steps lie ---------------------------------------------------


@dataclass(frozen=True)
class _Batch:
    """`valid` (sequences x steps, on the host) marks each sequence's steps; `grid` holds their rows
    in a LoD input, None when the input is a padded batch already."""

    valid: np.ndarray
    grid: np.ndarray | None

    @property
    def last(self) -> np.ndarray:
        """The mask of each sequence's last step (none for an empty sequence)."""
        return self.valid & ~np.pad(self.valid[:, 1:], ((0, 0), (0, 1)))

    def pad(self, xp, rows, fill=0.0):
        """Rows laid out as (sequences, steps, ...), `fill` past each end; a padded input as it is."""
        return rows if self.grid is None else _padded(xp, rows, self.grid, self.valid, fill)

    def unpad(self, xp, padded):
        """A padded result laid out as the input was: its rows for a LoD input."""
        return padded if self.grid is None else _unpadded(xp, padded, self.valid)


def _batch(xp, sequences, length, steps: int, where: str) -> _Batch:
    """The batch of `sequences` (a LoD input), or of a padded input of `steps` steps with `length`."""
    if length is None:
        offsets = _sequences(sequences, where, levels=1).offsets
        grid, valid, _ = _segments(offsets, max(1, int(np.diff(offsets).max(initial=0))))  # a step at least
        return _Batch(valid, grid)
    lengths = _host_ints(reshape(xp, strip(length), (-1,)))
    if (lengths < 0).any() or (lengths > steps).any():
        raise LoDError(f"{where}: Length {lengths.tolist()}; expected lengths between 0 and {steps}, the padded steps")
    return _Batch(np.arange(steps) < lengths[:, None], None)


def _ids(xp, batch: _Batch, ids, rows: int):
    """Integer ids (labels, tags) as (sequences, steps): rows [N, 1] of a LoD input padded with 0,
    or a padded [B, S] or [B, S, 1] input."""
    if batch.grid is None:
        return reshape(xp, strip(ids), batch.valid.shape)
    return batch.pad(xp, reshape(xp, strip(ids), (rows,)), 0)


def _check_ids(xp, ids, valid, high: int, where: str) -> None:
    """Each id at a sequence's step lies in [0, high]."""
    if not valid.any():
        return
    mask = xp.asarray(valid)
    low, top = int(xp.min(xp.where(mask, ids, 0))), int(xp.max(xp.where(mask, ids, 0)))
    if low < 0 or top > high:
        raise LoDError(f"{where} holds {low if low < 0 else top}; expected ids between 0 and {high}")


def _one_hot(xp, ids, valid, tags: int, dtype):
    """(sequences, steps, tags): 1 at each step's id, zeros past each sequence's end."""
    hits = (ids[..., None] == xp.arange(tags, dtype=ids.dtype)) & xp.asarray(valid)[..., None]
    return astype(xp, hits, dtype)


def _transition_tags(ctx: InferContext) -> int:
    """The tag number D of a Transition [D + 2, D] (-1 while unknown)."""
    t = ctx.input_var("Transition")
    if len(t.shape) != 2 or (min(t.shape) >= 0 and t.shape[0] != t.shape[1] + 2):
        raise ctx.error(f"Transition '{t.name}' {fmt_shape(t.shape)}: expected [D + 2, D] for D tags")
    return t.shape[1]


def _emission(ctx: InferContext):
    """Emission [N, D] of a LoD batch, or [B, S, D] with Length; its D matches Transition's."""
    e, tags = ctx.input_var("Emission"), _transition_tags(ctx)
    want = 3 if ctx.has_input("Length") else 2
    if len(e.shape) != want:
        form = "[B, S, D] with Length" if want == 3 else "[N, D] over LoD sequences, without Length"
        raise ctx.error(f"Emission '{e.name}' {fmt_shape(e.shape)}: expected {form}")
    if min(tags, e.shape[-1]) >= 0 and e.shape[-1] != tags:
        raise ctx.error(f"Emission '{e.name}' {fmt_shape(e.shape)} has {e.shape[-1]} tags; Transition has {tags}")
    return e


def _label_var(ctx: InferContext, slot: str = "Label"):
    var = ctx.input_var(slot) if ctx.has_input("Length") else _sequence_var(ctx, slot)
    if var.dtype != "int64":
        raise ctx.error(f"{slot} '{var.name}' is {var.dtype}; expected int64 tag ids")
    return var


# -- linear_chain_crf -----------------------------------------------------------------------------


def _crf_infer(ctx: InferContext) -> None:
    e = _emission(ctx)
    _label_var(ctx)
    ctx.set_output("Alpha", e.shape, e.dtype, lod_level=0)
    ctx.set_output("EmissionExps", e.shape, e.dtype, lod_level=0)
    ctx.set_output("TransitionExps", ctx.input_var("Transition").shape, e.dtype)
    ctx.set_output("LogLikelihood", (-1, 1), e.dtype, lod_level=0)


def _crf_plan(xp, emission, label, length, where: str):
    """The batch, labels (sequences, steps) and their one-hot rows, after checking each label."""
    rows = strip(emission)
    batch = _batch(xp, label, length, rows.shape[1] if length is not None else 0, f"{where}: Label")
    labels = _ids(xp, batch, label, rows.shape[0])
    tags = rows.shape[-1]
    _check_ids(xp, labels, batch.valid, tags - 1, f"{where}: Label")
    return batch, _one_hot(xp, labels, batch.valid, tags, rows.dtype)


def _crf(xp, emission, transition, label, length):
    """LogLikelihood[i] = log Z_i - score of label path i (Paddle's LogLikelihood holds the negative
    log-likelihood, the cost to minimise; 0 for an empty sequence). Alpha holds the forward vectors,
    each step's normalised to sum 1 as Paddle's, EmissionExps exp(Emission - its row maximum)."""
    rows = strip(emission)
    batch, hot = _crf_plan(xp, emission, label, length, "linear_chain_crf")
    row_max = xp.max(rows, axis=-1, keepdims=True)
    emission_exps = xp.exp(rows - row_max)
    transition_exps = xp.exp(transition)
    x = batch.pad(xp, rows)
    x_exps, x_max = batch.pad(xp, emission_exps, 1.0), batch.pad(xp, row_max[..., 0])
    valid, last = xp.asarray(batch.valid), astype(xp, xp.asarray(batch.last), rows.dtype)
    start, end, trans = transition_exps[0, :], transition_exps[1, :], transition_exps[2:, :]
    # step 1: the forward vectors, normalised each step (Paddle's NormalizeL1), log Z from the norms
    alpha = start * x_exps[:, 0, :]
    norm = xp.sum(alpha, axis=1)
    alphas, log_z = [alpha / norm[:, None]], x_max[:, 0] + xp.log(norm)
    for k in range(1, x.shape[1]):
        alpha = x_exps[:, k, :] * (alphas[-1] @ trans)
        norm = xp.sum(alpha, axis=1)
        alphas.append(alpha / norm[:, None])
        log_z = log_z + xp.where(valid[:, k], x_max[:, k] + xp.log(norm), 0.0)
    alpha = xp.stack(alphas, axis=1) * astype(xp, valid, rows.dtype)[..., None]
    nonempty = xp.asarray(batch.valid.any(axis=1))
    final = xp.sum(xp.sum(alpha * last[..., None], axis=1) * end, axis=1)
    log_z = log_z + xp.log(xp.where(nonempty, final, 1.0))
    # step 2: the score of the label path: start, emissions, transitions between labels, end
    score = xp.sum(x * hot, axis=(1, 2)) + xp.sum(hot[:, 0, :] * transition[0, :], axis=1)
    score = score + xp.sum(xp.sum(hot * last[..., None], axis=1) * transition[1, :], axis=1)
    score = score + xp.sum((hot[:, :-1, :] @ transition[2:, :]) * hot[:, 1:, :], axis=(1, 2))
    nll = xp.where(nonempty, log_z - score, 0.0)
    return batch.unpad(xp, alpha), emission_exps, transition_exps, reshape(xp, nll, (-1, 1))


def _crf_grad(xp, emission, transition, label, length, alpha, emission_exps, transition_exps, dnll):
    """Emission@GRAD = g * (marginal of each tag at each step - the label's one-hot); Transition@GRAD
    = g * (expected - observed counts of each start, end and tag pair), g each sequence's
    LogLikelihood@GRAD. The marginals come from Alpha and backward vectors normalised as Alpha."""
    rows = strip(emission_exps)
    batch, hot = _crf_plan(xp, emission, label, length, "linear_chain_crf_grad")
    x_exps, alpha = batch.pad(xp, rows, 1.0), batch.pad(xp, strip(alpha))
    valid, last = xp.asarray(batch.valid), xp.asarray(batch.last)
    end, trans = transition_exps[1, :], transition_exps[2:, :]
    # step 1: the backward vectors, from each sequence's last step back to its first
    end = xp.broadcast_to(end / xp.sum(end), alpha.shape[:1] + alpha.shape[2:])
    betas = [end]
    for k in range(x_exps.shape[1] - 2, -1, -1):
        beta = (x_exps[:, k + 1, :] * betas[0]) @ trans.T
        betas.insert(0, xp.where(last[:, k, None], end, beta / xp.sum(beta, axis=1, keepdims=True)))
    beta = xp.stack(betas, axis=1)
    # step 2: the emissions' gradient, zero past each end
    g = reshape(xp, strip(dnll), (-1,))[:, None, None] * astype(xp, valid, rows.dtype)[..., None]
    marginal = alpha * beta
    marginal = marginal / xp.where(valid[..., None], xp.sum(marginal, axis=2, keepdims=True), 1.0)
    dx = (marginal - hot) * g
    # step 3: the transitions' gradient: start and end rows from dx, tag pairs from adjacent steps
    tags = dx.shape[-1]
    ends = xp.stack([xp.sum(dx[:, 0, :], axis=0), xp.sum(dx * astype(xp, last, rows.dtype)[..., None], axis=(0, 1))])
    nxt = beta * x_exps
    nxt = (nxt / xp.sum(nxt, axis=2, keepdims=True))[:, 1:, :]
    pair_valid = valid[:, 1:, None]
    z = xp.sum((alpha[:, :-1, :] @ trans) * nxt, axis=2, keepdims=True)
    weight = xp.where(pair_valid, g[:, 1:, :] / xp.where(pair_valid, z, 1.0), 0.0)
    expected = reshape(xp, alpha[:, :-1, :] * weight, (-1, tags)).T @ reshape(xp, nxt, (-1, tags))
    observed = reshape(xp, hot[:, :-1, :] * g[:, :-1, :], (-1, tags)).T @ reshape(xp, hot[:, 1:, :], (-1, tags))
    dtransition = pad(xp, ends, ((0, tags), (0, 0))) + pad(xp, expected * trans - observed, ((2, 0), (0, 0)))
    dx = batch.unpad(xp, dx)
    return (emission.with_data(dx) if isinstance(emission, LoDTensor) else dx), dtransition


_CRF_INPUTS = ("Emission", "Transition", "Label", "Length?")
register_op(
    "linear_chain_crf",
    inputs=_CRF_INPUTS,
    outputs=("Alpha", "EmissionExps", "TransitionExps", "LogLikelihood"),
    infer_shape=_crf_infer,
    grad=make_grad_op(
        inputs=(*(s.rstrip("?") for s in _CRF_INPUTS), "Alpha", "EmissionExps", "TransitionExps", "LogLikelihood@GRAD"),
        outputs=("Emission@GRAD", "Transition@GRAD"),
    ),
    kernel=_crf,
    takes_lod=True,
)
register_op(
    "linear_chain_crf_grad",
    inputs=(*_CRF_INPUTS, "Alpha", "EmissionExps", "TransitionExps", "LogLikelihood@GRAD"),
    outputs=("Emission@GRAD", "Transition@GRAD"),
    kernel=_crf_grad,
    takes_lod=True,
)

# -- crf_decoding ---------------------------------------------------------------------------------


def _decoding_infer(ctx: InferContext) -> None:
    e = _emission(ctx)
    if not ctx.has_input("Length"):
        _sequence_var(ctx, "Emission")
    if ctx.has_input("Label"):
        _label_var(ctx)
    shape = e.shape[:2] if ctx.has_input("Length") else (e.shape[0], 1)
    ctx.set_output("ViterbiPath", shape, "int64", lod_level=e.lod_level)


def _decoding(xp, emission, transition, label, length):
    """ViterbiPath holds each sequence's best tag path (first of equal scores, as Paddle's `>`), 0
    past each end; with Label, 1 where the path's tag equals the label, else 0."""
    rows = strip(emission)
    batch = _batch(xp, emission, length, rows.shape[1] if length is not None else 0, "crf_decoding: Emission")
    x, valid = batch.pad(xp, rows), xp.asarray(batch.valid)
    trans = transition[2:, :]
    # step 1: the best score ending in each tag, step by step; a sequence's score stops at its end
    score, tracks = transition[0, :] + x[:, 0, :], []
    for k in range(1, x.shape[1]):
        candidates = score[:, :, None] + trans
        tracks.append(xp.argmax(candidates, axis=1))
        score = xp.where(valid[:, k, None], xp.max(candidates, axis=1) + x[:, k, :], score)
    # step 2: back from each sequence's best last tag
    tag = xp.argmax(score + transition[1, :], axis=1)
    path = [tag]
    for k in range(x.shape[1] - 2, -1, -1):
        back = xp.take_along_axis(tracks[k], tag[:, None], axis=1)[:, 0]
        tag = xp.where(valid[:, k + 1], back, tag)
        path.insert(0, tag)
    path = astype(xp, xp.stack(path, axis=1), "int64") * astype(xp, valid, "int64")
    if label is not None:
        hits = _ids(xp, batch, label, rows.shape[0]) == path
        path = astype(xp, hits, "int64") * astype(xp, valid, "int64")
    if batch.grid is None:
        return path
    return _tensor(reshape(xp, batch.unpad(xp, path), (-1, 1)), emission.levels)


register_op(
    "crf_decoding",
    inputs=("Emission", "Transition", "Label?", "Length?"),
    outputs=("ViterbiPath",),
    infer_shape=_decoding_infer,
    kernel=_decoding,
    takes_lod=True,
)

# -- chunk_eval -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Scheme:
    """A tagging scheme: tag ids per chunk type, and which tag id begins, continues, ends a chunk or
    stands alone (-1: the scheme has no such tag). id = chunk type * tags + tag."""

    tags: int
    begin: int
    inside: int
    end: int
    single: int


_SCHEMES = {
    "IOB": _Scheme(2, 0, 1, -1, -1),
    "IOE": _Scheme(2, -1, 0, 1, -1),
    "IOBES": _Scheme(4, 0, 1, 2, 3),
    "plain": _Scheme(1, -1, -1, -1, -1),
}


def _chunk_eval_infer(ctx: InferContext) -> None:
    if ctx.attr("chunk_scheme") not in _SCHEMES:
        raise ctx.error(f"chunk_scheme {ctx.attr('chunk_scheme')!r}; expected one of {', '.join(_SCHEMES)}")
    inference, label = ctx.input_var("Inference"), ctx.input_var("Label")
    if tuple(inference.shape) != tuple(label.shape):
        raise ctx.error(
            f"Inference {fmt_shape(inference.shape)} and Label {fmt_shape(label.shape)}: expected one shape"
        )
    for slot in ("Inference", "Label"):
        var = ctx.input_var(slot) if ctx.has_input("SeqLength") else _sequence_var(ctx, slot)
        if var.dtype != "int64":
            raise ctx.error(f"{slot} '{var.name}' is {var.dtype}; expected int64 tag ids")
    for slot in ("Precision", "Recall", "F1-Score"):
        ctx.set_output(slot, (1,), "float32")
    for slot in ("NumInferChunks", "NumLabelChunks", "NumCorrectChunks"):
        ctx.set_output(slot, (1,), "int64")


def _chunks(xp, ids, valid, scheme: _Scheme, other: int):
    """Per step: whether a chunk begins there, whether one ends there, and the step's chunk type
    (`other` outside chunks and past each end). Paddle's ChunkBegin and ChunkEnd, evaluated at every
    step against its neighbours: a step inside a chunk is always inside one that began (a begin
    always ends the chunk before it), so no scan is needed."""
    kind = xp.where(xp.asarray(valid), ids // scheme.tags, other)
    tag = ids % scheme.tags
    prev_tag, prev_kind = pad(xp, tag[:, :-1], ((0, 0), (1, 0)), -1), pad(xp, kind[:, :-1], ((0, 0), (1, 0)), other)
    next_tag, next_kind = pad(xp, tag[:, 1:], ((0, 0), (0, 1)), -1), pad(xp, kind[:, 1:], ((0, 0), (0, 1)), other)
    after_end = (prev_tag == scheme.end) | (prev_tag == scheme.single)
    begins = (prev_kind == other) | (prev_kind != kind) | (tag == scheme.begin) | (tag == scheme.single)
    begins = begins | (((tag == scheme.inside) | (tag == scheme.end)) & after_end)
    restart = (next_tag == scheme.begin) | (next_tag == scheme.single)
    closes = ((tag == scheme.begin) | (tag == scheme.inside)) & restart | (tag == scheme.end) | (tag == scheme.single)
    ends = (next_kind == other) | (next_kind != kind) | closes
    inside = kind != other
    return begins & inside, ends & inside, kind


def _chunk_eval(xp, inference, label, seq_length, *, num_chunk_types, chunk_scheme, excluded_chunk_types):
    """Chunks of Inference and Label and the number in both (same first and last step and type),
    leaving out excluded chunk types; precision, recall and F1 from those numbers (0 for none)."""
    if chunk_scheme not in _SCHEMES:
        raise FleetgraphValueError(f"chunk_eval: chunk_scheme {chunk_scheme!r}; expected one of {', '.join(_SCHEMES)}")
    scheme, other = _SCHEMES[chunk_scheme], num_chunk_types
    rows = strip(label)
    steps = rows.shape[1] if seq_length is not None else 0
    batch = _batch(xp, label, seq_length, steps, "chunk_eval: Label")
    if seq_length is None:
        if not np.array_equal(_sequences(inference, "chunk_eval: Inference", levels=1).offsets, label.offsets):
            raise LoDError(f"chunk_eval: Inference's LoD {inference.lod()} and Label's {label.lod()}; expected one LoD")
    found = {}
    for slot, value in (("Inference", inference), ("Label", label)):
        ids = _ids(xp, batch, value, rows.shape[0])
        _check_ids(xp, ids, batch.valid, num_chunk_types * scheme.tags, f"chunk_eval: {slot}")
        begins, ends, kind = _chunks(xp, ids, batch.valid, scheme, other)
        kept = kind != other
        for excluded in excluded_chunk_types:
            kept = kept & (kind != excluded)
        found[slot] = begins, ends, kind, kept
    (b_inf, e_inf, k_inf, kept), (b_lab, e_lab, k_lab, kept_lab) = found["Inference"], found["Label"]
    # a chunk of Inference is correct when Label begins, ends and types every one of its steps alike;
    # the steps run with every sequence at once, as the forward algorithm's do
    alike = (b_inf == b_lab) & (e_inf == e_lab) & (k_inf == k_lab)
    correct, closed = xp.zeros(b_inf.shape[:1], dtype=xp.bool), []
    for k in range(b_inf.shape[1]):
        correct = xp.where(b_inf[:, k], alike[:, k], correct & alike[:, k])
        closed.append(correct & e_inf[:, k] & kept[:, k])
    counts = [int(xp.sum(astype(xp, c, "int64"))) for c in (xp.stack(closed), b_inf & kept, b_lab & kept_lab)]
    num_correct, num_infer, num_label = (np.float32(c) for c in counts)
    precision = num_correct / num_infer if num_infer else np.float32(0)
    recall = num_correct / num_label if num_label else np.float32(0)
    f1 = 2 * precision * recall / (precision + recall) if num_correct else np.float32(0)
    floats = (xp.asarray([v], dtype=xp.float32) for v in (precision, recall, f1))
    ints = (xp.asarray([c], dtype=xp.int64) for c in (counts[1], counts[2], counts[0]))
    return (*floats, *ints)


register_op(
    "chunk_eval",
    inputs=("Inference", "Label", "SeqLength?"),
    outputs=("Precision", "Recall", "F1-Score", "NumInferChunks", "NumLabelChunks", "NumCorrectChunks"),
    attrs={"num_chunk_types": 1, "chunk_scheme": "IOB", "excluded_chunk_types": []},
    infer_shape=_chunk_eval_infer,
    kernel=_chunk_eval,
    takes_lod=True,
)
