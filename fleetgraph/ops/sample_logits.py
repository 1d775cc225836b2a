"""sample_logits: the logits of each row's true classes and of num_samples classes drawn once for the
batch from Paddle's log-uniform sampler (math/sampler.cc LogUniformSampler, math/sample_prob.h),
less log Q(class), the op under fluid.layers.sampled_softmax_with_cross_entropy.

The draws come from the counter-based streams nce uses (ops/rng.py: seeded, the same on every run
and in eager mode), not from Paddle's mt19937_64, so the classes drawn differ from Paddle's while
their law, their probabilities and what the op does with them are Paddle's."""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, make_grad_op, register_op
from ._losses_common import grads_shaped_as, tolerable
from ._xp import astype, dtype_name, host, put_along

_HIT = 1e20  # subtracted from a sampled class that is one of the row's true classes (Paddle's)


def _sample_logits_infer(ctx: InferContext) -> None:
    logits, labels = ctx.check_rank("Logits", (2,)), ctx.check_rank("Labels", (2,))
    width = labels[1] + ctx.attr("num_samples") if labels[1] >= 0 else -1
    dtype = ctx.input_dtype("Logits")
    for slot, d in (("Samples", "int64"), ("Probabilities", dtype), ("SampledLogits", dtype)):
        ctx.set_output(slot, (logits[0], width), d)
    ctx.set_output("SampledLabels", labels, "int64")
    ctx.set_output("LogitsDim", logits, dtype)  # shapes only: what the gradient takes its shape from
    ctx.set_output("LabelsDim", labels, dtype)


def _unique_draws(rng, classes: int, count: int) -> tuple[np.ndarray, int]:
    """`count` distinct classes from the log-uniform law P(v) = log((v + 2) / (v + 1)) / log(classes + 1),
    in the order first drawn, and how many draws that took."""
    log_range = np.log(classes + 1)
    kept, seen, tries = [], set(), 0
    while len(kept) < count:
        u = rng.uniform01(rng.fresh(2 * (count - len(kept)) + 8), 0)
        for v in (np.exp(u * log_range).astype(np.int64) - 1) % classes:
            tries += 1
            if int(v) not in seen:
                seen.add(int(v))
                kept.append(int(v))
                if len(kept) == count:
                    break
    return np.array(kept, dtype=np.int64), tries


def _sample_logits(
    xp,
    logits,
    labels,
    custom_samples,
    custom_probs,
    *,
    use_customized_samples,
    uniq,
    remove_accidental_hits,
    num_samples,
    seed,
    rng,
):
    rows, classes = logits.shape
    true = host(labels).astype(np.int64)
    if use_customized_samples:
        samples, probs = host(custom_samples).astype(np.int64), custom_probs
    else:
        negatives, tries = _unique_draws(rng, classes, num_samples)
        samples = np.concatenate([true, np.tile(negatives, (rows, 1))], axis=1)
        p = np.log((samples + 2.0) / (samples + 1.0)) / np.log(classes + 1)
        p = p * num_samples if tries == num_samples else -np.expm1(tries * np.log1p(-p))  # Paddle's adjust_prob
        probs = xp.asarray(p.astype(dtype_name(logits.dtype)))
    picked = xp.take_along_axis(logits, xp.asarray(samples), axis=1)
    if remove_accidental_hits:
        hit = (samples[:, None, true.shape[1] :] == true[:, :, None]).any(axis=1)
        hit = np.concatenate([np.zeros_like(true, dtype=bool), hit], axis=1)
        picked = picked - xp.asarray(hit.astype(dtype_name(logits.dtype))) * _HIT
    sampled = tolerable(xp, picked - tolerable(xp, xp.log(probs)))
    sampled_labels = xp.asarray(np.tile(np.arange(true.shape[1], dtype=np.int64), (rows, 1)))
    dims = [xp.broadcast_to(xp.zeros((1, 1), dtype=logits.dtype), shape) for shape in (logits.shape, true.shape)]
    return xp.asarray(samples), probs, dims[0], dims[1], sampled, sampled_labels  # dims: no memory, as Paddle's


def _sample_logits_grad(xp, logits_dim, labels_dim, samples, dsampled, **_):
    """Each sampled logit's gradient back at its class; where a class was sampled twice (an accidental
    hit), the later column's gradient is the one kept, as Paddle's CPUPutAlongD1 writes it."""
    zero = xp.zeros(logits_dim.shape, dtype=dsampled.dtype)
    return put_along(xp, zero, astype(xp, samples, "int64"), dsampled, 1)


_ATTRS = {"use_customized_samples": False, "uniq": True, "remove_accidental_hits": True, "num_samples": 1, "seed": 0}
register_op(
    "sample_logits",
    inputs=("Logits", "Labels", "CustomizedSamples?", "CustomizedProbabilities?"),
    outputs=("Samples", "Probabilities", "LogitsDim", "LabelsDim", "SampledLogits", "SampledLabels"),
    attrs=_ATTRS,
    infer_shape=_sample_logits_infer,
    grad=make_grad_op(inputs=("LogitsDim", "LabelsDim", "Samples", "SampledLogits@GRAD"), outputs=("Logits@GRAD",)),
    kernel=_sample_logits,
    random=True,
)


register_op(
    "sample_logits_grad",
    inputs=("LogitsDim", "LabelsDim", "Samples", "SampledLogits@GRAD"),
    outputs=("Logits@GRAD",),
    attrs=_ATTRS,
    infer_shape=grads_shaped_as(**{"Logits@GRAD": "LogitsDim"}),
    kernel=_sample_logits_grad,
)
