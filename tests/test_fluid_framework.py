"""Fluid 1.8's framework-level names: version and flag checks, places, device_guard, cpt, the install
check, error clips and set_gradient_clip, regularization and initializers, the deprecated memory
passes, and the fleet modules' re-exports; oracles are Paddle's unit tests and documented values."""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph import absent
from fleetgraph.dygraph.mode import guard
from fleetgraph.ir import Program, program_guard, unique_name
from tests.test_ops_misc import _init


def test_require_version_accepts_the_api_it_follows_and_refuses_others():
    # Paddle's test_require_version.py: formats, types and ranges
    fluid.require_version("0.1.0")
    fluid.require_version("1.8.5")
    fluid.require_version(min_version="1.4", max_version="2.0.0")
    with pytest.raises(Exception, match="VersionError"):
        fluid.require_version("100.0.0")
    with pytest.raises(Exception, match="VersionError"):
        fluid.require_version("1.4.0", "1.7.0")
    with pytest.raises(TypeError):
        fluid.require_version(100)
    with pytest.raises(TypeError):
        fluid.require_version("0.1.0", 1)
    for bad in ("1.4.x", "1.4.0.0.0", ""):
        with pytest.raises(ValueError):
            fluid.require_version(bad)


def test_flags_read_and_set_what_fleetgraph_reads(monkeypatch):
    monkeypatch.delenv("FLAGS_rpc_send_thread_num", raising=False)
    monkeypatch.setenv("CPU_NUM", "3")
    assert fluid.get_flags(["FLAGS_rpc_send_thread_num", "FLAGS_communicator_send_queue_size"]) == {
        "FLAGS_rpc_send_thread_num": 12,
        "FLAGS_communicator_send_queue_size": 3,
    }
    fluid.set_flags({"FLAGS_rpc_send_thread_num": 4, "FLAGS_communicator_is_sgd_optimizer": False})
    assert fluid.get_flags("FLAGS_rpc_send_thread_num") == {"FLAGS_rpc_send_thread_num": 4}
    assert fluid.get_flags("FLAGS_communicator_is_sgd_optimizer")["FLAGS_communicator_is_sgd_optimizer"] is False
    monkeypatch.delenv("FLAGS_rpc_send_thread_num")
    monkeypatch.delenv("FLAGS_communicator_is_sgd_optimizer")
    with pytest.raises(ValueError, match="FLAGS_eager_delete_tensor_gb"):
        fluid.set_flags({"FLAGS_eager_delete_tensor_gb": 0.0})
    with pytest.raises(TypeError):
        fluid.set_flags({"FLAGS_rpc_send_thread_num": "4"})


def test_device_guard_marks_the_ops_it_encloses_and_they_run_on_the_cpu():
    main, startup = Program(), Program()
    with program_guard(main, startup):
        x = fluid.layers.fill_constant([2, 3], "float32", 0.5)
        with fluid.device_guard("cpu"):
            y = fluid.layers.scale(x, 2.0)
        with fluid.device_guard("gpu"):
            z = fluid.layers.elementwise_add(x, y)
    devices = [op.attrs.get("op_device", "") for op in main.global_block().ops]
    assert devices == ["", "cpu", "gpu"]
    (out,) = fluid.Executor(fluid.CPUPlace()).run(main, fetch_list=[z])
    np.testing.assert_allclose(out, np.full((2, 3), 1.5))
    with pytest.raises(ValueError, match="device_guard"):
        with fluid.device_guard("tpu"):
            pass


def test_gpu_places_say_why_they_cannot_be_made_here():
    with pytest.raises(ValueError, match="CUDAPlace"):
        fluid.cuda_places([0])
    with pytest.raises(ValueError, match="CUDAPinnedPlace"):
        fluid.CUDAPinnedPlace()
    assert fluid.compiler.cpu_places(2) == [fluid.CPUPlace(), fluid.CPUPlace()]


