"""`paddle.nn.functional.pooling` (Paddle 2.0's python/paddle/nn/functional/pooling.py): max and
average pooling over 1, 2 and 3 spatial axes, fixed-window or adaptive; the 1-D forms pool an
inserted axis of size 1 with the 2-D ops, as Paddle's."""

from __future__ import annotations

from ...ir.errors import FleetgraphError
from ...layers.conv_nd import check_layout, ints, max_pool_with_index, padding_attrs, pool_nd
from ...layers.helper import LayerHelper
from ...layers.math import scale
from ...layers.tensor_shape import squeeze, unsqueeze
from .conv import as_2d

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_avg_pool3d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool3d",
    "avg_pool1d",
    "avg_pool2d",
    "avg_pool3d",
    "max_pool1d",
    "max_pool2d",
    "max_pool3d",
]

_FIRST_LAYOUT = {2: "NCHW", 3: "NCDHW"}


def _pool(
    layer, nd, pool_type, x, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True,
    divisor_override=None, return_mask=False, data_format=None, name=None,
):  # fmt: skip
    """Paddle 2.0's pooling: the stride defaults to the kernel; return_mask gives
    max_pool{nd}d_with_index's (out, mask), the mask the index of each maximum within its plane;
    divisor_override rescales each window's average to sum / divisor_override."""
    divisor, mask, fmt = divisor_override, return_mask, data_format
    stride = kernel_size if stride is None else stride
    if mask:
        if fmt != _FIRST_LAYOUT[nd]:
            raise FleetgraphError(f"{layer}: return_mask expected data_format {_FIRST_LAYOUT[nd]!r}, got {fmt!r}")
        algorithm, paddings = padding_attrs(layer, padding, nd, fmt)
        if algorithm != "EXPLICIT" or len(paddings) != nd or ceil_mode:
            raise NotImplementedError(
                f"{layer}: return_mask with padding {padding!r} and ceil_mode {ceil_mode}; expected symmetric "
                f"numeric padding and ceil_mode False (the windows of max_pool{nd}d_with_index)"
            )
        k, s = ints(layer, "kernel_size", kernel_size, nd), ints(layer, "stride", stride, nd)
        return max_pool_with_index(x, nd, k, s, paddings, name=name)
    op = f"pool{nd}d"
    out = pool_nd(op, nd, x, kernel_size, pool_type, stride, padding, False, True, ceil_mode, name, exclusive, fmt)
    if divisor is None:
        return out
    if pool_type != "avg" or isinstance(divisor, bool) or not isinstance(divisor, (int, float)):
        raise FleetgraphError(f"{layer}: divisor_override expected a number for avg pooling, got {divisor!r}")
    k = ints(layer, "kernel_size", kernel_size, nd)
    cells = 1
    for v in k:
        cells *= v
    return scale(out, cells / divisor)


def _pool1d(layer, x, kernel_size, stride, padding, pool_type, ceil_mode, exclusive, mask, name):
    """A 1-D pooling of x [N, C, L]: the 2-D one of x [N, C, 1, L]."""
    stride = kernel_size if stride is None else stride
    stride, padding, _, fmt, axis = as_2d(layer, stride, padding, 1, "NCL")
    k = [1, *ints(layer, "kernel_size", kernel_size, 1)]
    out = _pool(
        layer, 2, pool_type, unsqueeze(x, [axis]), k, stride, padding, ceil_mode, exclusive, None, mask, fmt, name
    )
    if mask:
        return squeeze(out[0], [axis]), squeeze(out[1], [axis])
    return squeeze(out, [axis])


def max_pool1d(x, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False, name=None):
    """The maximum of each window of x [N, C, L]; with return_mask also its index along L."""
    return _pool1d("max_pool1d", x, kernel_size, stride, padding, "max", ceil_mode, True, return_mask, name)


def avg_pool1d(x, kernel_size, stride=None, padding=0, exclusive=True, ceil_mode=False, name=None):
    """The average of each window of x [N, C, L] (exclusive: over its unpadded cells)."""
    return _pool1d("avg_pool1d", x, kernel_size, stride, padding, "avg", ceil_mode, exclusive, False, name)


def max_pool2d(
    x, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False, data_format="NCHW", name=None
):
    """The maximum of each window of x [N, C, H, W] (or NHWC)."""
    return _pool("max_pool2d", 2, "max", **locals())


