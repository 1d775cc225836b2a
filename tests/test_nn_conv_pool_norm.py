"""Paddle 2.0's paddle.nn convolution, pooling and normalization functions and layers give Paddle's
results eagerly (the default) and in a static program: against the NumPy references of Paddle's unit
tests (tests/op_cases) or NumPy formulas; sums pasted where noted were printed by PyTorch, whose
functions these match."""

from __future__ import annotations

import numpy as np
import pytest
from op_cases.conv_nd import (
    naive_adaptive_pool,
    naive_conv,
    naive_conv_transpose,
    naive_max_pool_with_index,
    naive_pool,
)

import fleetgraph as paddle
from fleetgraph.initializer import NumpyArrayInitializer
from fleetgraph.ir import FleetgraphError, Program, program_guard, unique_name

F = paddle.nn.functional
nn = paddle.nn
rng = np.random.RandomState(7)


def run(mode, build, *arrays):
    """build(*inputs) eagerly on Tensors, or in a fresh static program fed `arrays`; the outputs as arrays."""
    if mode == "eager":
        outs = build(*(paddle.to_tensor(a) for a in arrays))
        return [o.numpy() for o in (outs if isinstance(outs, (list, tuple)) else [outs])]
    paddle.enable_static()
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        xs = [paddle.static.data(f"x{i}", list(a.shape), str(a.dtype)) for i, a in enumerate(arrays)]
        outs = build(*xs)
    exe = paddle.static.Executor()
    exe.run(startup)
    fetches = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    return exe.run(main, feed={f"x{i}": a for i, a in enumerate(arrays)}, fetch_list=fetches)


modes = pytest.mark.parametrize("mode", ["eager", "static"])


def attr(value):
    return paddle.ParamAttr(initializer=NumpyArrayInitializer(value))


def close(got, want, tol=1e-5):
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


x1 = rng.rand(2, 3, 9).astype("float32")
w1 = rng.rand(4, 3, 3).astype("float32")
b4 = rng.rand(4).astype("float32")
x3 = rng.rand(1, 2, 4, 5, 5).astype("float32")


@modes
def test_conv1d_pads_before_and_after_and_adds_the_bias(mode):
    (got,) = run(mode, lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=[1, 2]), x1, w1, b4)
    close(got, naive_conv(x1[:, :, None], w1[:, :, None], [1, 2], [0, 0, 1, 2], [1, 1])[:, :, 0] + b4[:, None])


@modes
def test_conv1d_same_padding_in_nlc(mode):
    (got,) = run(mode, lambda x, w: F.conv1d(x, w, padding="same", data_format="NLC"), x1.transpose(0, 2, 1), w1)
    close(got.transpose(0, 2, 1), naive_conv(x1[:, :, None], w1[:, :, None], [1, 1], [0, 0, 1, 1], [1, 1])[:, :, 0])


@modes
def test_conv2d_and_conv3d_take_asymmetric_padding_and_groups(mode):
    x2, w2 = rng.rand(1, 4, 6, 6).astype("float32"), rng.rand(4, 2, 3, 3).astype("float32")
    (got,) = run(mode, lambda x, w: F.conv2d(x, w, padding=[1, 0, 2, 1], groups=2), x2, w2)
    close(got, naive_conv(x2, w2, [1, 1], [1, 0, 2, 1], [1, 1], groups=2))
    w3 = rng.rand(3, 2, 2, 3, 3).astype("float32")
    (got,) = run(mode, lambda x, w: F.conv3d(x, w, padding=1, stride=[1, 2, 2], dilation=[1, 1, 2]), x3, w3)
    close(got, naive_conv(x3, w3, [1, 2, 2], [1] * 6, [1, 1, 2]), 1e-4)