def test_cpt_rounds_half_away_from_zero_and_converts_text():
    # Paddle's test_compat.py
    cpt = fluid.cpt
    assert [cpt.round(v) for v in (3.4, 3.5, 0.1, -0.1, -3.4, -3.5, 5)] == [3.0, 4.0, 0.0, -0.0, -3.0, -4.0, 5.0]
    assert math.copysign(1, cpt.round(-0.0)) == -1
    with pytest.raises(TypeError):
        cpt.round(None)
    assert cpt.floor_division(-4, 3) == -2
    with pytest.raises(ZeroDivisionError):
        cpt.floor_division(3, 0)
    assert cpt.to_text([b"a", "b"]) == ["a", "b"] and cpt.to_text({b"k": b"v"}) == {"k": "v"}
    items = [b"x"]
    assert cpt.to_text(items, inplace=True) is items and items == ["x"]
    assert cpt.to_bytes({"a"}) == {b"a"} and cpt.to_bytes(None) is None
    assert cpt.get_exception_message(RuntimeError("test_message")) == "test_message"


def test_run_check_trains_on_one_place_and_two(capsys):
    fluid.install_check.run_check()
    out = capsys.readouterr().out
    assert "works well on SINGLE GPU or CPU" in out and "works well on MUTIPLE GPU or CPU" in out
    assert "installed successfully" in out


def test_weighted_average_is_the_weighted_mean():
    with pytest.warns(Warning, match="deprecated"):
        avg = fluid.average.WeightedAverage()
    avg.add(value=2.0, weight=1)
    avg.add(value=4.0, weight=2)
    assert avg.eval() == pytest.approx(10.0 / 3)
    with pytest.raises(ValueError):
        avg.add(value="x", weight=1)
    avg.reset()
    with pytest.raises(ValueError, match="no data"):
        avg.eval()


def test_get_logger_writes_its_own_records_once():
    logger = fluid.log_helper.get_logger("fleetgraph-test-logger", logging.INFO, fmt="%(message)s")
    assert logger.level == logging.INFO and not logger.propagate and len(logger.handlers) == 1


def _mlp_grads(set_clip=None, error_clip=None):
    """Gradients of a 2-layer model's weights after append_backward, with optional clips."""
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = fluid.data("x", [None, 3])
        init = fluid.initializer.NumpyArrayInitializer
        h = fluid.layers.fc(
            x, 4, param_attr=fluid.ParamAttr("w1", initializer=init(np.full((3, 4), 0.5))), bias_attr=False
        )
        y = fluid.layers.fc(
            h, 1, param_attr=fluid.ParamAttr("w2", initializer=init(np.full((4, 1), 2.0))), bias_attr=False
        )
        loss = fluid.layers.reduce_sum(y)
        if error_clip is not None:
            main.global_block().var(h.name)._set_error_clip(error_clip)
        if set_clip is not None:
            with pytest.warns(UserWarning, match="not recommended"):
                fluid.clip.set_gradient_clip(set_clip)
            fluid.optimizer.SGD(1.0).minimize(loss)
        else:
            pairs = fluid.backward.append_backward(loss)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    xv = np.array([[1.0, 2.0, 3.0]], np.float32)
    if set_clip is not None:
        exe.run(main, feed={"x": xv}, scope=scope)
        return np.array(scope.vars["w1"]), np.array(scope.vars["w2"])
    return exe.run(main, feed={"x": xv}, fetch_list=[g for _, g in pairs], scope=scope)


def test_an_error_clip_bounds_the_gradient_flowing_back_through_its_variable():
    gw1, gw2 = _mlp_grads()
    # d loss / d h = w2^T = 2.0 per unit, so d/dw1 = x^T * 2
    np.testing.assert_allclose(gw1, np.outer([1, 2, 3], [2.0] * 4))
    cw1, cw2 = _mlp_grads(error_clip=fluid.clip.ErrorClipByValue(max=0.5, min=-0.5))
    np.testing.assert_allclose(cw1, np.outer([1, 2, 3], [0.5] * 4))  # h's gradient clipped to 0.5
    np.testing.assert_allclose(cw2, gw2)  # w2's gradient does not flow through h@GRAD
    assert str(fluid.clip.ErrorClipByValue(2.0)) == "ByValue, min=-2.000000, max=2.000000"


