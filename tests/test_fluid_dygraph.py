"""fluid.dygraph (Paddle 1.8's imperative mode): entering and leaving it, to_variable, no_grad, grad,
the 1.x layer classes against NumPy (eagerly and in a static program), save_dygraph/load_dygraph.
Expected values follow Paddle 1.8.5's unit tests (test_imperative_basic.py, test_layers.py)."""

from __future__ import annotations

import numpy as np
import pytest
from dygraph_helpers import fresh_mode_and_names  # noqa: F401  (autouse)

import fleetgraph.fluid as fluid
from fleetgraph.dygraph import mode
from fleetgraph.dygraph.tensor import Tensor

dygraph = fluid.dygraph
rng = np.random.default_rng(7)


def test_guard_turns_imperative_mode_on_inside_and_restarts_parameter_names():
    assert not dygraph.enabled()
    for _ in range(2):
        with dygraph.guard():
            assert dygraph.enabled() and fluid.framework.in_dygraph_mode()
            assert dygraph.Linear(2, 3).weight.name == "linear_0.w_0"
    assert not dygraph.enabled()


def test_enable_dygraph_holds_until_disable_and_imperative_names_alias_it():
    dygraph.enable_dygraph()
    dygraph.enable_imperative()  # a second call while on does nothing
    assert dygraph.enabled()
    dygraph.disable_imperative()
    assert not dygraph.enabled()
    dygraph.disable_dygraph()  # nothing to leave
    assert not dygraph.enabled()


def test_to_variable_shares_the_array_unless_zero_copy_false_or_a_dtype_is_given():
    with dygraph.guard():
        a = np.arange(6, dtype="float32").reshape(2, 3)
        shared, copied = dygraph.to_variable(a), dygraph.to_variable(a, zero_copy=False)
        cast = dygraph.to_variable(a, dtype="float64", name="x64")
        a[0, 0] = 100.0
        assert shared.numpy()[0, 0] == 100.0 and copied.numpy()[0, 0] == 0.0
        assert cast.dtype == "float64" and cast.name == "x64" and cast.numpy()[0, 0] == 0.0
        assert shared.stop_gradient and dygraph.to_variable(shared) is shared
        with pytest.raises(TypeError, match="numpy.ndarray"):
            dygraph.to_variable([1.0, 2.0])


@pytest.mark.parametrize("form", ["with", "decorator", "decorator_call"])
def test_no_grad_records_nothing_in_each_of_its_forms(form):
    with dygraph.guard():
        x = dygraph.to_variable(np.ones([2], "float32"))
        x.stop_gradient = False

        def double(v):
            return v * 2

        if form == "with":
            with dygraph.no_grad():
                y = double(x)
        else:
            y = (dygraph.no_grad(double) if form == "decorator" else dygraph.no_grad()(double))(x)
        assert y.stop_gradient


def _grad_of_two_outputs(grad_outputs):
    x = dygraph.to_variable(np.array([2.0], "float32"))
    x.stop_gradient = False
    y1, y2 = x * x, x * 3
    return dygraph.grad([y1, y2], [x], grad_outputs)[0].numpy()


def test_grad_sums_the_outputs_gradients_seeded_as_paddle_documents():
    with dygraph.guard():
        three = dygraph.to_variable(np.array([3.0], "float32"))
        four = dygraph.to_variable(np.array([4.0], "float32"))
        assert _grad_of_two_outputs(None) == [7.0]
        assert _grad_of_two_outputs([None, four]) == [16.0]
        assert _grad_of_two_outputs([four, None]) == [19.0]
        assert _grad_of_two_outputs([three, four]) == [24.0]


def test_grad_leaves_every_grad_as_it_was_and_reaches_intermediate_tensors():
    with dygraph.guard():
        x = dygraph.to_variable(np.ones([1], "float32"))
        x.stop_gradient = False
        y = x * x
        dx = dygraph.grad([y], [x], retain_graph=True)[0]
        assert x.grad is None
        (y + dx).backward()  # dx is a constant: d/dx (x*x + 2) = 2
        np.testing.assert_allclose(x.gradient(), [2.0])
        h = x * 3
        (dh,) = dygraph.grad([h * h], [h])
        np.testing.assert_allclose(dh.numpy(), [6.0])
        np.testing.assert_allclose(x.gradient(), [2.0])