@modes
def test_conv_transposes_grow_by_output_padding_or_output_size(mode):
    wt = rng.rand(3, 2, 3).astype("float32")
    (got,) = run(mode, lambda x, w: F.conv1d_transpose(x, w, stride=2, padding=1, output_padding=1), x1, wt)
    assert got.shape == (2, 2, 18)
    close(
        got,
        naive_conv_transpose(x1[:, :, None], wt[:, :, None], [1, 2], [0, 0, 1, 1], [1, 1], output_size=[1, 18])[
            :, :, 0
        ],
    )
    x2, w2 = rng.rand(1, 2, 5, 5).astype("float32"), rng.rand(2, 4, 3, 3).astype("float32")
    (got,) = run(mode, lambda x, w: F.conv2d_transpose(x, w, stride=2, padding=[1, 0], output_size=[10, 11]), x2, w2)
    close(got, naive_conv_transpose(x2, w2, [2, 2], [1, 1, 0, 0], [1, 1], output_size=[10, 11]))
    w3 = rng.rand(2, 3, 2, 3, 3).astype("float32")
    (got,) = run(mode, lambda x, w: F.conv3d_transpose(x, w, stride=2, output_padding=1), x3, w3)
    assert got.shape == (1, 3, 9, 12, 12)
    close(got, naive_conv_transpose(x3, w3, [2] * 3, [0] * 6, [1] * 3, output_size=[9, 12, 12]), 1e-4)


def test_output_padding_and_output_size_are_exclusive():
    x, w = paddle.to_tensor(x1), paddle.to_tensor(rng.rand(3, 2, 3).astype("float32"))
    with pytest.raises(ValueError, match="mutually exclusive"):
        F.conv1d_transpose(x, w, stride=2, output_padding=1, output_size=19)


@modes
def test_conv_layers_apply_their_weight_and_bias(mode):
    w = rng.rand(4, 3, 3).astype("float32")

    def build(x):
        return nn.Conv1D(3, 4, 3, padding=1, weight_attr=attr(w), bias_attr=attr(b4))(x)

    (got,) = run(mode, build, x1)
    close(got, naive_conv(x1[:, :, None], w[:, :, None], [1, 1], [0, 0, 1, 1], [1, 1])[:, :, 0] + b4[:, None])
    w3 = rng.rand(3, 2, 2, 2, 2).astype("float32")
    (got,) = run(mode, lambda x: nn.Conv3D(2, 3, 2, weight_attr=attr(w3), bias_attr=False)(x), x3)
    close(got, naive_conv(x3, w3, [1] * 3, [0] * 6, [1] * 3), 1e-4)


def test_conv_layer_weights_have_paddles_shapes():
    assert nn.Conv1D(3, 4, 5, groups=1).weight.shape == [4, 3, 5]
    assert nn.Conv1DTranspose(4, 6, 3, groups=2).weight.shape == [4, 3, 3]
    assert nn.Conv2DTranspose(3, 2, [3, 1]).weight.shape == [3, 2, 3, 1]
    assert nn.Conv3DTranspose(3, 2, 2).weight.shape == [3, 2, 2, 2, 2]
    out = nn.Conv2DTranspose(3, 2, 3, stride=2)(paddle.ones([1, 3, 4, 4]), output_size=[10, 10])
    assert out.shape == [1, 2, 10, 10]
    assert nn.Conv1DTranspose(3, 2, 3, stride=2, output_padding=1)(paddle.to_tensor(x1)).shape == [2, 2, 20]
    assert nn.Conv3DTranspose(2, 3, 2, stride=2)(paddle.to_tensor(x3)).shape == [1, 3, 8, 10, 10]


@modes
def test_pool1d_max_avg_and_mask(mode):
    out = run(
        mode,
        lambda x: [
            F.max_pool1d(x, 3, 2, 1),
            F.avg_pool1d(x, 3, 2, 1),
            *F.max_pool1d(x, 2, return_mask=True),
            nn.AvgPool1D(3, 2, 1, exclusive=False)(x),
            nn.MaxPool1D(2)(x),
        ],
        x1,
    )
    x = x1[:, :, None]
    close(out[0], naive_pool(x, [1, 3], [1, 2], [0, 0, 1, 1])[:, :, 0])
    close(out[1], naive_pool(x, [1, 3], [1, 2], [0, 0, 1, 1], "avg")[:, :, 0])
    want, mask = naive_max_pool_with_index(x, [1, 2], [1, 2], [0, 0])
    close(out[2], want[:, :, 0])
    np.testing.assert_array_equal(out[3], mask[:, :, 0])
    close(out[4], naive_pool(x, [1, 3], [1, 2], [0, 0, 1, 1], "avg", exclusive=False)[:, :, 0])
    close(out[5], want[:, :, 0])