def test_set_gradient_clip_clips_when_the_optimizer_has_none():
    w1, w2 = _mlp_grads(set_clip=fluid.clip.GradientClipByValue(max=1.0, min=-1.0))
    # SGD with lr 1: gradients 2*x (w1) and h = 3 (w2) clipped to 1
    np.testing.assert_allclose(w1, np.full((3, 4), 0.5) - 1.0)
    np.testing.assert_allclose(w2, np.full((4, 1), 2.0) - 1.0)


def test_callbacks_see_each_gradient_op_and_its_gradient_names():
    seen = []
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = fluid.data("x", [None, 3])
        loss = fluid.layers.reduce_sum(fluid.layers.fc(x, 2))
        fluid.backward.append_backward(loss, callbacks=[lambda block, context: seen.append(block.ops[-1].type)])
    grad_ops = [op.type for op in main.global_block().ops if op.type.endswith("_grad") or op.type == "fill_constant"]
    assert seen[1:] == grad_ops[1:] and len(seen) == len(grad_ops)


def test_append_regularization_ops_adds_each_parameters_decay():
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = fluid.data("x", [None, 2])
        loss = fluid.layers.reduce_sum(fluid.layers.fc(x, 1, bias_attr=False))
        pairs = fluid.backward.append_backward(loss)
        out = fluid.regularizer.append_regularization_ops(pairs, fluid.regularizer.L2Decay(0.5))
    exe = fluid.Executor(fluid.CPUPlace())
    scope = fluid.Scope()
    exe.run(startup, scope=scope)
    w = np.array(scope.vars[pairs[0][0].name])
    (g,) = exe.run(main, feed={"x": np.array([[1.0, 2.0]], np.float32)}, fetch_list=[out[0][1]], scope=scope)
    np.testing.assert_allclose(g, np.array([[1.0], [2.0]]) + 0.5 * w, rtol=1e-6)


def test_bilinear_initializer_equals_paddles():
    w, _ = _init(fluid.initializer.Bilinear(), [2, 1, 4, 4])
    # PaddlePaddle 3.3.1, paddle.nn.initializer.Bilinear() on a [2, 1, 4, 4] parameter
    expected = [
        [0.0625, 0.28125, 0.375, 0.15625],
        [0.1875, 0.65625, 0.75, 0.21875],
        [0.1875, 0.46875, 0.375, 0.09375],
        [0.0625, 0.09375, 0.0, -0.03125],
    ]
    np.testing.assert_allclose(w[0, 0], expected)
    np.testing.assert_allclose(w[1, 0], expected)
    with pytest.raises(ValueError, match="K, K"):
        _init(fluid.initializer.Bilinear(), [2, 1, 4, 3])


def test_numpy_array_initializer_sets_the_value_and_checks_its_size():
    value = np.arange(6, dtype=np.float32).reshape(2, 3)
    w, startup = _init(fluid.initializer.NumpyArrayInitializer(value), [2, 3])
    np.testing.assert_array_equal(w, value)
    assert startup.global_block().ops[0].type == "assign_value"
    with pytest.raises(ValueError, match="shape"):
        _init(fluid.initializer.NumpyArrayInitializer(value), [4, 2])


def test_kaiming_gain_follows_the_nonlinearity():
    # PaddlePaddle 3.3.1: KaimingUniform(negative_slope=0.2, nonlinearity='leaky_relu') on [64, 32] has
    # max 0.30025; KaimingNormal(nonlinearity='tanh') std 0.2083333
    _, startup = _init(paddle.nn.initializer.KaimingUniform(negative_slope=0.2, nonlinearity="leaky_relu"), [64, 32])
    assert startup.global_block().ops[0].attrs["max"] == pytest.approx(1.3867504905630728 * math.sqrt(3 / 64))
    _, startup = _init(paddle.nn.initializer.KaimingNormal(nonlinearity="tanh"), [64, 32])
    assert startup.global_block().ops[0].attrs["std"] == pytest.approx(0.2083333283662796)
    with pytest.raises(ValueError, match="nonlinearity"):
        paddle.nn.initializer.KaimingNormal(nonlinearity="swishy")


