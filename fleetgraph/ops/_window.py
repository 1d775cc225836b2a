"""Window geometry conv2d and pool2d share: Paddle's paddings, SAME and VALID padding, output sizes and
the strided slices that pick each kernel offset's inputs."""

from __future__ import annotations

from ..ir import InferContext


def _pads4(paddings) -> list[int]:
    """Paddle's paddings as [top, bottom, left, right]; [h, w] pads both sides alike."""
    p = [int(v) for v in paddings]
    return [p[0], p[0], p[1], p[1]] if len(p) == 2 else p


def _same_pads(size: int, k: int, s: int) -> list[int]:
    """TensorFlow-style SAME padding: the output has ceil(size / stride) positions."""
    if size < 0:
        return [0, 0]
    total = max((-(-size // s) - 1) * s + k - size, 0)
    return [total // 2, total - total // 2]


def resolve_pads(algorithm, paddings, in_hw, k_hw, strides) -> list[int]:
    if algorithm == "VALID":
        return [0, 0, 0, 0]
    if algorithm == "SAME":
        return _same_pads(in_hw[0], k_hw[0], strides[0]) + _same_pads(in_hw[1], k_hw[1], strides[1])
    return _pads4(paddings)


def out_size(size: int, k: int, s: int, p0: int, p1: int, ceil_mode: bool = False) -> int:
    if size < 0:
        return -1
    span = size + p0 + p1 - k
    return max((span + s - 1) // s + 1 if ceil_mode else span // s + 1, 0)


def check_window_attrs(ctx: InferContext, names: tuple[str, ...]) -> None:
    for name in names:
        if len(ctx.attr(name)) != 2:
            raise ctx.error(f"{name} {ctx.attr(name)}: expected 2 values [h, w]")
    if len(ctx.attr("paddings")) not in (2, 4):
        raise ctx.error(f"paddings {ctx.attr('paddings')}: expected [h, w] or [top, bottom, left, right]")
    if ctx.attr("padding_algorithm") not in ("EXPLICIT", "SAME", "VALID"):
        raise ctx.error(f"padding_algorithm {ctx.attr('padding_algorithm')!r}: expected EXPLICIT, SAME or VALID")
    if ctx.attr("data_format") not in ("NCHW", "AnyLayout"):
        raise ctx.error(f"data_format {ctx.attr('data_format')!r} is not supported; expected 'NCHW'")


def windows(span: int, k: int, s: int, d: int = 1):
    """Slices of a padded axis picking, for each of the k window offsets, the `span` outputs' inputs."""
    return [slice(i * d, i * d + s * (span - 1) + 1, s) for i in range(k)]


def pad(xp, x, pads, value=0.0):
    top, bottom, left, right = pads
    if not any(pads):
        return x
    return xp.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), mode="constant", constant_values=value)