def test_grad_refuses_unreached_inputs_and_higher_order_gradients():
    with dygraph.guard():
        x, z = (dygraph.to_variable(np.ones([1], "float32")) for _ in range(2))
        x.stop_gradient = z.stop_gradient = False
        with pytest.raises(Exception, match="not reached"):
            dygraph.grad([x * 2], [z], retain_graph=True)
        assert dygraph.grad([x * 2], [z], allow_unused=True) == (None,)
        with pytest.raises(NotImplementedError, match="create_graph"):
            dygraph.grad([x * 2], [x], create_graph=True)


def _naive_conv2d(x, w, pad):
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, _, h, wd = x.shape
    f, _, kh, kw = w.shape
    out = np.zeros((n, f, h - kh + 1, wd - kw + 1), x.dtype)
    for i in range(out.shape[2]):
        for j in range(out.shape[3]):
            out[:, :, i, j] = np.einsum("nchw,fchw->nf", x[:, :, i : i + kh, j : j + kw], w)
    return out


def test_linear_and_conv2d_compute_as_numpy_with_their_act():
    x = rng.standard_normal((2, 3, 5, 5)).astype("float32")
    with dygraph.guard():
        conv = dygraph.Conv2D(3, 4, 3, padding=1, act="relu")
        out = conv(dygraph.to_variable(x)).numpy()
        expect = _naive_conv2d(x, conv.weight.numpy(), 1) + conv.bias.numpy()[:, None, None]
        np.testing.assert_allclose(out, np.maximum(expect, 0), rtol=1e-5, atol=1e-5)
        linear = dygraph.Linear(5, 2, act="sigmoid", dtype="float64")
        v = rng.standard_normal((4, 3, 5))
        got = linear(dygraph.to_variable(v)).numpy()
        assert linear.weight.dtype == "float64"
        expect = 1 / (1 + np.exp(-(v @ linear.weight.numpy() + linear.bias.numpy())))
        np.testing.assert_allclose(got, expect, rtol=1e-10)
        assert dygraph.Linear(5, 2, bias_attr=False).bias is None


def test_conv2d_filter_starts_normal_with_paddles_std():
    with dygraph.guard():
        w = dygraph.Conv2D(8, 64, 3).weight.numpy()
        assert w.shape == (64, 8, 3, 3)
        assert abs(w.std() - (2.0 / (8 * 9)) ** 0.5) < 0.02


def test_pool2d_max_avg_and_global_pooling():
    x = rng.standard_normal((1, 2, 4, 4)).astype("float32")
    with dygraph.guard():
        t = dygraph.to_variable(x)
        blocks = x.reshape(1, 2, 2, 2, 2, 2).transpose(0, 1, 2, 4, 3, 5)
        mx = dygraph.Pool2D(2, "max", 2)(t).numpy()
        np.testing.assert_allclose(mx, blocks.max(axis=(4, 5)))
        avg = dygraph.Pool2D(2, "avg", 2)(t).numpy()
        np.testing.assert_allclose(avg, blocks.mean(axis=(4, 5)), rtol=1e-6)
        glob = dygraph.Pool2D(pool_type="avg", global_pooling=True)(t).numpy()
        np.testing.assert_allclose(glob, x.mean(axis=(2, 3), keepdims=True), rtol=1e-6)
    with pytest.raises(ValueError, match="pool_size"):
        dygraph.Pool2D()
    with pytest.raises(ValueError, match="pool_type"):
        dygraph.Pool2D(2, "min")


