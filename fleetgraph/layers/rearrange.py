"""Layer functions over the ops of ops/rearrange.py, in Paddle 1.8.5's fluid.layers signatures:
space_to_depth, pixel_shuffle, shuffle_channel, temporal_shift and unfold."""

from __future__ import annotations

from ..dygraph.dispatch import bind
from .beam_search import _check

__all__ = ["space_to_depth", "pixel_shuffle", "shuffle_channel", "temporal_shift", "unfold"]


def _int(value, where: str, name: str) -> int:
    if not isinstance(value, int):
        raise TypeError(f"{where}: {name} must be an int, got {type(value).__name__}")
    return value


def space_to_depth(x, blocksize, name=None):
    """[N, C, H, W] -> [N, C * blocksize**2, H / blocksize, W / blocksize], in Paddle's element order."""
    if not isinstance(blocksize, int):
        raise ValueError(f"space_to_depth: blocksize must be an int, got {type(blocksize).__name__}")
    _check(x, "x", "space_to_depth", ("float16", "float32", "float64", "int32", "int64"))
    return bind("space_to_depth", {"X": [x]}, {"blocksize": blocksize}, name=name)


def pixel_shuffle(x, upscale_factor):
    """[N, C * r**2, H, W] -> [N, C, H * r, W * r]: each group of r**2 channels becomes an r x r block."""
    _check(x, "x", "pixel_shuffle", ("float32", "float64"))
    return bind(
        "pixel_shuffle", {"X": [x]}, {"upscale_factor": _int(upscale_factor, "pixel_shuffle", "upscale_factor")}
    )


def shuffle_channel(x, group, name=None):
    """The channels split into `group` groups and interleaved, one from each group in turn."""
    return bind("shuffle_channel", {"X": [x]}, {"group": _int(group, "shuffle_channel", "group")}, name=name)


def temporal_shift(x, seg_num, shift_ratio=0.25, name=None):
    """Frames of seg_num per clip: channels [0, C * ratio) take the previous frame's values, the next
    C * ratio the following frame's, the rest stay (zeros past a clip's ends)."""
    _check(x, "x", "temporal_shift", ("float32", "float64"))
    _int(seg_num, "temporal_shift", "seg_num")
    if not isinstance(shift_ratio, float):
        raise TypeError(f"temporal_shift: shift_ratio must be a float, got {type(shift_ratio).__name__}")
    return bind("temporal_shift", {"X": [x]}, {"seg_num": seg_num, "shift_ratio": shift_ratio}, name=name)


def _pair(value, where: str, name: str) -> list[int]:
    if isinstance(value, int):
        return [value, value]
    if not isinstance(value, list) or len(value) != 2:
        raise ValueError(f"{where}: {name} {value!r}; expected an int or a list of two ints")
    return [int(v) for v in value]


def unfold(x, kernel_sizes, strides=1, paddings=0, dilations=1, name=None):
    """im2col: [N, C, H, W] -> [N, C * kh * kw, L], each of the L sliding blocks one column;
    paddings: an int, [h, w], or [top, left, bottom, right]."""
    _check(x, "x", "unfold", ("float32", "float64"))
    if len(x.shape) != 4:
        raise ValueError(f"unfold: x {list(x.shape)}; expected the format [N, C, H, W]")
    if isinstance(paddings, int):
        paddings = [paddings] * 4
    elif not isinstance(paddings, list) or len(paddings) not in (2, 4):
        raise ValueError(f"unfold: paddings {paddings!r}; expected an int or a list of 2 or 4 ints")
    attrs = {
        "kernel_sizes": _pair(kernel_sizes, "unfold", "kernel_sizes"),
        "strides": _pair(strides, "unfold", "strides"),
        "paddings": [int(p) for p in (paddings * 2 if len(paddings) == 2 else paddings)],
        "dilations": _pair(dilations, "unfold", "dilations"),
    }
    return bind("unfold", {"X": [x]}, attrs, out_slot="Y", name=name)
