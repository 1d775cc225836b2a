"""CTC loss and decoding and edit distance: warpctc (the CTC loss of unnormalized logits and its
gradient, as Baidu's warp-ctc computes them), ctc_align (merge repeats, drop blanks) and
edit_distance (Levenshtein distances of token sequences).

Each takes LoD sequences or a padded batch with its lengths. warpctc runs the forward (alpha) and
backward (beta) recursions in log space over time steps with every sequence of the batch at once,
so its kernels are array code; ctc_align and edit_distance work on the host on small integer
sequences (their outputs' sizes depend on the values)."""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, make_grad_op, register_op
from ..ir.errors import fmt_shape
from ._xp import astype, dtype_name, full, host, largest, reshape, total
from .lod_tensor import LoDError, LoDTensor
from .sequence import _sequences, _tensor
from .sequence_pad import _host_ints, _unpadded
from .sequence_rows import _padded, _segments

# -- warpctc ------------------------------------------------------------------------------------


def _warpctc_infer(ctx: InferContext) -> None:
    logits = ctx.input_var("Logits")
    padded = ctx.has_input("LogitsLength")
    if padded != ctx.has_input("LabelLength"):
        raise ctx.error("LogitsLength and LabelLength: expected both (a padded batch) or neither (LoD input)")
    want = 3 if padded else 2
    if len(logits.shape) != want:
        form = "[max_time, batch, classes] with LogitsLength" if padded else "[total_time, classes] with LoD"
        raise ctx.error(f"Logits '{logits.name}' {fmt_shape(logits.shape)}: expected {form}")
    batch = logits.shape[1] if padded else -1
    ctx.set_output("Loss", (batch, 1), logits.dtype)
    ctx.set_output("WarpCTCGrad", (-1, batch, logits.shape[-1]), logits.dtype)


def _lengths(xp, value) -> np.ndarray:
    return _host_ints(reshape(xp, value.data if isinstance(value, LoDTensor) else value, (-1,)))


def _time_major(xp, logits, logits_length):
    """Logits as [max_time, batch, classes] and each sequence's steps (host ints)."""
    if logits_length is not None:
        return (logits.data if isinstance(logits, LoDTensor) else logits), _lengths(xp, logits_length)
    offsets = _sequences(logits, "warpctc: Logits", levels=1).levels[0]
    grid, valid, _ = _segments(offsets, max(1, int(np.diff(offsets).max(initial=0))))
    padded = _padded(xp, logits.data, grid, valid, 0.0)  # [batch, time, classes]
    return xp.permute_dims(padded, (1, 0, 2)), np.diff(offsets)


def _labels(xp, label, label_length, batch: int) -> tuple[np.ndarray, np.ndarray]:
    """The label ids as a host [batch, max_label] table and each sequence's label count."""
    if label_length is not None:
        lengths = _lengths(xp, label_length)
        table = host(label.data if isinstance(label, LoDTensor) else label).reshape(batch, -1)
        return table.astype(np.int64), lengths
    offsets = _sequences(label, "warpctc: Label", levels=1).levels[0]
    lengths = np.diff(offsets)
    if lengths.size != batch:
        raise LoDError(f"warpctc: Label holds {lengths.size} sequences; expected {batch}, one per Logits sequence")
    flat = host(label.data).reshape(-1).astype(np.int64)
    grid, valid, _ = _segments(offsets, max(1, int(lengths.max(initial=0))))
    return np.where(valid, flat[grid] if flat.size else 0, 0), lengths


def _logsumexp(xp, a, axis: int):
    """log(sum(exp(a))) over `axis`, -inf where every term is -inf."""
    top = largest(xp, a, axis, keepdims=True)
    empty = xp.isinf(top)
    safe = xp.where(empty, xp.zeros_like(top), top)
    sums = total(xp, xp.exp(a - safe), axis, keepdims=True)
    out = safe + xp.log(xp.where(empty, xp.ones_like(sums), sums))
    return xp.squeeze(xp.where(empty, top, out), axis=axis)


def _moved(xp, a, by: int, fill):
    """a [batch, S] with a[:, s - by] at s (by > 0, `fill` coming in) or a[:, s + |by|] (by < 0)."""
    pad = full(xp, (a.shape[0], abs(by)), fill, a.dtype)
    return xp.concat([pad, a[:, :-by]], axis=1) if by > 0 else xp.concat([a[:, -by:], pad], axis=1)