def test_memory_optimize_is_deprecated_and_changes_nothing(caplog):
    main = Program()
    with program_guard(main, Program()):
        fluid.layers.fill_constant([1], "float32", 1.0)
    before = str(main)
    with caplog.at_level(logging.WARNING):
        fluid.memory_optimize(main)
        fluid.release_memory(main)
    assert str(main) == before and "deprecated" in caplog.text


def test_find_distributed_lookup_table_finds_the_one_distributed_table():
    main = Program()
    with program_guard(main, Program()), unique_name.guard():
        ids = fluid.data("ids", [None, 1], "int64")
        fluid.layers.embedding(ids, [10, 4], is_sparse=True, is_distributed=True, param_attr="table")
        fluid.layers.embedding(ids, [10, 4], param_attr="local")
    dlt = fluid.distribute_lookup_table
    assert dlt.find_distributed_lookup_table(main) == "table"
    assert [v.name for v in dlt.find_distributed_lookup_table_inputs(main, "table")] == ["ids"]
    assert len(dlt.find_distributed_lookup_table_outputs(main, "table")) == 1
    assert fluid.optimizer.find_distributed_lookup_table(Program()) is None


def test_local_fs_lists_makes_moves_and_deletes(tmp_path):
    from fleetgraph.fluid.incubate.fleet.collective import LocalFS

    fs = LocalFS()
    fs.mkdir(str(tmp_path / "a" / "b"))
    (tmp_path / "f.txt").write_text("x")
    assert fs.list_dirs(str(tmp_path)) == ["a"] and sorted(fs.ls_dir(str(tmp_path))) == ["a", "f.txt"]
    fs.mv(str(tmp_path / "a"), str(tmp_path / "c"))
    fs.delete(str(tmp_path / "c"))
    fs.delete(str(tmp_path / "f.txt"))
    fs.delete(str(tmp_path / "missing"))
    assert fs.ls_dir(str(tmp_path)) == [] and fs.list_dirs(str(tmp_path / "missing")) == []
    assert not fs.need_upload_download()


def test_fleet_modules_name_their_modes_and_classes_as_paddle():
    from fleetgraph.fluid.incubate.fleet import collective
    from fleetgraph.fluid.incubate.fleet.parameter_server import distribute_transpiler as ps

    assert (collective.Mode.TRANSPILER, collective.Mode.PSLIB, collective.Mode.COLLECTIVE) == (1, 2, 3)
    assert (ps.DistributedMode.SYNC, ps.DistributedMode.ASYNC, ps.DistributedMode.HALF_ASYNC) == (0, 1, 2)
    assert ps.DistributedMode.GEO == 3 and ps.OriginTranspiler is fluid.DistributeTranspiler
    assert ps.fleet is collective.fleet and isinstance(ps.fleet, collective.Fleet)


def test_fluid_one_hot_and_varbase_are_the_v2_forms():
    with guard():
        out = fluid.one_hot(paddle.to_tensor(np.array([1, 0, 2])), depth=3)
        assert isinstance(out, fluid.VarBase)
        np.testing.assert_array_equal(out.numpy(), np.eye(3)[[1, 0, 2]])
    fluid.monkey_patch_varbase()
    fluid.monkey_patch_variable()
    assert fluid.convert_np_dtype_to_dtype_(np.float32) == "float32"
    assert fluid.framework.Iterable is __import__("collections.abc").abc.Iterable


def test_an_absent_fluid_name_says_why():
    with pytest.raises(absent.NotInFleetgraph, match="load_op_library.*C\\+\\+"):
        _ = fluid.load_op_library
    with pytest.raises(AttributeError):
        _ = fluid.no_such_name_anywhere