def test_embedding_picks_rows_and_zeroes_the_padding_row():
    with dygraph.guard():
        emb = dygraph.Embedding([10, 3], padding_idx=-1)
        ids = np.array([[1, 9], [4, 1]], "int64")
        out = emb(dygraph.to_variable(ids)).numpy()
        w = emb.weight.numpy()
        np.testing.assert_allclose(out[0, 0], w[1])
        np.testing.assert_allclose(out[1, 0], w[4])
        np.testing.assert_allclose(out[0, 1], np.zeros(3))
        assert out.shape == (2, 2, 3)


def test_dropout_scales_as_its_implementation_says_and_is_identity_in_eval():
    with dygraph.guard():
        x = dygraph.to_variable(np.ones([1000], "float32"))
        up = dygraph.Dropout(0.5, dropout_implementation="upscale_in_train")
        kept = up(x).numpy()
        assert set(np.unique(kept)) <= {0.0, 2.0} and 0.4 < (kept > 0).mean() < 0.6
        down = dygraph.Dropout(0.5)
        assert set(np.unique(down(x).numpy())) <= {0.0, 1.0}
        down.eval()
        np.testing.assert_allclose(down(x).numpy(), np.full(1000, 0.5))
    with pytest.raises(ValueError, match="dropout_implementation"):
        dygraph.Dropout(0.5, dropout_implementation="other")