class _Lattice:
    """The CTC lattice of a batch: the extended labels l' = (blank, l1, blank, l2, ..., blank) of
    each sequence padded to S = 2 L_max + 1, which positions each holds, and which positions may be
    reached by skipping a blank (l'(s) not blank and not l'(s - 2))."""

    def __init__(self, xp, table: np.ndarray, label_lengths: np.ndarray, blank: int) -> None:
        batch, width = table.shape
        self.ext = np.full((batch, 2 * width + 1), blank, dtype=np.int64)
        self.ext[:, 1::2] = table
        self.s_len = 2 * label_lengths + 1
        pos = np.arange(self.ext.shape[1])
        skip = np.zeros(self.ext.shape, dtype=bool)
        skip[:, 2:] = (self.ext[:, 2:] != blank) & (self.ext[:, 2:] != self.ext[:, :-2])
        self.inside = xp.asarray(pos < self.s_len[:, None])
        self.skip_in = xp.asarray(skip)  # s - 2 -> s allowed
        self.skip_out = xp.asarray(np.concatenate([skip[:, 2:], np.zeros((batch, 2), dtype=bool)], axis=1))
        self.starts = xp.asarray(pos < np.minimum(2, self.s_len)[:, None])
        self.ends = xp.asarray((pos >= self.s_len[:, None] - 2) & (pos < self.s_len[:, None]))
        within = np.arange(width)[None, 1:] < label_lengths[:, None]
        repeats = ((table[:, 1:] == table[:, :-1]) & within).sum(1) if width > 1 else np.zeros(batch, np.int64)
        self.min_steps = label_lengths + repeats  # fewer steps cannot emit the labels

    def step(self, xp, prev, lp_t, forward: bool, none):
        """alpha_t from alpha_{t-1} (forward) or beta_t from beta_{t+1}, in log space."""
        by, skip = (1, self.skip_in) if forward else (-1, self.skip_out)
        neg = -float("inf")
        terms = xp.stack([prev, _moved(xp, prev, by, neg), xp.where(skip, _moved(xp, prev, 2 * by, neg), none)])
        return xp.where(self.inside, _logsumexp(xp, terms, 0) + lp_t, none)


def _ctc(xp, logits, label, logits_length, label_length, blank: int):
    """(loss [batch, 1], d loss / d logits [max_time, batch, classes]) of the CTC loss (Graves et
    al. 2006): alpha and beta over the lattice, the gradient softmax - sum of alpha beta / (y p)
    per class, zero past each sequence's end. A sequence too short for its labels costs 0 and
    gets no gradient, as warp-ctc leaves it."""
    x, steps = _time_major(xp, logits, logits_length)
    t_max, batch, classes = x.shape
    lat = _Lattice(xp, *_labels(xp, label, label_length, batch), blank)
    shifted = x - largest(xp, x, -1, keepdims=True)
    log_probs = shifted - xp.log(total(xp, xp.exp(shifted), -1, keepdims=True))  # [T, B, C]
    index = xp.asarray(np.broadcast_to(lat.ext, (t_max, *lat.ext.shape)).copy())
    lp = xp.take_along_axis(log_probs, index, axis=-1)  # [T, B, S]: log y of l'(s) at t
    none = full(xp, lat.ext.shape, -float("inf"), x.dtype)
    alphas = [xp.where(lat.starts, lp[0, ...], none)]
    for t in range(1, t_max):  # a sequence past its end keeps its last alpha
        alphas.append(
            xp.where(xp.asarray((t < steps)[:, None]), lat.step(xp, alphas[-1], lp[t, ...], True, none), alphas[-1])
        )
    alpha = xp.stack(alphas)
    last = xp.asarray(np.broadcast_to(np.clip(steps - 1, 0, None)[None, :, None], (1, batch, lat.ext.shape[1])).copy())
    final = xp.take_along_axis(alpha, last, axis=0)[0, ...]
    possible = xp.asarray((steps >= lat.min_steps)[:, None])
    loss = -reshape(xp, _logsumexp(xp, xp.where(lat.ends, final, none), 1), (batch, 1))
    loss = xp.where(possible, loss, xp.zeros_like(loss))
    betas, beta = [], none
    for t in range(t_max - 1, -1, -1):  # each sequence starts its beta at its own last step
        beta = xp.where(
            xp.asarray((t == steps - 1)[:, None]),
            xp.where(lat.ends, lp[t, ...], none),
            lat.step(xp, beta, lp[t, ...], False, none),
        )
        betas.append(beta)
    beta = xp.stack(betas[::-1])
    occupancy = xp.exp(alpha + beta - lp + reshape(xp, loss, (1, batch, 1)))  # alpha beta / (y p)
    one_hot = xp.asarray((lat.ext[:, :, None] == np.arange(classes)).astype(dtype_name(x.dtype)))
    per_class = xp.permute_dims(xp.matmul(xp.permute_dims(occupancy, (1, 0, 2)), one_hot), (1, 0, 2))
    live = xp.asarray(((np.arange(t_max)[:, None] < steps) & (steps >= lat.min_steps)).reshape(t_max, batch, 1))
    return loss, xp.where(live, xp.exp(log_probs) - per_class, xp.zeros_like(x))


