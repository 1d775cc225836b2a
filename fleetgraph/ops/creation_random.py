"""Random creation ops (Paddle 1.8's op types, slots and attrs): randint, randperm,
uniform_random_batch_size_like, gaussian_random_batch_size_like, sampling_id and random_crop.

Each draws from the counter-based stream of its bound kernel (ops/rng.py, counter_rng.py) as
uniform_random and dropout do: a seeded op draws the same numbers on every run, an unseeded one
new numbers keyed by the global generator (`paddle.seed`). random_crop is Paddle's exception: its
stream is the Seed tensor it reads and writes back (SeedOut), so it is keyed by that value."""

from __future__ import annotations

import numpy as np

from ..ir import InferContext, register_op
from ..ir.dtypes import convert_dtype
from ..ir.errors import fmt_shape
from ._xp import astype, dtype_of, reshape, total
from .counter_rng import CounterRNG, derive_key, draw_full
from .tensor import _fill_like_infer

# -- randint, randperm --------------------------------------------------------------------------


def _randint_infer(ctx: InferContext) -> None:
    if ctx.attr("low") >= ctx.attr("high"):
        raise ctx.error(f"low {ctx.attr('low')}, high {ctx.attr('high')}; expected low < high")
    ctx.set_output("Out", ctx.attr("shape"), convert_dtype(ctx.attr("dtype")))


def _randint(xp, *, shape, low, high, dtype, seed, rng):
    """Integers uniform on [low, high)."""
    count = int(np.prod(shape, dtype=np.int64))
    values = low + np.floor(rng.uniform01(rng.fresh(count)) * (high - low)).astype(np.int64)
    return xp.asarray(values.reshape(shape).astype(convert_dtype(dtype)))


register_op(
    "randint",
    outputs=("Out",),
    attrs={"shape": [1], "low": 0, "high": 0, "dtype": "int64", "seed": 0},
    infer_shape=_randint_infer,
    kernel=_randint,
    random=True,
)


def _randperm_infer(ctx: InferContext) -> None:
    if ctx.attr("n") < 1:
        raise ctx.error(f"n {ctx.attr('n')}; expected n > 0")
    ctx.set_output("Out", (ctx.attr("n"),), convert_dtype(ctx.attr("dtype")))


def _randperm(xp, *, n, dtype, seed, rng):
    """A uniformly random permutation of 0 .. n-1: the order that sorts n independent uniform draws."""
    order = np.argsort(rng.uniform01(rng.fresh(n)), kind="stable")
    return xp.asarray(order.astype(convert_dtype(dtype)))


register_op(
    "randperm",
    outputs=("Out",),
    attrs={"n": 1, "dtype": "int64", "seed": 0},
    infer_shape=_randperm_infer,
    kernel=_randperm,
    random=True,
)

# -- uniform_random_batch_size_like, gaussian_random_batch_size_like ------------------------------------

_LIKE_ATTRS = {"shape": [1], "input_dim_idx": 0, "output_dim_idx": 0, "seed": 0, "dtype": "float32"}


def _like_shape(x, shape, input_dim_idx: int, output_dim_idx: int) -> list[int]:
    shape = list(shape)
    shape[output_dim_idx] = x.shape[input_dim_idx]
    return shape


def _uniform_like(xp, x, *, shape, input_dim_idx, output_dim_idx, min, max, seed, diag_num, diag_step, diag_val,
                  dtype, rng):  # fmt: skip
    """As uniform_random; then, as Paddle's kernel, diag_num elements of the flat output (the i-th at
    i * (diag_step + 1)) set to diag_val."""
    out_shape = _like_shape(x, shape, input_dim_idx, output_dim_idx)
    out = draw_full("uniform_random", {"min": min, "max": max}, rng, out_shape, convert_dtype(dtype))
    if diag_num:
        flat = out.reshape(-1)
        flat[np.arange(diag_num) * (diag_step + 1)] = diag_val
    return xp.asarray(out)


register_op(
    "uniform_random_batch_size_like",
    inputs=("Input",),
    outputs=("Out",),
    attrs={**_LIKE_ATTRS, "min": -1.0, "max": 1.0, "diag_num": 0, "diag_step": 0, "diag_val": 1.0},
    infer_shape=_fill_like_infer,
    kernel=_uniform_like,
    random=True,
)


