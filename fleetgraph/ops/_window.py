"""Window geometry the convolutions and poolings share, over 2 or 3 spatial axes: Paddle's paddings,
SAME and VALID padding, output sizes, channel-last layouts, and the strided slices that pick each
kernel offset's inputs. Written against the array API, so the window ops run on any place."""

from __future__ import annotations

import itertools

from ..ir import InferContext
from . import _xp

# data_format values whose channels come last (Paddle's StringToDataLayout maps both to NHWC)
CHANNEL_LAST = ("NHWC", "NDHWC")


def expand_pads(paddings, nd: int) -> list[int]:
    """Paddle's paddings as [before, after] per spatial axis; one value per axis pads both sides alike."""
    p = [int(v) for v in paddings]
    return [v for a in p for v in (a, a)] if len(p) == nd else p


def _same_pads(size: int, k: int, s: int) -> list[int]:
    """TensorFlow-style SAME padding: the output has ceil(size / stride) positions."""
    if size < 0:
        return [0, 0]
    total = max((-(-size // s) - 1) * s + k - size, 0)
    return [total // 2, total - total // 2]


def resolve_pads(algorithm, paddings, in_sizes, k_sizes, strides) -> list[int]:
    """[before, after] per spatial axis under padding_algorithm (Paddle's UpdatePadding)."""
    nd = len(k_sizes)
    if algorithm == "VALID":
        return [0] * (2 * nd)
    if algorithm == "SAME":
        return [p for i in range(nd) for p in _same_pads(in_sizes[i], k_sizes[i], strides[i])]
    return expand_pads(paddings, nd)


def out_size(size: int, k: int, s: int, p0: int, p1: int, ceil_mode: bool = False) -> int:
    if size < 0:
        return -1
    span = size + p0 + p1 - k
    return max((span + s - 1) // s + 1 if ceil_mode else span // s + 1, 0)


def check_window_attrs(ctx: InferContext, names: tuple[str, ...], nd: int = 2) -> None:
    """The window attrs of an op over `nd` spatial axes, in the house error form."""
    axes = "[d, h, w]" if nd == 3 else "[h, w]"
    for name in names:
        if len(ctx.attr(name)) != nd:
            raise ctx.error(f"{name} {ctx.attr(name)}: expected {nd} values {axes}")
    if len(ctx.attr("paddings")) not in (nd, 2 * nd):
        raise ctx.error(f"paddings {ctx.attr('paddings')}: expected {nd} or {2 * nd} values")
    if ctx.attr("padding_algorithm") not in ("EXPLICIT", "SAME", "VALID"):
        raise ctx.error(f"padding_algorithm {ctx.attr('padding_algorithm')!r}: expected EXPLICIT, SAME or VALID")
    # Paddle maps any of these to its two layouts (conv3d_transpose's layer passes NCHW or NHWC)
    if ctx.attr("data_format") not in ("NCHW", "NHWC", "NCDHW", "NDHWC", "AnyLayout"):
        raise ctx.error(f"data_format {ctx.attr('data_format')!r}: expected NCHW, NHWC, NCDHW or NDHWC")


def spatial(shape, data_format) -> tuple:
    """(channels, spatial sizes) of an input shape in `data_format`."""
    if data_format in CHANNEL_LAST:
        return shape[-1], tuple(shape[1:-1])
    return shape[1], tuple(shape[2:])


def layout_shape(n, c, sizes, data_format) -> tuple:
    """An output shape [N, C, *sizes] in `data_format`'s order."""
    return (n, *sizes, c) if data_format in CHANNEL_LAST else (n, c, *sizes)


def to_channel_first(xp, x, data_format):
    if data_format not in CHANNEL_LAST:
        return x
    return xp.permute_dims(x, (0, x.ndim - 1, *range(1, x.ndim - 1)))


def from_channel_first(xp, x, data_format):
    if data_format not in CHANNEL_LAST:
        return x
    return xp.permute_dims(x, (0, *range(2, x.ndim), 1))


def windows(span: int, k: int, s: int, d: int = 1):
    """Slices of a padded axis picking, for each of the k window offsets, the `span` outputs' inputs."""
    return [slice(i * d, i * d + s * (span - 1) + 1, s) for i in range(k)]


def window_offsets(out, k, strides, dils=None):
    """For every kernel offset (over all spatial axes): (offset index tuple, slices of the padded input)."""
    dils = dils or [1] * len(k)
    per_axis = [list(enumerate(windows(out[i], k[i], strides[i], dils[i]))) for i in range(len(k))]
    for combo in itertools.product(*per_axis):
        yield tuple(i for i, _ in combo), tuple(s for _, s in combo)


def pad(xp, x, pads, value=0.0):
    """x padded by [before, after] pairs over its trailing spatial axes, with `value`."""
    if not any(pads):
        return x
    nd = len(pads) // 2
    widths = [(0, 0)] * (x.ndim - nd) + [(pads[2 * i], pads[2 * i + 1]) for i in range(nd)]
    return _xp.pad(xp, x, widths, value)


def unpad(x, pads, sizes):
    """The inner `sizes` of a padded array (the inverse of `pad` over the trailing axes)."""
    return x[(...,) + tuple(slice(pads[2 * i], pads[2 * i] + n) for i, n in enumerate(sizes))]