@modes
def test_pool2d_and_pool3d_windows_ceil_mode_and_divisor(mode):
    x2 = rng.rand(2, 3, 7, 7).astype("float32")
    out = run(
        mode,
        lambda x: [
            F.max_pool2d(x, 3, padding=1),
            nn.AvgPool2D(3, 2, ceil_mode=True)(x),
            F.avg_pool2d(x, 2, divisor_override=3),
            nn.MaxPool2D(2, 2, 0)(x),
        ],
        x2,
    )
    close(out[0], naive_pool(x2, [3, 3], [3, 3], [1] * 4))
    close(out[1], naive_pool(x2, [3, 3], [2, 2], [0, 1, 0, 1], "avg"))  # ceil mode: one more window
    close(out[2], naive_pool(x2[:, :, :6, :6], [2, 2], [2, 2], [0] * 4, "avg") * 4 / 3)
    close(out[3], naive_pool(x2, [2, 2], [2, 2], [0] * 4))
    out = run(
        mode,
        lambda x: [
            F.max_pool3d(x, 2, padding=1),
            nn.AvgPool3D([2, 3, 3], 1, padding=1)(x),
            F.avg_pool3d(x, 2, divisor_override=3),
            *nn.MaxPool3D(2, 2, 0, return_mask=True)(x),
        ],
        x3,
    )
    close(out[0], naive_pool(x3, [2] * 3, [2] * 3, [1] * 6))
    close(out[1], naive_pool(x3, [2, 3, 3], [1] * 3, [1] * 6, "avg"))
    close(out[2], naive_pool(x3[:, :, :, :4, :4], [2] * 3, [2] * 3, [0] * 6, "avg") * 8 / 3)
    want, mask = naive_max_pool_with_index(x3, [2] * 3, [2] * 3, [0] * 3)
    close(out[3], want)
    np.testing.assert_array_equal(out[4], mask)


@modes
def test_adaptive_pools(mode):
    x2 = rng.rand(2, 3, 7, 5).astype("float32")
    out = run(
        mode,
        lambda a, b, c: [
            F.adaptive_avg_pool1d(a, 4),
            nn.AdaptiveAvgPool1D(2)(a),
            *F.adaptive_max_pool1d(a, 4, return_mask=True),
            nn.AdaptiveMaxPool1D(3)(a),
            F.adaptive_avg_pool2d(b, 3),
            nn.AdaptiveAvgPool2D([2, None])(b),
            *nn.AdaptiveMaxPool2D(3, return_mask=True)(b),
            F.adaptive_avg_pool3d(c, [2, None, 3]),
            nn.AdaptiveAvgPool3D(2)(c),
            F.adaptive_max_pool3d(c, [2, 3, 2]),
            nn.AdaptiveMaxPool3D(1)(c),
            F.adaptive_max_pool2d(b, [3, 2]),
        ],
        x1,
        x2,
        x3,
    )
    a = x1[:, :, None]
    close(out[0], naive_adaptive_pool(a, [1, 4], "avg")[:, :, 0])
    close(out[1], naive_adaptive_pool(a, [1, 2], "avg")[:, :, 0])
    want, mask = naive_max_pool_with_index(a, [1, 4], None, None, adaptive=True)
    close(out[2], want[:, :, 0])
    np.testing.assert_array_equal(out[3], mask[:, :, 0])
    close(out[4], naive_adaptive_pool(a, [1, 3], "max")[:, :, 0])
    close(out[5], naive_adaptive_pool(x2, [3, 3], "avg"))
    close(out[6], naive_adaptive_pool(x2, [2, 5], "avg"))
    want, mask = naive_max_pool_with_index(x2, [3, 3], None, None, adaptive=True)
    close(out[7], want)
    np.testing.assert_array_equal(out[8], mask)
    close(out[9], naive_adaptive_pool(x3, [2, 5, 3], "avg"))
    close(out[10], naive_adaptive_pool(x3, [2, 2, 2], "avg"))
    close(out[11], naive_adaptive_pool(x3, [2, 3, 2], "max"))
    close(out[12], x3.max(axis=(2, 3, 4), keepdims=True))
    close(out[13], naive_adaptive_pool(x2, [3, 2], "max"))


