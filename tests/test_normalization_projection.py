"""The normalization and projection layers of fluid.layers (Paddle 1.8's signatures) build their
parameters as Paddle's do and give the results of Paddle 1.8's unit-test references, in a program
and eagerly through the same layer functions."""

from __future__ import annotations

import numpy as np
import pytest
from op_cases.normalization import ref_group_norm, ref_instance_norm, ref_layer_norm, ref_lrn, ref_norm

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import Program, program_guard, unique_name


def run_static(build, **feeds):
    """build(*data variables) -> fetches, run with its startup program in a fresh scope on `feeds`."""
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        xs = [fluid.data(name, list(v.shape), str(v.dtype)) for name, v in feeds.items()]
        fetches = build(*xs)
    fetches = list(fetches) if isinstance(fetches, (list, tuple)) else [fetches]
    exe, scope = fluid.Executor(), paddle.static.Scope()
    exe.run(startup, scope=scope)
    return exe.run(main, feed=feeds, fetch_list=fetches, scope=scope)


def run_eager(build, **feeds):
    paddle.disable_static()
    try:
        outs = build(*(paddle.to_tensor(v) for v in feeds.values()))
        return [o.numpy() for o in (outs if isinstance(outs, (list, tuple)) else [outs])]
    finally:
        paddle.enable_static()


both_modes = pytest.mark.parametrize("run", [run_static, run_eager], ids=["static", "eager"])
RNG = np.random.default_rng(7)
X4 = RNG.uniform(-1, 1, (2, 6, 3, 4)).astype("float32")


@both_modes
def test_layer_norm_normalizes_from_begin_norm_axis_with_unit_scale_and_zero_shift(run):
    (got,) = run(lambda x: fluid.layers.layer_norm(x, begin_norm_axis=2), x=X4)
    want = ref_layer_norm(X4, np.ones(12), np.zeros(12), epsilon=1e-5, begin_norm_axis=2)["Y"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_layer_norm_creates_scale_and_bias_of_the_normalized_size_only_when_asked():
    main = Program()
    with program_guard(main, Program()), unique_name.guard():
        x = fluid.data("x", [-1, 6, 3, 4], "float32")
        fluid.layers.layer_norm(x, begin_norm_axis=1)
        fluid.layers.layer_norm(x, scale=False, shift=False)
    ops = [op for op in main.global_block().ops if op.type == "layer_norm"]
    assert [p.shape for p in main.global_block().all_parameters()] == [(72,), (72,)]
    assert sorted(ops[0].inputs) == ["Bias", "Scale", "X"] and sorted(ops[1].inputs) == ["X"]


@both_modes
def test_group_norm_is_unscaled_by_default_as_paddle_1_8(run):
    (got,) = run(lambda x: fluid.layers.group_norm(x, groups=3), x=X4)
    want = ref_group_norm(X4, epsilon=1e-5, groups=3, data_layout="NCHW")["Y"]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_group_norm_with_param_attr_learns_a_scale_per_channel():
    main = Program()
    with program_guard(main, Program()), unique_name.guard():
        x = fluid.data("x", [-1, 6, 3, 4], "float32")
        fluid.layers.group_norm(x, groups=2, param_attr="gn_w", bias_attr="gn_b", data_layout="NCHW")
    assert {p.name: p.shape for p in main.global_block().all_parameters()} == {"gn_w": (6,), "gn_b": (6,)}


@both_modes
def test_instance_norm_normalizes_each_channel_of_each_sample(run):
    (got,) = run(lambda x: fluid.layers.instance_norm(x), x=X4)
    np.testing.assert_allclose(got, ref_instance_norm(X4, epsilon=1e-5)["Y"], rtol=1e-4, atol=1e-5)


@both_modes
def test_l2_normalize_matches_paddles_docstring(run):
    """The docstring prints its input to 8 digits, so its output agrees to 5e-5."""
    x = np.array([[0.83734537, 0.20570076, 0.90704411], [0.89466474, 0.51640567, 0.78392446]], "float32")
    (got,) = run(lambda v: fluid.layers.l2_normalize(v, axis=-1), x=x)
    np.testing.assert_allclose(got, [[0.66907585, 0.16437206, 0.7247892], [0.6899054, 0.3982376, 0.6045142]], atol=5e-5)
    (flat,) = run(lambda v: fluid.layers.l2_normalize(v, axis=3), x=x[0])  # 1-D: axis 0 whatever is given
    np.testing.assert_allclose(flat, ref_norm(x[0], axis=0, epsilon=1e-12)["Out"], rtol=1e-5)


@both_modes
def test_lrn_uses_the_layers_k_of_one_and_a_centred_window(run):
    (got,) = run(lambda x: fluid.layers.lrn(x, n=3, alpha=0.5), x=X4)
    want = ref_lrn(X4, n=3, k=1.0, alpha=0.5, beta=0.75, data_format="NCHW")["Out"]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_lrn_refuses_float64_and_other_ranks_as_paddle():
    with program_guard(Program(), Program()):
        with pytest.raises(TypeError, match="lrn: input expected a float32"):
            fluid.layers.lrn(fluid.data("d", [2, 3, 4, 4], "float64"))
        with pytest.raises(ValueError, match="expected rank 4"):
            fluid.layers.lrn(fluid.data("f", [2, 3, 4], "float32"))


@both_modes
def test_affine_channel_matches_paddles_docstring(run):
    def build(x):
        scale = fluid.layers.fill_constant([1], "float32", 2.0)
        bias = fluid.layers.fill_constant([1], "float32", 0.5)
        return fluid.layers.affine_channel(x, scale=scale, bias=bias)

    (got,) = run(build, x=np.ones([1, 1, 2, 2], "float32"))
    np.testing.assert_allclose(got, np.full([1, 1, 2, 2], 2.5))