def avg_pool2d(
    x, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True, divisor_override=None,
    data_format="NCHW", name=None,
):  # fmt: skip
    """The average of each window of x [N, C, H, W] (or NHWC)."""
    return _pool("avg_pool2d", 2, "avg", **locals())


def max_pool3d(
    x, kernel_size, stride=None, padding=0, return_mask=False, ceil_mode=False, data_format="NCDHW", name=None
):
    """The maximum of each window of x [N, C, D, H, W] (or NDHWC)."""
    return _pool("max_pool3d", 3, "max", **locals())


def avg_pool3d(
    x, kernel_size, stride=None, padding=0, ceil_mode=False, exclusive=True, divisor_override=None,
    data_format="NCDHW", name=None,
):  # fmt: skip
    """The average of each window of x [N, C, D, H, W] (or NDHWC)."""
    return _pool("avg_pool3d", 3, "avg", **locals())


def _output_size(layer, nd, x, output_size, last=False) -> list[int]:
    """Paddle 2.0's output_size: an int, or nd sizes where None keeps the input's size."""
    sizes = x.shape[1:-1] if last else x.shape[2:]
    if isinstance(output_size, (list, tuple)):
        output_size = [sizes[i] if v is None else v for i, v in enumerate(output_size)]
    return ints(layer, "output_size", output_size, nd)


def _adaptive_avg(nd, x, ksize, data_format, name):
    helper = LayerHelper(f"pool{nd}d", name, inputs=x)
    out = helper.create_variable_for_type_inference(x.dtype)
    attrs = {"pooling_type": "avg", "ksize": ksize, "adaptive": True, "data_format": data_format}
    helper.append_op(f"pool{nd}d", {"X": [x]}, {"Out": [out]}, attrs)
    return out


def adaptive_avg_pool1d(x, output_size, name=None):
    """Output cell i of x [N, C, L] averages [floor(i L / n), ceil((i + 1) L / n))."""
    ksize = [1, *_output_size("adaptive_avg_pool1d", 1, x, output_size)]
    return squeeze(_adaptive_avg(2, unsqueeze(x, [2]), ksize, "NCHW", name), [2])


def adaptive_avg_pool2d(x, output_size, data_format="NCHW", name=None):
    """Output cell (i, j) of x [N, C, H, W] (or NHWC) averages rows [floor(i H / h), ceil((i + 1) H / h))
    and the columns alike; a None in output_size keeps that size."""
    last = check_layout("adaptive_avg_pool2d", data_format, 2)
    return _adaptive_avg(2, x, _output_size("adaptive_avg_pool2d", 2, x, output_size, last), data_format, name)


def adaptive_avg_pool3d(x, output_size, data_format="NCDHW", name=None):
    """adaptive_avg_pool2d over D, H and W."""
    last = check_layout("adaptive_avg_pool3d", data_format, 3)
    return _adaptive_avg(3, x, _output_size("adaptive_avg_pool3d", 3, x, output_size, last), data_format, name)


def _adaptive_max(layer, nd, x, output_size, return_mask, name):
    out, mask = max_pool_with_index(x, nd, _output_size(layer, nd, x, output_size), adaptive=True, name=name)
    return (out, mask) if return_mask else out


def adaptive_max_pool1d(x, output_size, return_mask=False, name=None):
    """The maximum of each adaptive window of x [N, C, L]; with return_mask also its index along L."""
    ksize = [1, *_output_size("adaptive_max_pool1d", 1, x, output_size)]
    out, mask = max_pool_with_index(unsqueeze(x, [2]), 2, ksize, adaptive=True, name=name)
    out = squeeze(out, [2])
    return (out, squeeze(mask, [2])) if return_mask else out


def adaptive_max_pool2d(x, output_size, return_mask=False, name=None):
    """The maximum of each adaptive window of x [N, C, H, W]; with return_mask its index in the plane."""
    return _adaptive_max("adaptive_max_pool2d", 2, x, output_size, return_mask, name)


def adaptive_max_pool3d(x, output_size, return_mask=False, name=None):
    """adaptive_max_pool2d over D, H and W."""
    return _adaptive_max("adaptive_max_pool3d", 3, x, output_size, return_mask, name)