def _warpctc(xp, logits, label, logits_length, label_length, *, blank, norm_by_times):
    loss, grad = _ctc(xp, logits, label, logits_length, label_length, blank)
    return grad, loss


def _warpctc_grad(xp, warpctc_grad, logits, dloss, logits_length, *, blank, norm_by_times):
    """The saved gradient times each sequence's loss gradient (over its steps with norm_by_times),
    laid out as Logits: padded, or its LoD rows."""
    grad = warpctc_grad.data if isinstance(warpctc_grad, LoDTensor) else warpctc_grad
    dloss = dloss.data if isinstance(dloss, LoDTensor) else dloss
    steps = _lengths(xp, logits_length) if logits_length is not None else np.diff(logits.levels[0])
    scale = reshape(xp, dloss, (1, -1, 1))
    if norm_by_times:
        scale = scale / xp.asarray(np.maximum(steps, 1).reshape(1, -1, 1).astype(np.float64))
    d = astype(xp, grad * scale, grad.dtype)
    if logits_length is not None:
        return d
    valid = np.arange(grad.shape[0]) < steps[:, None]
    return _tensor(_unpadded(xp, xp.permute_dims(d, (1, 0, 2)), valid), logits.levels)


_CTC_ATTRS = {"blank": 0, "norm_by_times": False}
register_op(
    "warpctc",
    inputs=("Logits", "Label", "LogitsLength?", "LabelLength?"),
    outputs=("WarpCTCGrad", "Loss"),
    attrs=_CTC_ATTRS,
    infer_shape=_warpctc_infer,
    grad=make_grad_op(inputs=("WarpCTCGrad", "Logits", "Loss@GRAD", "LogitsLength"), outputs=("Logits@GRAD",)),
    kernel=_warpctc,
    takes_lod=True,
)
register_op(
    "warpctc_grad",
    inputs=("WarpCTCGrad", "Logits", "Loss@GRAD", "LogitsLength?"),
    outputs=("Logits@GRAD",),
    attrs=_CTC_ATTRS,
    kernel=_warpctc_grad,
    takes_lod=True,
)

# -- ctc_align: merge repeated tokens, drop blanks ----------------------------------------------------


def _ctc_align_infer(ctx: InferContext) -> None:
    x = ctx.input_var("Input")
    ctx.set_output("Output", x.shape, x.dtype, lod_level=x.lod_level)
    ctx.set_output("OutputLength", (x.shape[0], 1), x.dtype)


def _aligned(tokens: np.ndarray, blank: int, merge_repeated: bool) -> np.ndarray:
    """The tokens that are not blank and, with merge_repeated, differ from the token before."""
    prev = np.concatenate([[-1], tokens[:-1]]).astype(tokens.dtype)
    return tokens[(tokens != blank) & ~(merge_repeated & (tokens == prev))]


