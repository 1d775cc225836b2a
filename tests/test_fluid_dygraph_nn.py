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