xn = (rng.rand(2, 3, 4, 5) - 0.5).astype("float32")


def standardize(x, axes, eps=1e-5):
    return (x - x.mean(axes, keepdims=True)) / np.sqrt(x.var(axes, keepdims=True) + eps)


@modes
def test_layer_norm_over_the_trailing_dims(mode):
    w, b = rng.rand(20).astype("float32"), rng.rand(20).astype("float32")
    out = run(
        mode,
        lambda x, wv, bv: [
            F.layer_norm(x, [4, 5], wv, bv),
            F.layer_norm(x, 5),
            nn.LayerNorm([4, 5], weight_attr=attr(w), bias_attr=attr(b))(x),
            nn.LayerNorm(5, weight_attr=False, bias_attr=False)(x),
        ],
        xn,
        w,
        b,
    )
    want = standardize(xn, (2, 3)) * w.reshape(4, 5) + b.reshape(4, 5)
    close(out[0], want, 1e-4)
    close(out[1], standardize(xn, (3,)), 1e-4)
    close(out[2], want, 1e-4)
    close(out[3], standardize(xn, (3,)), 1e-4)


@modes
def test_instance_and_group_norm(mode):
    wc, bc = rng.rand(3).astype("float32"), rng.rand(3).astype("float32")
    out = run(
        mode,
        lambda x, w: [
            F.instance_norm(x, weight=w),
            nn.InstanceNorm2D(3, weight_attr=attr(wc), bias_attr=attr(bc))(x),
            nn.InstanceNorm1D(3)(paddle.reshape(x, [2, 3, 20])),
            nn.InstanceNorm3D(3, weight_attr=False, bias_attr=False)(paddle.unsqueeze(x, [2])),
        ],
        xn,
        wc,
    )
    per_channel = (slice(None), None, None)
    close(out[0], standardize(xn, (2, 3)) * wc[per_channel], 1e-4)
    close(out[1], standardize(xn, (2, 3)) * wc[per_channel] + bc[per_channel], 1e-4)
    close(out[2], standardize(xn.reshape(2, 3, 20), (2,)), 1e-4)
    close(out[3], standardize(xn, (2, 3))[:, :, None], 1e-4)
    x6 = rng.rand(2, 6, 3, 2).astype("float32")
    w6, b6 = rng.rand(6).astype("float32"), rng.rand(6).astype("float32")
    (got,) = run(mode, lambda x: nn.GroupNorm(3, 6, weight_attr=attr(w6), bias_attr=attr(b6))(x), x6)
    grouped = standardize(x6.reshape(2, 3, -1), (2,)).reshape(x6.shape)
    close(got, grouped * w6[:, None, None] + b6[:, None, None], 1e-4)


def test_instance_norm_refuses_what_it_would_ignore():
    x = paddle.to_tensor(xn)
    with pytest.raises(NotImplementedError, match="running_mean"):
        F.instance_norm(x, running_mean=paddle.zeros([3]))
    with pytest.raises(NotImplementedError, match="data_format"):
        F.instance_norm(x, data_format="NHWC")
    with pytest.raises(NotImplementedError, match="momentum"):
        nn.InstanceNorm2D(3, momentum=0.5)


