"""fluid.dygraph's normalization, convolution-family and tree layers (Paddle 1.8) against NumPy,
eagerly and in a static program, with 1.x's parameters and checks."""

from __future__ import annotations

import numpy as np
import pytest
from dygraph_helpers import fresh_mode_and_names  # noqa: F401  (autouse)

import fleetgraph.fluid as fluid

dygraph = fluid.dygraph
rng = np.random.default_rng(11)


def _normalized(x, axes, eps=1e-5):
    mean = x.mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(x.var(axis=axes, keepdims=True) + eps)


def test_layer_norm_normalizes_the_trailing_dims_with_weight_bias_and_act():
    x = rng.standard_normal((2, 3, 4)).astype("float32")
    with dygraph.guard():
        norm = dygraph.LayerNorm([3, 4], act="relu")
        norm.weight.set_value(np.full([12], 2.0, "float32"))
        norm.bias.set_value(np.full([12], 0.5, "float32"))
        out = norm(dygraph.to_variable(x)).numpy()
        np.testing.assert_allclose(out, np.maximum(_normalized(x, (1, 2)) * 2 + 0.5, 0), rtol=1e-4, atol=1e-5)
        bare = dygraph.LayerNorm(4, scale=False, shift=False)
        assert bare.parameters() == []
        np.testing.assert_allclose(bare(dygraph.to_variable(x)).numpy(), _normalized(x, (2,)), rtol=1e-4, atol=1e-5)
        with pytest.raises(ValueError, match="normalized_shape"):
            norm(dygraph.to_variable(np.ones([2, 4, 3], "float32")))


def test_group_norm_is_unscaled_unless_given_parameter_attrs():
    x = rng.standard_normal((2, 4, 3, 3)).astype("float32")
    expect = _normalized(x.reshape(2, 2, -1), (2,)).reshape(x.shape)
    with dygraph.guard():
        plain = dygraph.GroupNorm(4, groups=2)
        assert plain.weight is None and plain.bias is None
        np.testing.assert_allclose(plain(dygraph.to_variable(x)).numpy(), expect, rtol=1e-4, atol=1e-5)
        scaled = dygraph.GroupNorm(4, 2, param_attr=fluid.ParamAttr(), bias_attr=fluid.ParamAttr(), act="relu")
        assert scaled.weight.shape == [4] and scaled.bias.shape == [4]
        np.testing.assert_allclose(scaled(dygraph.to_variable(x)).numpy(), np.maximum(expect, 0), rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="NCHW"):
        dygraph.GroupNorm(4, 2, data_layout="NHWC")


def test_instance_norm_normalizes_each_channel_of_each_sample_and_trains():
    x = rng.standard_normal((2, 3, 4, 4)).astype("float32")
    with dygraph.guard():
        norm = dygraph.InstanceNorm(3)
        t = dygraph.to_variable(x)
        out = norm(t)
        np.testing.assert_allclose(out.numpy(), _normalized(x, (2, 3)), rtol=1e-4, atol=1e-5)
        fluid.layers.reduce_sum(out * out).backward()
        assert norm.scale.grad is not None and norm.bias.grad is not None
    with pytest.raises(ValueError, match="bias_attr"):
        dygraph.InstanceNorm(3, bias_attr=False)


def test_norm_layers_made_outside_imperative_mode_build_programs():
    x = rng.standard_normal((2, 3, 4)).astype("float32")
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        out = dygraph.LayerNorm([4])(fluid.data("x", [None, 3, 4]))
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        (got,) = exe.run(main, feed={"x": x}, fetch_list=[out])
    np.testing.assert_allclose(got, _normalized(x, (2,)), rtol=1e-4, atol=1e-5)


def _spectral_norm(weight, u, v, dim, power_iters, eps):
    """Paddle 1.8.5's test_spectral_norm_op.py reference."""
    shape = weight.shape
    h = shape[dim]
    mat = weight.transpose([dim] + [d for d in range(len(shape)) if d != dim]).reshape(h, -1)
    u, v = u.reshape(h, 1), v.reshape(-1, 1)
    for _ in range(power_iters):
        v = mat.T @ u
        v = v / (np.sqrt((v * v).sum()) + eps)
        u = mat @ v
        u = u / (np.sqrt((u * u).sum()) + eps)
    return weight / (u * (mat @ v)).sum()