def _ctc_align(xp, x, length, *, blank, merge_repeated, padding_value):
    """A LoD input gives LoD output (one [[-1]] row when every sequence comes out empty, as Paddle);
    a padded [batch, time] input with InputLength gives a padded output and OutputLength."""
    data = host(x.data if isinstance(x, LoDTensor) else x)
    if length is None:
        offsets = _sequences(x, "ctc_align: Input", levels=1).levels[0]
        flat = data.reshape(-1)
        parts = [_aligned(flat[a:b], blank, merge_repeated) for a, b in zip(offsets[:-1], offsets[1:])]
        out_offsets = np.concatenate([[0], np.cumsum([p.size for p in parts])]).astype(np.int64)
        rows = np.concatenate(parts) if out_offsets[-1] else np.array([-1])
        return LoDTensor(xp.asarray(rows.astype(data.dtype).reshape(-1, 1)), [out_offsets]), None
    lengths = _lengths(xp, length)
    out = np.full(data.shape, padding_value, dtype=data.dtype)
    counts = np.zeros((data.shape[0], 1), dtype=data.dtype)
    for b in range(data.shape[0]):
        kept = _aligned(data[b, : lengths[b]], blank, merge_repeated)
        out[b, : kept.size], counts[b, 0] = kept, kept.size
    return xp.asarray(out), xp.asarray(counts)


register_op(
    "ctc_align",
    inputs=("Input", "InputLength?"),
    outputs=("Output", "OutputLength?"),
    attrs={"blank": 0, "merge_repeated": True, "padding_value": 0},
    infer_shape=_ctc_align_infer,
    kernel=_ctc_align,
    takes_lod=True,
)

# -- edit_distance ----------------------------------------------------------------------------------


def _edit_distance_infer(ctx: InferContext) -> None:
    if ctx.has_input("HypsLength") != ctx.has_input("RefsLength"):
        raise ctx.error("HypsLength and RefsLength: expected both (padded input) or neither (LoD input)")
    ctx.set_output("Out", (-1, 1), "float32")
    ctx.set_output("SequenceNum", (1,), "int64")


def _levenshtein(hyp: np.ndarray, ref: np.ndarray) -> int:
    """Insertions, deletions and substitutions turning hyp into ref, one DP row at a time."""
    if hyp.size == 0 or ref.size == 0:
        return int(max(hyp.size, ref.size))
    row = np.arange(ref.size + 1)
    for i, token in enumerate(hyp, 1):
        prev, row = row, np.empty_like(row)
        row[0] = i
        subs = prev[:-1] + (ref != token)
        for j in range(1, ref.size + 1):
            row[j] = min(prev[j] + 1, row[j - 1] + 1, subs[j - 1])
    return int(row[-1])


def _token_lists(xp, x, length, where: str) -> list[np.ndarray]:
    data = host(x.data if isinstance(x, LoDTensor) else x)
    if length is None:
        offsets = _sequences(x, where, levels=1).levels[0]
        flat = data.reshape(-1)
        return [flat[a:b] for a, b in zip(offsets[:-1], offsets[1:])]
    return [data[b, :n] for b, n in enumerate(_lengths(xp, length))]


def _edit_distance(xp, hyps, refs, hyps_length, refs_length, *, normalized):
    hyp_lists = _token_lists(xp, hyps, hyps_length, "edit_distance: Hyps")
    ref_lists = _token_lists(xp, refs, refs_length, "edit_distance: Refs")
    if len(hyp_lists) != len(ref_lists):
        raise LoDError(f"edit_distance: {len(hyp_lists)} hypotheses and {len(ref_lists)} references; expected as many")
    out = np.zeros((len(hyp_lists), 1), dtype=np.float32)
    for i, (hyp, ref) in enumerate(zip(hyp_lists, ref_lists)):
        if normalized and ref.size == 0:
            raise ValueError(f"edit_distance: reference {i} is empty; normalized distances divide by its length")
        out[i, 0] = _levenshtein(hyp, ref) / (ref.size if normalized else 1)
    return xp.asarray(np.array([len(hyp_lists)], dtype=np.int64)), xp.asarray(out)


register_op(
    "edit_distance",
    inputs=("Hyps", "Refs", "HypsLength?", "RefsLength?"),
    outputs=("SequenceNum", "Out"),
    attrs={"normalized": False},
    infer_shape=_edit_distance_infer,
    kernel=_edit_distance,
    takes_lod=True,
)