def lrn_reference(x, size, alpha, beta, k, axis=1):
    """Paddle 2.0's composition: the mean of x^2 over channels c - size // 2 .. c + (size - 1) // 2."""
    sq = np.moveaxis(x * x, axis, 0)
    padded = np.pad(sq, [(size // 2, (size - 1) // 2)] + [(0, 0)] * (x.ndim - 1))
    window = sum(padded[j : j + sq.shape[0]] for j in range(size)) / size
    return x / np.moveaxis(k + alpha * window, 0, axis) ** beta


@modes
def test_local_response_norm_in_every_layout(mode):
    y = rng.rand(2, 6, 4, 5).astype("float32")
    y5 = rng.rand(2, 3, 2, 3, 4).astype("float32")
    out = run(
        mode,
        lambda a, b: [
            F.local_response_norm(a, 4, alpha=0.5, beta=0.6, k=1.5),
            nn.LocalResponseNorm(3, alpha=0.5, data_format="NHWC")(a),
            F.local_response_norm(b, 5, alpha=2.0, data_format="NCDHW"),
            F.local_response_norm(paddle.reshape(a, [2, 6, 20]), 3, data_format="NLC"),
        ],
        y,
        y5,
    )
    close(out[0], lrn_reference(y, 4, 0.5, 0.6, 1.5))
    close(out[1], lrn_reference(y, 3, 0.5, 0.75, 1.0, axis=3))
    close(out[2], lrn_reference(y5, 5, 2.0, 0.75, 1.0))
    close(out[3], lrn_reference(y.reshape(2, 6, 20), 3, 1e-4, 0.75, 1.0, axis=2))


@modes
def test_normalize_divides_by_the_p_norm_or_epsilon(mode):
    z = np.zeros((2, 3), "float32")
    out = run(mode, lambda x, z: [F.normalize(x, p=3, axis=2), F.normalize(x), F.normalize(z)], xn, z)
    close(out[0], xn / np.maximum((np.abs(xn) ** 3).sum(2, keepdims=True) ** (1 / 3), 1e-12))
    close(out[1], xn / np.sqrt((xn * xn).sum(1, keepdims=True)))
    close(out[2], z)


@modes
def test_batch_norm_layers_normalize_by_batch_statistics_while_training(mode):
    x5 = rng.rand(4, 3, 2, 2, 2).astype("float32")
    x3d = x5.reshape(4, 3, 8)

    def build(x, y):
        return [nn.BatchNorm3D(3)(x), nn.SyncBatchNorm(3, data_format="NCDHW")(x), nn.BatchNorm1D(3)(y)]

    out = run(mode, build, x5, x3d)
    close(out[0], standardize(x5, (0, 2, 3, 4)), 1e-4)
    close(out[1], standardize(x5, (0, 2, 3, 4)), 1e-4)
    close(out[2], standardize(x3d, (0, 2)), 1e-4)
    stats = [rng.rand(3).astype("float32") + 0.5 for _ in range(4)]  # mean, variance, weight, bias
    (got,) = run(mode, lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, data_format="NCDHW"), x5, *stats)
    m, v, w, b = (s[:, None, None, None] for s in stats)
    close(got, (x5 - m) / np.sqrt(v + 1e-5) * w + b, 1e-5)


def test_sync_batch_norm_training_under_several_ranks_needs_their_ring(monkeypatch):
    monkeypatch.setenv("PADDLE_TRAINERS_NUM", "2")
    layer = nn.SyncBatchNorm(3)
    with pytest.raises(FleetgraphError, match="2 ranks.*init_parallel_env"):
        layer(paddle.to_tensor(xn))
    layer.eval()
    close(layer(paddle.to_tensor(xn)).numpy(), xn / np.sqrt(1 + 1e-5), 1e-5)


def test_convert_sync_batchnorm_keeps_the_parameters():
    model = nn.Sequential(nn.Conv2D(3, 3, 1), nn.BatchNorm2D(3))
    model[1]._mean.set_value(np.full([3], 0.5, "float32"))
    converted = nn.SyncBatchNorm.convert_sync_batchnorm(model)
    assert isinstance(converted[1], nn.SyncBatchNorm) and converted[1].weight is model[1].weight
    converted.eval()
    model.eval()
    close(converted(paddle.to_tensor(xn)).numpy(), model(paddle.to_tensor(xn)).numpy())


@modes
def test_spectral_norm_divides_by_the_largest_singular_value(mode):
    w = rng.rand(4, 6).astype("float32")
    (got,) = run(mode, lambda x: nn.SpectralNorm([4, 6], dim=0, power_iters=30)(x), w)
    close(got, w / np.linalg.svd(w)[1][0], 1e-4)
    layer = nn.SpectralNorm([2, 3, 4], dim=1)
    assert list(layer.weight_u.shape) == [3] and list(layer.weight_v.shape) == [8] and layer.weight_u.stop_gradient