@pytest.mark.parametrize("dim, power_iters", [(0, 1), (1, 3)])
def test_spectral_norm_divides_the_weight_by_its_estimated_largest_singular_value(dim, power_iters):
    w = rng.standard_normal((4, 3, 2)).astype("float32")
    with dygraph.guard():
        norm = dygraph.SpectralNorm([4, 3, 2], dim=dim, power_iters=power_iters)
        assert norm.weight_u.shape == [w.shape[dim]] and norm.weight_v.shape == [24 // w.shape[dim]]
        assert norm.weight_u.stop_gradient and norm.weight_v.stop_gradient
        out = norm(dygraph.to_variable(w)).numpy()
        expect = _spectral_norm(w, norm.weight_u.numpy(), norm.weight_v.numpy(), dim, power_iters, 1e-12)
    np.testing.assert_allclose(out, expect, rtol=1e-4, atol=1e-6)


def test_tree_conv_convolves_each_nodes_patch_as_paddles_reference():
    from op_cases.tree_conv import _EDGES, naive_tree_conv

    nodes = rng.standard_normal((2, 17, 3)).astype("float32")
    with dygraph.guard():
        conv = dygraph.TreeConv(feature_size=3, output_size=2, num_filters=1, max_depth=2)
        out = conv(dygraph.to_variable(nodes), dygraph.to_variable(_EDGES))
        expect = naive_tree_conv(_EDGES, nodes, conv.weight.numpy(), max_depth=2)["Out"]
        np.testing.assert_allclose(out.numpy(), np.tanh(expect), rtol=1e-4, atol=1e-5)
        fluid.layers.reduce_sum(out).backward()
        assert conv.weight.grad is not None and conv.bias is None
        with pytest.raises(TypeError, match="nodes_vector"):
            conv(nodes, dygraph.to_variable(_EDGES))


def _naive_conv(x, w, stride, pad):
    """A direct N-d convolution (cross-correlation) of NC... x by filter [F, C, *k]."""
    nd = x.ndim - 2
    x = np.pad(x, [(0, 0), (0, 0)] + [(p, p) for p in pad])
    k = w.shape[2:]
    out_sp = [(x.shape[2 + i] - k[i]) // stride[i] + 1 for i in range(nd)]
    out = np.zeros((x.shape[0], w.shape[0], *out_sp))
    for idx in np.ndindex(*out_sp):
        window = tuple(slice(i * s, i * s + kk) for i, s, kk in zip(idx, stride, k))
        axes = list(range(1, nd + 2))
        out[(slice(None), slice(None), *idx)] = np.tensordot(x[(slice(None), slice(None), *window)], w, (axes, axes))
    return out


def _naive_conv_transpose(x, w, stride, pad):
    """Each input element scatters filter [C, F, *k] times itself; the padding is cut off after."""
    nd = x.ndim - 2
    k = w.shape[2:]
    full = [(x.shape[2 + i] - 1) * stride[i] + k[i] for i in range(nd)]
    out = np.zeros((x.shape[0], w.shape[1], *full))
    for idx in np.ndindex(*x.shape[2:]):
        window = tuple(slice(i * s, i * s + kk) for i, s, kk in zip(idx, stride, k))
        out[(slice(None), slice(None), *window)] += np.tensordot(x[(slice(None), slice(None), *idx)], w, axes=(1, 0))
    return out[(slice(None), slice(None), *(slice(p, f - p) for p, f in zip(pad, full)))]


def test_conv3d_computes_as_numpy_with_bias_and_act():
    x = rng.standard_normal((2, 2, 4, 4, 4)).astype("float32")
    with dygraph.guard():
        conv = dygraph.Conv3D(2, 3, 2, stride=2, padding=1, act="relu")
        conv.bias.set_value(np.array([0.1, -0.2, 0.3], "float32"))
        out = conv(dygraph.to_variable(x)).numpy()
        expect = _naive_conv(x, conv.weight.numpy(), [2] * 3, [1] * 3) + conv.bias.numpy()[:, None, None, None]
        assert conv.weight.shape == [3, 2, 2, 2, 2]
    np.testing.assert_allclose(out, np.maximum(expect, 0), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("use_cudnn", [True, False])
def test_conv2d_transpose_scatters_each_input_through_the_filter(use_cudnn):
    x = rng.standard_normal((1, 3, 3, 3)).astype("float32")
    with dygraph.guard():
        groups = None if use_cudnn else 3  # groups == channels == filters without cuDNN: the depthwise kernel
        conv = dygraph.Conv2DTranspose(3, 3, 3, stride=2, padding=1, groups=groups, use_cudnn=use_cudnn)
        out = conv(dygraph.to_variable(x)).numpy()
        w = conv.weight.numpy()
        if groups:  # [C, 1, k, k]: each channel its own filter
            w = np.stack([np.eye(3)[c][:, None, None] * w[c, 0] for c in range(3)])
        expect = _naive_conv_transpose(x, w, [2, 2], [1, 1]) + conv.bias.numpy()[:, None, None]
    assert out.shape == (1, 3, 5, 5)
    np.testing.assert_allclose(out, expect, rtol=1e-4, atol=1e-5)


def test_conv2d_transpose_output_size_picks_among_the_sizes_strides_allow():
    with dygraph.guard():
        conv = dygraph.Conv2DTranspose(1, 1, 3, output_size=[6, 6], stride=2, padding=1)
        assert conv(dygraph.to_variable(np.ones([1, 1, 3, 3], "float32"))).shape == [1, 1, 6, 6]


def test_conv3d_transpose_adds_its_bias_only_when_given_a_bias_attr():
    x = rng.standard_normal((1, 2, 2, 2, 2)).astype("float32")
    with dygraph.guard():
        plain = dygraph.Conv3DTranspose(2, 2, 2)
        assert plain.bias is not None  # made, as Paddle 1.8's, but not added
        expect = _naive_conv_transpose(x, plain.weight.numpy(), [1] * 3, [0] * 3)
        np.testing.assert_allclose(plain(dygraph.to_variable(x)).numpy(), expect, rtol=1e-4, atol=1e-5)
        biased = dygraph.Conv3DTranspose(
            2, 2, 2, bias_attr=fluid.ParamAttr(initializer=fluid.initializer.Constant(1.0))
        )
        expect = _naive_conv_transpose(x, biased.weight.numpy(), [1] * 3, [0] * 3) + 1.0
        np.testing.assert_allclose(biased(dygraph.to_variable(x)).numpy(), expect, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("mode", ["all", "channel", "element"])
def test_prelu_scales_negatives_by_alpha_of_its_mode(mode):
    x = rng.standard_normal((2, 3, 2, 2)).astype("float32")
    with dygraph.guard():
        prelu = dygraph.PRelu(mode, channel=3, input_shape=x.shape)
        alpha = rng.uniform(0.1, 0.5, prelu.weight.shape).astype("float32")
        prelu.weight.set_value(alpha)
        out = prelu(dygraph.to_variable(x)).numpy()
    assert prelu.weight.shape == {"all": [1], "channel": [1, 3, 1, 1], "element": [1, 3, 2, 2]}[mode]
    np.testing.assert_allclose(out, np.where(x > 0, x, alpha * x), rtol=1e-6)
    with pytest.raises(ValueError, match="mode"):
        dygraph.PRelu("row")


def test_bilinear_tensor_product_is_x_w_y_plus_bias():
    x = rng.standard_normal((4, 3)).astype("float32")
    y = rng.standard_normal((4, 5)).astype("float32")
    with dygraph.guard():
        layer = dygraph.BilinearTensorProduct(3, 5, 2, act="tanh")
        layer.bias.set_value(np.array([[0.5, -0.5]], "float32"))
        out = layer(dygraph.to_variable(x), dygraph.to_variable(y)).numpy()
        expect = np.einsum("ni,kij,nj->nk", x, layer.weight.numpy(), y) + layer.bias.numpy()
        assert dygraph.BilinearTensorProduct(3, 5, 2, bias_attr=False).bias is None
    np.testing.assert_allclose(out, np.tanh(expect), rtol=1e-4, atol=1e-5)