def _gaussian_like(xp, x, *, shape, input_dim_idx, output_dim_idx, mean, std, seed, dtype, rng):
    out_shape = _like_shape(x, shape, input_dim_idx, output_dim_idx)
    return xp.asarray(draw_full("gaussian_random", {"mean": mean, "std": std}, rng, out_shape, convert_dtype(dtype)))


register_op(
    "gaussian_random_batch_size_like",
    inputs=("Input",),
    outputs=("Out",),
    attrs={**_LIKE_ATTRS, "mean": 0.0, "std": 1.0},
    infer_shape=_fill_like_infer,
    kernel=_gaussian_like,
    random=True,
)

# -- sampling_id: one id per row, drawn with the row's values as probabilities ------------------------


def _sampling_id_infer(ctx: InferContext) -> None:
    if ctx.attr("min") >= ctx.attr("max"):
        raise ctx.error(f"min {ctx.attr('min')}, max {ctx.attr('max')}; expected min < max")
    x = ctx.input_var("X")
    ctx.check_rank("X", (2,))
    ctx.set_output("Out", (x.shape[0],), "int64", lod_level=x.lod_level)


def _sampling_id(xp, x, *, min, max, seed, rng):
    """Paddle's kernel: r uniform on [min, max) per row, and the first column j where r minus the
    row's values up to j falls below 0 (the last column if none does), as int64 ids."""
    batch, width = x.shape
    r = min + (max - min) * rng.uniform01(rng.fresh(batch))
    r = xp.asarray(r.astype(np.float64 if x.dtype == xp.float64 else np.float32))
    below = astype(xp, xp.cumulative_sum(x, axis=1) <= r[:, None], "int64")
    return xp.minimum(total(xp, below, axis=1), xp.asarray(width - 1, dtype=xp.int64))


register_op(
    "sampling_id",
    inputs=("X",),
    outputs=("Out",),
    attrs={"min": 0.0, "max": 1.0, "seed": 0},
    infer_shape=_sampling_id_infer,
    kernel=_sampling_id,
    random=True,
)

# -- random_crop: each instance cropped at a random place; the seed tensor carries the stream -----------


def _random_crop_infer(ctx: InferContext) -> None:
    x, shape = ctx.input_var("X"), list(ctx.attr("shape"))
    if len(x.shape) <= len(shape):
        raise ctx.error(f"X '{x.name}' {fmt_shape(x.shape)} for a crop of {shape}; expected more dims than the crop")
    lead = len(x.shape) - len(shape)
    for d, c in zip(x.shape[lead:], shape):
        if d >= 0 and c > d:
            raise ctx.error(f"X '{x.name}' {fmt_shape(x.shape)} is smaller than the crop {shape}")
    ctx.set_output("Out", (*x.shape[:lead], *shape), x.dtype)
    ctx.set_output("SeedOut", (1,), "int64")


def _random_crop(xp, x, seed, *, shape, startup_seed):
    """Each instance (x's leading dims beyond the crop's rank) cropped at offsets uniform on
    [0, dim - crop] per cropped dim, drawn from a stream keyed by the Seed value (startup_seed when
    Seed has none); SeedOut is the next seed drawn from that stream, so the following run crops
    elsewhere, as Paddle's op."""
    value = startup_seed if seed is None else int(reshape(xp, seed, (-1,))[0])
    rng = CounterRNG(derive_key(value, "random_crop"))
    lead = x.ndim - len(shape)
    batch = x.shape[:lead]
    count = int(np.prod(batch, dtype=np.int64))
    spans = np.array([d - c + 1 for d, c in zip(x.shape[lead:], shape)], dtype=np.int64)
    offsets = np.floor(rng.uniform01(np.arange(count * len(shape), dtype=np.uint64)).reshape(count, -1) * spans)
    flat = reshape(xp, x, (count, *x.shape[lead:]))
    crops = [flat[(i, *(slice(int(o), int(o) + c) for o, c in zip(offsets[i], shape)))] for i in range(count)]
    out = xp.stack(crops) if crops else xp.zeros((0, *shape), dtype=x.dtype)
    next_seed = int(rng.bits(np.array([0], dtype=np.uint64), stream=1)[0] >> np.uint64(33))
    return reshape(xp, out, (*batch, *shape)), xp.asarray([next_seed], dtype=dtype_of(xp, "int64"))


register_op(
    "random_crop",
    inputs=("X", "Seed?"),
    outputs=("Out", "SeedOut"),
    attrs={"shape": [], "startup_seed": 0},
    infer_shape=_random_crop_infer,
    kernel=_random_crop,
)
