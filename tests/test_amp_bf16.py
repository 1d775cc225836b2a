"""bfloat16: the dtype (ml_dtypes', Paddle's VarType 22), its casts, and `paddle.amp.auto_cast(dtype=
'bfloat16')` on the CPU: white-list ops compute on bfloat16 inputs through the one dispatch, their
gradients reach float32 parameters in float32, and small nets train to the float32 loss."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from dygraph_helpers import fresh_mode_and_names  # noqa: F401  (autouse)

import fleetgraph as paddle
import fleetgraph.nn.functional as F
from fleetgraph.ir.dtypes import convert_dtype

_RNG = np.random.RandomState(0)
_X = _RNG.randn(64, 16).astype("float32")
_Y = (_X @ _RNG.randn(16, 4).astype("float32")).argmax(1).astype("int64").reshape(-1, 1)


def _round_bf16(a: np.ndarray) -> np.ndarray:
    """IEEE round-to-nearest-even of float32 to bfloat16, by its bits (no ml_dtypes): the float32
    values bfloat16 holds."""
    bits = np.ascontiguousarray(a, "float32").view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
    return rounded.astype(np.uint32).view(np.float32)


def _bf16(a) -> np.ndarray:
    return np.asarray(a, "float32").astype(ml_dtypes.bfloat16)


def test_bfloat16_is_paddles_var_type_22_under_its_names():
    assert paddle.bfloat16 == "bfloat16" == convert_dtype(22) == convert_dtype(ml_dtypes.bfloat16)
    assert convert_dtype("paddle.bfloat16") == "bfloat16"
    from fleetgraph.ir.dtypes import VAR_TYPE_CODES

    assert VAR_TYPE_CODES["bfloat16"] == 22 and VAR_TYPE_CODES["float32"] == 5
    with pytest.raises(Exception, match="unknown VarType code 23"):
        convert_dtype(23)


def test_cast_rounds_to_bfloat16_nearest_even_and_back_exactly():
    # ties: 1 + 2^-8 lies halfway between 1 and 1 + 2^-7 (to the even 1), 1 + 3 * 2^-8 halfway
    # between 1 + 2^-7 and 1 + 2^-6 (to the even 1 + 2^-6); and a spread of magnitudes and signs
    ties = np.array([1 + 2**-8, 1 + 3 * 2**-8, -(1 + 2**-8), 2**-8 * (1 + 2**-8)], "float32")
    values = np.concatenate([ties, _RNG.randn(200).astype("float32") * 10.0 ** _RNG.randint(-6, 6, 200)])
    x = paddle.to_tensor(values)
    low = paddle.cast(x, "bfloat16")
    assert low.dtype == paddle.bfloat16 and low.numpy().dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(low.numpy().astype("float32"), _round_bf16(values))
    np.testing.assert_array_equal(low.numpy()[:4].astype("float32"), [1.0, 1 + 2**-6, -1.0, 2**-8])
    back = paddle.cast(low, 5)  # Paddle's VarType code of float32
    assert back.dtype == paddle.float32
    np.testing.assert_array_equal(back.numpy(), _round_bf16(values))
    assert x.astype(paddle.bfloat16).dtype == "bfloat16"


def test_static_program_casts_to_bfloat16_and_back():
    paddle.enable_static()
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [2, 3], "float32")
        low = paddle.cast(x, "bfloat16")
        back = paddle.cast(low, "float32")
    values = np.array([[1 + 2**-8, 3.14159, -1e-3], [65504.0, 0.0, 1 + 3 * 2**-8]], "float32")
    got_low, got_back = paddle.static.Executor(paddle.CPUPlace()).run(main, feed={"x": values}, fetch_list=[low, back])
    assert low.dtype == "bfloat16" and got_low.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(got_back, _round_bf16(values))


def _tensors(*arrays):
    return [paddle.to_tensor(a) for a in arrays]


def test_a_white_list_op_computes_on_bfloat16_rounded_inputs():
    w = _RNG.randn(16, 4).astype("float32")
    x, wt = _tensors(_X[:8], w)
    with paddle.amp.auto_cast(dtype="bfloat16"):
        out = paddle.matmul(x, wt)
    assert out.dtype == "bfloat16"
    got = out.numpy().astype("float32")
    xb, wb = _round_bf16(_X[:8]), _round_bf16(w)
    np.testing.assert_array_equal(got, _round_bf16(xb @ wb))  # float32 accumulation, one rounding
    exact = _X[:8] @ w
    assert not np.array_equal(got, exact)
    assert np.all(np.abs(got - exact) <= 2**-6 * (np.abs(_X[:8]) @ np.abs(w)))  # bfloat16's few bits, no more
    with paddle.amp.auto_cast(dtype="bfloat16"):
        with paddle.amp.auto_cast(enable=False):  # a disabled region inside casts nothing
            np.testing.assert_array_equal(paddle.matmul(x, wt).numpy(), exact)
        assert paddle.matmul(x, wt).dtype == "bfloat16"  # and the outer region's policy is back
    assert paddle.matmul(x, wt).dtype == "float32"


@pytest.mark.parametrize("level", ["O1", "O2"])
def test_ops_with_a_list_output_keep_every_part_in_a_region(level):
    """split's one output slot is a list: every part comes out rounded, and gradients flow back
    through all of them (only the first came out before)."""
    w = _RNG.randn(16, 4).astype("float32")
    x, wt = _tensors(_X[:8], w)
    wt.stop_gradient = False
    with paddle.amp.auto_cast(level=level, dtype="bfloat16"):
        h = paddle.matmul(x, wt)
        parts = paddle.split(h, 2, axis=1)
        rows = paddle.unstack(h, axis=0)
        loss = (paddle.concat(parts, axis=1) * 2.0).sum() + paddle.stack(rows).sum()
    whole = h.numpy().astype("float32")
    for got, want in zip(parts, np.split(whole, 2, axis=1)):
        np.testing.assert_array_equal(got.numpy().astype("float32"), want)
    np.testing.assert_array_equal(rows[7].numpy().astype("float32"), whole[7])
    loss.backward()
    assert wt.grad.dtype == "float32"  # d loss / d h = 3 everywhere, rounded x.T times it
    np.testing.assert_allclose(wt.grad.numpy(), _round_bf16(_X[:8]).T @ np.full((8, 4), 3.0), rtol=1e-2)


def test_gradients_reach_float32_parameters_in_float32_through_the_casts():
    lin = paddle.nn.Linear(16, 4)
    w, b = lin.weight.numpy(), _RNG.randn(4).astype("float32")
    lin.bias.set_value(b)
    with paddle.amp.auto_cast(dtype="bfloat16"):
        out = lin(paddle.to_tensor(_X[:8]))
        loss = (out * out).mean()
    assert out.dtype == loss.dtype == "float32"  # the bias add follows its float32 input
    loss.backward()
    assert lin.weight.grad.dtype == lin.bias.grad.dtype == "float32"
    # NumPy: matmul on bfloat16 inputs, its output cast up for the float32 add; backward, its output
    # gradient is cast to bfloat16 and its weight gradient (computed in float32) rounded, then cast up
    xb = _round_bf16(_X[:8])
    out_ref = _round_bf16(xb @ _round_bf16(w)) + b
    dout = 2 * out_ref / out_ref.size
    np.testing.assert_array_equal(out.numpy(), out_ref)
    np.testing.assert_array_equal(lin.bias.grad.numpy(), dout.sum(0))  # float32 all the way
    np.testing.assert_array_equal(lin.weight.grad.numpy(), _round_bf16(xb.T @ _round_bf16(dout)))


def _mlp():
    return paddle.nn.Sequential(paddle.nn.Linear(16, 32), paddle.nn.ReLU(), paddle.nn.Linear(32, 4))


def _cnn():
    return paddle.nn.Sequential(
        paddle.nn.Conv2D(1, 4, 3, padding=1), paddle.nn.ReLU(), paddle.nn.Flatten(), paddle.nn.Linear(64, 4)
    )


def _final_loss(model, init, x, y, steps: int, dtype: str | None) -> float:
    for p, v in zip(model.parameters(), init):
        p.set_value(v)
    opt = paddle.optimizer.SGD(0.1, parameters=model.parameters())
    for _ in range(steps):
        with paddle.amp.auto_cast(enable=dtype is not None, dtype=dtype or "bfloat16"):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
    return float(loss)


@pytest.mark.parametrize("make, shape", [(_mlp, (64, 16)), (_cnn, (64, 1, 4, 4))], ids=["mlp", "conv"])
def test_a_small_net_trained_in_bfloat16_reaches_the_float32_loss_within_1_percent(make, shape):
    model = make()
    init = [p.numpy() for p in model.parameters()]
    x, y = _tensors(_X.reshape(shape), _Y)
    fp32 = _final_loss(model, init, x, y, 100, None)
    bf16 = _final_loss(model, init, x, y, 100, "bfloat16")
    assert fp32 < 0.3  # it did train (from ~1.4)
    assert abs(bf16 / fp32 - 1) < 0.01
    assert bf16 != fp32  # the bfloat16 run did round


def test_custom_lists_move_ops_between_bfloat16_and_float32():
    a, b = _tensors(_X[:4, :4], _X[4:8, :4])
    ab = _round_bf16(_X[:4, :4]) @ _round_bf16(_X[4:8, :4])
    with paddle.amp.auto_cast(dtype="bfloat16"):
        assert (a + b).dtype == "float32"  # not listed, float32 inputs: float32
        h = paddle.matmul(a, b)
        assert F.relu(h).dtype == "bfloat16"  # not listed, bfloat16 inputs: bfloat16
        assert paddle.exp(h).dtype == "float32"  # black list: cast up
    with paddle.amp.auto_cast(custom_white_list={"elementwise_add"}, dtype="bfloat16"):
        added = a + b
    assert added.dtype == "bfloat16"
    np.testing.assert_array_equal(added.numpy().astype("float32"), _round_bf16(_round_bf16(a) + _round_bf16(b)))
    with paddle.amp.auto_cast(custom_black_list={"matmul", "matmul_v2"}, dtype="BFloat16"):
        kept = paddle.matmul(a, b)
    assert kept.dtype == "float32"
    np.testing.assert_array_equal(kept.numpy(), _X[:4, :4] @ _X[4:8, :4])
    with paddle.amp.auto_cast(level="o2", dtype="bfloat16"):  # O2: everything but its own black list
        assert (a + b).dtype == paddle.exp(a).dtype == "bfloat16"
        np.testing.assert_array_equal(paddle.matmul(a, b).numpy().astype("float32"), _round_bf16(ab))
        table = paddle.to_tensor(_X[:10, :4])
        assert F.embedding(paddle.to_tensor(np.array([1, 3])), table).dtype == "float32"  # lookup_table_v2
    with paddle.amp.auto_cast(level="O2", dtype="bfloat16", custom_black_list=["exp"]):
        assert paddle.exp(a).dtype == "float32" and paddle.tanh(a).dtype == "bfloat16"
    with paddle.amp.auto_cast(level="O0", dtype="bfloat16"):  # O0: float32 training
        assert paddle.matmul(a, b).dtype == "float32"
    with pytest.raises(ValueError, match="Custom white list overlap custom black list"):
        paddle.amp.auto_cast(custom_white_list=["mul"], custom_black_list={"mul"}, dtype="bfloat16")


def test_norm_ops_in_the_white_list_take_only_x_in_bfloat16():
    bn = paddle.nn.BatchNorm1D(4)
    x = paddle.to_tensor(_X[:8, :4])
    with paddle.amp.auto_cast(custom_white_list={"batch_norm"}, dtype="bfloat16"):
        out = bn(x)
    assert out.dtype == "bfloat16"
    assert bn._mean.dtype == bn._variance.dtype == "float32"  # running statistics keep their dtype
    xb = _round_bf16(_X[:8, :4])
    np.testing.assert_allclose(bn._mean.numpy(), 0.1 * xb.mean(0), rtol=1e-6)
    out.astype("float32").sum().backward()
    assert bn.weight.grad.dtype == "float32"


def test_float16_auto_cast_still_warns_and_casts_nothing():
    a, b = _tensors(_X[:4, :4], _X[4:8, :4])
    for level in ("O1", "O2"):
        with pytest.warns(UserWarning, match="amp_guard can only be enabled on CUDAPlace, current place is CPUPlace"):
            with paddle.amp.auto_cast(level=level):
                out = paddle.matmul(a, b)
        assert out.dtype == "float32"
        np.testing.assert_array_equal(out.numpy(), _X[:4, :4] @ _X[4:8, :4])


def test_bad_level_and_dtype_get_paddles_errors():
    with pytest.raises(ValueError, match="level should be O0, O1 or O2"):
        paddle.amp.auto_cast(level="O3", dtype="bfloat16")
    with pytest.raises(ValueError, match="dtype should be 'float16' or 'bfloat16'"):
        paddle.amp.auto_cast(dtype="float64")
    with pytest.raises(ValueError, match="dtype should be 'float16' or 'bfloat16'"):
        paddle.amp.auto_cast(dtype=None)
    paddle.amp.auto_cast(enable=False, dtype="float64")  # Paddle checks the dtype only when enabled
    paddle.enable_static()
    with pytest.raises(AssertionError, match="We only support 'amp_guard\\(\\)' in dynamic graph mode"):
        paddle.amp.auto_cast(dtype="bfloat16")


def test_grad_scaler_leaves_a_bfloat16_loss_unscaled():
    lin = paddle.nn.Linear(16, 4)
    w0 = lin.weight.numpy()
    opt = paddle.optimizer.SGD(0.5, parameters=lin.parameters())
    with pytest.warns(UserWarning, match="AmpScaler can only be enabled on CUDAPlace"):
        scaler = paddle.amp.GradScaler(init_loss_scaling=1024)
    with paddle.amp.auto_cast(dtype="bfloat16"):
        loss = lin(paddle.to_tensor(_X[:8])).mean()
    scaled = scaler.scale(loss)
    assert scaled is loss  # not multiplied: bfloat16 has float32's range, nothing to scale
    scaled.backward()
    grad = lin.weight.grad.numpy()
    scaler.minimize(opt, scaled)
    np.testing.assert_array_equal(lin.weight.numpy(), w0 - np.float32(0.5) * grad)


def test_an_optimizer_step_inside_an_o2_region_updates_the_float32_parameters():
    lin = paddle.nn.Linear(16, 4)
    w0 = lin.weight.numpy()
    opt = paddle.optimizer.SGD(0.5, parameters=lin.parameters())
    with paddle.amp.auto_cast(level="O2", dtype="bfloat16"):
        loss = lin(paddle.to_tensor(_X[:8])).astype("float32").mean()
        loss.backward()
        grad = lin.weight.grad.numpy()
        opt.step()  # sgd writes into its Param: never cast, it stays the parameter's own float32 array
    assert lin.weight.dtype == "float32" and grad.dtype == np.float32
    np.testing.assert_array_equal(lin.weight.numpy(), w0 - np.float32(0.5) * grad)


def _decorated_run(opt_class, lr: float, master_weight, steps: int = 100):
    """(final loss, model, optimizer) of the MLP trained from _INIT under decorate and auto_cast O2."""
    model = _mlp()
    for p, v in zip(model.parameters(), _INIT):
        p.set_value(v)
    opt = opt_class(lr, parameters=model.parameters())
    model, opt = paddle.amp.decorate(model, opt, level="O2", dtype="bfloat16", master_weight=master_weight)
    x, y = _tensors(_X, _Y)
    for _ in range(steps):
        with paddle.amp.auto_cast(level="O2", dtype="bfloat16"):
            loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        opt.clear_grad()
    return float(loss), model, opt


# the MLP's initial weights, drawn here rather than by a model built at import (which would take
# parameter names and random draws from the tests collected after this file)
_INIT = [_RNG.uniform(-0.4, 0.4, shape).astype("float32") for shape in ((16, 32), (32,), (32, 4), (4,))]


def test_decorate_o2_trains_bfloat16_parameters_through_float32_master_weights():
    fp32 = _final_loss(_mlp(), _INIT, *_tensors(_X, _Y), 100, None)
    bf16, model, opt = _decorated_run(paddle.optimizer.SGD, 0.1, None)
    assert {p.dtype for p in model.parameters()} == {"bfloat16"}
    assert abs(bf16 / fp32 - 1) < 0.01
    masters = opt.state_dict()["master_weights"]
    for p in model.parameters():  # each parameter is its float32 master rounded
        assert masters[p.name].dtype == "float32"
        np.testing.assert_array_equal(p.numpy().astype("float32"), _round_bf16(masters[p.name].numpy()))
    # a new optimizer given the state continues from the masters, not from the rounded parameters
    resumed = paddle.amp.decorate(model, paddle.optimizer.SGD(0.1, parameters=model.parameters()), level="O2",
                                  dtype="bfloat16")[1]  # fmt: skip
    resumed.set_state_dict(opt.state_dict())
    with paddle.amp.auto_cast(level="O2", dtype="bfloat16"):
        F.cross_entropy(model(paddle.to_tensor(_X)), paddle.to_tensor(_Y)).backward()
    grads = {p.name: p.grad.numpy() for p in model.parameters()}
    resumed.step()
    for name, master in resumed.state_dict()["master_weights"].items():
        np.testing.assert_array_equal(master.numpy(), masters[name].numpy() - np.float32(0.1) * grads[name])
    # Adam's small steps vanish in bfloat16's 8 bits without master weights: training goes astray
    kept, _, _ = _decorated_run(paddle.optimizer.Adam, 0.01, None)
    lost, _, opt = _decorated_run(paddle.optimizer.Adam, 0.01, False)
    assert kept < 0.01 and lost > 100 * kept and "master_weights" not in opt.state_dict()


def test_decorate_keeps_batch_norm_in_float32_and_checks_its_arguments():
    net = paddle.nn.Sequential(paddle.nn.Linear(4, 4), paddle.nn.BatchNorm1D(4))
    assert paddle.amp.decorate(net, level="O1") is net and net[0].weight.dtype == "float32"
    paddle.amp.decorate([net], level="O2", dtype="bfloat16")
    assert net[0].weight.dtype == net[0].bias.dtype == "bfloat16"
    assert net[1].weight.dtype == net[1]._mean.dtype == "float32"
    with pytest.raises(ValueError, match="level should be O1 or O2"):
        paddle.amp.decorate(net, level="O3", dtype="bfloat16")
    with pytest.raises(ValueError, match="dtype only support float16 or bfloat16"):
        paddle.amp.decorate(net, level="O2", dtype="float64")
    with pytest.raises(NotImplementedError, match="float16 parameters need float16 kernels"):
        paddle.amp.decorate(net, level="O2")
    with pytest.raises(NotImplementedError, match="save_dtype"):
        paddle.amp.decorate(net, level="O2", dtype="bfloat16", save_dtype="float32")
    with pytest.raises(TypeError, match="models must be either a single model or a list of models"):
        paddle.amp.decorate("net", level="O2", dtype="bfloat16")
    with pytest.raises(TypeError, match="optimizers must be either a single optimizer or a list of optimizers"):
        paddle.amp.decorate(net, optimizers=[object()], level="O2", dtype="bfloat16")


def test_paddle_save_keeps_bfloat16_tensors_and_master_weights(tmp_path):
    net = paddle.nn.Linear(4, 3)
    opt = paddle.optimizer.Adam(0.1, parameters=net.parameters())
    net, opt = paddle.amp.decorate(net, opt, level="O2", dtype="bfloat16")
    with paddle.amp.auto_cast(level="O2", dtype="bfloat16"):
        net(paddle.to_tensor(_X[:2, :4])).astype("float32").mean().backward()
    opt.step()
    paddle.save(net.state_dict(), str(tmp_path / "m.pdparams"))
    paddle.save(opt.state_dict(), str(tmp_path / "m.pdopt"))
    params, state = paddle.load(str(tmp_path / "m.pdparams")), paddle.load(str(tmp_path / "m.pdopt"))
    assert params["weight"].dtype == "bfloat16"
    np.testing.assert_array_equal(params["weight"].numpy(), net.weight.numpy())
    masters = state["master_weights"]
    assert masters[net.weight.name].dtype == "float32"
    np.testing.assert_array_equal(
        masters[net.weight.name].numpy(), opt.state_dict()["master_weights"][net.weight.name].numpy()
    )
    assert paddle.load(str(tmp_path / "m.pdparams"), return_numpy=True)["bias"].dtype == ml_dtypes.bfloat16


def test_bfloat16_is_refused_on_a_place_without_it():
    import types

    from fleetgraph.dygraph import mode

    class GpuLike(paddle.CPUPlace):  # what a CUDAPlace's array module (CuPy) lacks: ml_dtypes' bfloat16
        def array_module(self):
            return types.SimpleNamespace(__name__="cupy")

    net = paddle.nn.Linear(2, 2)
    mode.use_place(GpuLike())
    try:
        with pytest.raises(RuntimeError, match="bfloat16 runs on the CPU place .* computes with cupy"):
            with paddle.amp.auto_cast(dtype="bfloat16"):
                pass
        with pytest.raises(RuntimeError, match="bfloat16 parameters live on the CPU place"):
            paddle.amp.decorate(net, level="O2", dtype="bfloat16")
    finally:
        mode.use_place(paddle.CPUPlace())