def test_batch_norm_normalizes_by_batch_statistics_then_running_ones_in_eval():
    x = rng.standard_normal((4, 3, 2, 2)).astype("float32")
    with dygraph.guard():
        bn = dygraph.BatchNorm(3, act="relu")
        out = bn(dygraph.to_variable(x)).numpy()
        mean, var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
        expect = (x - mean[:, None, None]) / np.sqrt(var[:, None, None] + 1e-5)
        np.testing.assert_allclose(out, np.maximum(expect, 0), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(bn._mean.numpy(), 0.1 * mean, rtol=1e-5, atol=1e-7)
    with pytest.raises(NotImplementedError, match="trainable_statistics"):
        dygraph.BatchNorm(3, trainable_statistics=True)


def test_gru_unit_returns_hidden_reset_hidden_and_gate_as_numpy():
    d, batch = 2, 3
    x = rng.standard_normal((batch, 3 * d)).astype("float32")
    h = rng.standard_normal((batch, d)).astype("float32")
    with dygraph.guard():
        unit = dygraph.GRUUnit(3 * d)
        hidden, reset_hidden, gate = (t.numpy() for t in unit(dygraph.to_variable(x), dygraph.to_variable(h)))
        w, b = unit.weight.numpy(), unit.bias.numpy()
    g, flat = x + b, w.flatten()  # Weight read as Paddle lays it out: [D, 2D] gates, then [D, D]
    u_r = 1 / (1 + np.exp(-(h @ flat[: 2 * d * d].reshape(d, 2 * d) + g[:, : 2 * d])))
    u, r = u_r[:, :d], u_r[:, d:]
    c = np.tanh((r * h) @ flat[2 * d * d :].reshape(d, d) + g[:, 2 * d :])
    np.testing.assert_allclose(reset_hidden, r * h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hidden, u * c + (1 - u) * h, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gate, np.concatenate([u, r, c], axis=1), rtol=1e-5, atol=1e-6)


def test_nce_loss_is_a_column_per_sample_that_trains_its_weight():
    with dygraph.guard():
        nce = dygraph.NCE(20, 4, num_neg_samples=5, seed=1, bias_attr=fluid.ParamAttr())
        x = dygraph.to_variable(rng.standard_normal((3, 4)).astype("float32"))
        cost = nce(x, dygraph.to_variable(np.array([[1], [5], [7]], "int64")))
        assert cost.shape == [3, 1] and (cost.numpy() > 0).all()
        fluid.layers.reduce_sum(cost).backward()
        assert nce.weight.grad is not None and nce.bias is not None
        custom = dygraph.NCE(4, 4, sampler="custom_dist", custom_dist=[0.1, 0.2, 0.3, 0.4])
        assert custom(x, dygraph.to_variable(np.array([[1], [2], [3]], "int64"))).shape == [3, 1]
        assert [p.trainable for p in custom.parameters()].count(True) == 1  # the alias tables are constants


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_losses_reduce_as_asked(reduction):
    x = rng.uniform(0.1, 0.9, (3, 4)).astype("float32")
    y = rng.uniform(0.0, 1.0, (3, 4)).astype("float32")
    reduce = {"mean": np.mean, "sum": np.sum, "none": lambda v: v}[reduction]
    with dygraph.guard():
        tx, ty = dygraph.to_variable(x), dygraph.to_variable(y)
        np.testing.assert_allclose(dygraph.MSELoss(reduction)(tx, ty).numpy().reshape(-1),
                                   np.ravel(reduce((x - y) ** 2)), rtol=1e-5)  # fmt: skip
        np.testing.assert_allclose(dygraph.L1Loss(reduction)(tx, ty).numpy().reshape(-1),
                                   np.ravel(reduce(np.abs(x - y))), rtol=1e-5)  # fmt: skip
        bce = -(y * np.log(x) + (1 - y) * np.log(1 - x))
        np.testing.assert_allclose(dygraph.BCELoss(reduction=reduction)(tx, ty).numpy().reshape(-1),
                                   np.ravel(reduce(bce)), rtol=1e-5)  # fmt: skip
    with pytest.raises(ValueError, match="reduction"):
        dygraph.L1Loss("max")


def test_layers_made_outside_imperative_mode_build_a_static_program():
    x = rng.standard_normal((2, 3)).astype("float32")
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        data = fluid.data("x", [None, 3])
        linear = dygraph.Linear(3, 2, act="relu")
        assert not isinstance(linear.weight, Tensor)
        out = linear(data)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        (got,) = exe.run(main, feed={"x": x}, fetch_list=[out])
        w, b = (np.asarray(scope.vars[p.name]) for p in (linear.weight, linear.bias))
    np.testing.assert_allclose(got, np.maximum(x @ w + b, 0), rtol=1e-5)
    assert mode._mode is None


def test_save_dygraph_and_load_dygraph_round_trip_parameters_and_optimizer_state(tmp_path):
    path = str(tmp_path / "model")
    with dygraph.guard():
        linear = dygraph.Linear(3, 2)
        adam = fluid.optimizer.Adam(0.1, parameter_list=linear.parameters())
        loss = fluid.layers.reduce_mean(linear(dygraph.to_variable(np.ones([2, 3], "float32"))))
        loss.backward()
        adam.minimize(loss)
        dygraph.save_dygraph(linear.state_dict(), path)
        dygraph.save_dygraph(adam.state_dict(), path)
        params, opt = dygraph.load_dygraph(path)
        np.testing.assert_allclose(params["weight"], linear.weight.numpy())
        assert "StructuredToParameterName@@" not in params
        assert any(k.endswith("moment1_0") for k in opt)
        restored = dygraph.Linear(3, 2)
        restored.set_dict(params)
        np.testing.assert_allclose(restored.weight.numpy(), linear.weight.numpy())
        named, _ = dygraph.load_dygraph(path + ".pdparams", keep_name_table=True)
        assert named["StructuredToParameterName@@"] == {"weight": "linear_0.w_0", "bias": "linear_0.b_0"}
        assert dygraph.load_dygraph(str(tmp_path / "none")) == (None, None)


def test_backward_strategy_carries_sort_sum_gradient():
    strategy = dygraph.BackwardStrategy()
    assert strategy.sort_sum_gradient is False
    strategy.sort_sum_gradient = True
    assert strategy.sort_sum_gradient


def _nll_reference(logs, targets, weight, reduction, ignore_index):
    """Paddle 1.8.5's test_nll_loss.py loops (nll_loss_1d / nll_loss_2d), for any trailing dims."""
    out = np.zeros(targets.shape)
    total = 0.0
    for idx in np.ndindex(*targets.shape):
        t = targets[idx]
        if t == ignore_index:
            continue
        w = weight[t] if weight is not None else 1.0
        total += w
        out[idx] = -logs[(idx[0], t, *idx[1:])] * w
    return {"sum": out.sum(), "mean": out.sum() / total, "none": out}[reduction]


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("shape", [(6, 4), (3, 4, 2, 3), (2, 4, 5)], ids=["1d", "2d", "3d"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_picks_the_labels_log_probability_as_paddles_loops(reduction, shape, weighted):
    logs = rng.standard_normal(shape)
    targets = rng.integers(0, shape[1], (shape[0], *shape[2:]))
    targets.reshape(-1)[::4] = 1  # the ignored class, some of the time
    weight = rng.uniform(0.5, 2.0, shape[1]) if weighted else None
    with dygraph.guard():
        loss = dygraph.NLLLoss(
            weight=None if weight is None else dygraph.to_variable(weight), reduction=reduction, ignore_index=1
        )
        x = dygraph.to_variable(logs)
        x.stop_gradient = False
        out = loss(x, dygraph.to_variable(targets))
        expect = _nll_reference(logs, targets, weight, reduction, 1)
        np.testing.assert_allclose(out.numpy().reshape(np.shape(expect)), expect, rtol=1e-10)
        fluid.layers.reduce_sum(out).backward()
        assert np.all(x.gradient()[:, 1] == 0)  # the ignored class gets no gradient
    with pytest.raises(ValueError, match="reduction"):
        dygraph.NLLLoss(reduction="max")


class Scaled(dygraph.Layer):
    def __init__(self) -> None:
        super().__init__()
        self.scale = self.create_parameter([2], default_initializer=fluid.initializer.Constant(3.0))

    def forward(self, x):
        return x * self.scale


def test_a_fluid_layer_subclass_makes_eager_parameters_only_in_imperative_mode():
    import fleetgraph.nn as nn

    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        static = Scaled()
        out = static(fluid.data("x", [None, 2]))
    assert not isinstance(static.scale, Tensor) and isinstance(static, nn.Layer)
    exe = fluid.Executor(fluid.CPUPlace())
    with fluid.scope_guard(fluid.Scope()):
        exe.run(startup)
        (got,) = exe.run(main, feed={"x": np.ones([1, 2], "float32")}, fetch_list=[out])
    np.testing.assert_allclose(got, [[3.0, 3.0]])
    with dygraph.guard():
        eager = Scaled()
        assert isinstance(eager.scale, Tensor)
        np.testing.assert_allclose(eager(dygraph.to_variable(np.ones([2], "float32"))).numpy(), [3.0, 3.0])


def test_containers_are_fluid_layers_holding_their_sublayers_and_parameters():
    with dygraph.guard():
        params = dygraph.ParameterList([dygraph.Linear(2, 2).weight, dygraph.Linear(2, 3).weight])
        model = dygraph.Sequential(dygraph.Linear(2, 4), dygraph.Linear(4, 1))
        layers = dygraph.LayerList([dygraph.Linear(1, 1)])
        assert all(isinstance(c, dygraph.Layer) for c in (params, model, layers))
        assert [p.shape for p in params.parameters()] == [[2, 2], [2, 3]]
        assert model(dygraph.to_variable(np.ones([3, 2], "float32"))).shape == [3, 1]
        assert len(layers) == 1 and len(model.parameters()) == 4


def test_paddles_module_paths_hold_their_names():
    from fleetgraph.fluid.dygraph import backward_strategy, dygraph_to_static, learning_rate_scheduler, static_runner

    assert backward_strategy.BackwardStrategy is dygraph.BackwardStrategy
    assert dygraph_to_static.ProgramTranslator is dygraph.ProgramTranslator
    assert learning_rate_scheduler.NoamDecay is dygraph.NoamDecay
    assert static_runner.StaticModelRunner is dygraph.StaticModelRunner
    assert dygraph.nn.Conv2D is dygraph.Conv2D and dygraph.base.guard is dygraph.guard
    assert set(dygraph.__all__) >= {"Conv2D", "guard", "TracedLayer", "DataParallel", "StepDecay", "save_dygraph"}
