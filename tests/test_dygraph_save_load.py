"""paddle.save / paddle.load of a Layer's and an optimizer's state dicts (checkpoint directories, never
pickle), their set_state_dict round trips, and paddle.set_device / get_device."""

from __future__ import annotations

import os

import numpy as np
import pytest
from dygraph_helpers import fresh_mode_and_names  # noqa: F401  (autouse fixture)

import fleetgraph as paddle
from fleetgraph.ir import FleetgraphError, unique_name
from fleetgraph.store.checkpoint import CheckpointError


def _model_and_optimizer(seed: int):
    paddle.seed(seed)
    model = paddle.nn.Sequential(paddle.nn.Linear(4, 6), paddle.nn.ReLU(), paddle.nn.Linear(6, 1))
    scheduler = paddle.optimizer.lr.StepDecay(0.05, step_size=2, gamma=0.5)
    opt = paddle.optimizer.Adam(learning_rate=scheduler, parameters=model.parameters())
    return model, opt, scheduler


def _train(model, opt, scheduler, steps: int, rng) -> None:
    for _ in range(steps):
        x = paddle.to_tensor(rng.normal(size=(8, 4)).astype("float32"))
        loss = paddle.mean(model(x) ** 2)
        loss.backward()
        opt.step()
        opt.clear_grad()
        scheduler.step()


def test_saved_layer_and_optimizer_resume_training_exactly(tmp_path):
    """Train 2 steps, save both state dicts, train 3 more; a fresh model and optimizer (other seed,
    same names as a restarted process gets) loaded from the files train the same 3 steps to the same
    parameters, Adam's moments and the schedule's position included."""
    with unique_name.guard():
        model, opt, scheduler = _model_and_optimizer(seed=1)
        _train(model, opt, scheduler, 2, np.random.default_rng(0))
        paddle.save(model.state_dict(), str(tmp_path / "model.pdparams"))
        paddle.save(opt.state_dict(), str(tmp_path / "adam.pdopt"))
        _train(model, opt, scheduler, 3, np.random.default_rng(5))
    with unique_name.guard():
        restored, opt2, scheduler2 = _model_and_optimizer(seed=2)
        assert not np.allclose(restored[0].weight.numpy(), model[0].weight.numpy())
        assert restored.set_state_dict(paddle.load(str(tmp_path / "model.pdparams"))) == ([], [])
        opt2.set_state_dict(paddle.load(str(tmp_path / "adam.pdopt")))
        assert scheduler2.last_epoch == 2
        _train(restored, opt2, scheduler2, 3, np.random.default_rng(5))
    for (name, want), (_, got) in zip(model.state_dict().items(), restored.state_dict().items()):
        np.testing.assert_array_equal(got.numpy(), want.numpy(), err_msg=name)
    assert sorted(opt2.state_dict()) == sorted(opt.state_dict())


def test_optimizer_state_dict_names_accumulators_as_paddle():
    model, opt, scheduler = _model_and_optimizer(seed=1)
    _train(model, opt, scheduler, 1, np.random.default_rng(0))
    state = opt.state_dict()
    assert state["LR_Scheduler"] == {"last_epoch": 1, "last_lr": 0.05}
    assert "linear_0.w_0_moment1_0" in state and "linear_1.b_0_beta2_pow_acc_0" in state
    np.testing.assert_allclose(state["linear_0.w_0_beta1_pow_acc_0"].numpy(), [0.9 * 0.9], rtol=1e-6)


def test_load_gives_tensors_or_arrays_and_plain_values_back(tmp_path):
    value = {
        "w": paddle.to_tensor(np.arange(6, dtype="float32").reshape(2, 3), stop_gradient=False),
        "ids": np.array([3, 1], dtype="int64"),
        "meta": {"epoch": 3, "lr": 0.5, "tag": "run-1", "none": None, "flags": [True, False], "pair": (1, 2.5)},
        "step": np.int64(7),
    }
    paddle.save(value, str(tmp_path / "state"))
    back = paddle.load(str(tmp_path / "state"))
    assert isinstance(back["w"], paddle.Tensor) and back["w"].stop_gradient
    np.testing.assert_array_equal(back["w"].numpy(), value["w"].numpy())
    assert back["ids"].dtype == np.int64 and back["ids"].tolist() == [3, 1]
    assert back["meta"] == value["meta"] and back["step"] == 7 and back["step"].dtype == np.int64
    assert list(back) == list(value)
    as_numpy = paddle.load(str(tmp_path / "state"), return_numpy=True)
    assert type(as_numpy["w"]) is np.ndarray and as_numpy["w"].dtype == np.float32


def test_save_writes_a_checked_checkpoint_not_pickle(tmp_path):
    path = tmp_path / "model.pdparams"
    paddle.save({"w": paddle.to_tensor([1.0, 2.0])}, str(path))
    data = [f for f in os.listdir(path) if f.endswith(".npz")]
    assert sorted(os.listdir(path)) == sorted(["manifest.json", *data]) and len(data) == 1
    with open(path / data[0], "r+b") as f:  # flip a byte: the manifest's SHA-256 no longer matches
        f.seek(-1, 2)
        last = f.read(1)
        f.seek(-1, 2)
        f.write(bytes([last[0] ^ 1]))
    with pytest.raises(CheckpointError, match="SHA-256"):
        paddle.load(str(path))


def test_load_and_save_refuse_what_they_cannot_read_or_write(tmp_path):
    pickled = tmp_path / "paddle.pdparams"
    pickled.write_bytes(b"\x80\x04not ours")
    with pytest.raises(FleetgraphError, match="is a file; expected a directory paddle.save wrote"):
        paddle.load(str(pickled))
    with pytest.raises(FleetgraphError, match="does not exist"):
        paddle.load(str(tmp_path / "missing"))
    with pytest.raises(FleetgraphError, match=r"obj\['f'\] is a set; expected Tensors"):
        paddle.save({"f": {1, 2}}, str(tmp_path / "bad"))
    with pytest.raises(FleetgraphError, match="expected str keys"):
        paddle.save({1: 2}, str(tmp_path / "bad"))


def test_set_device_accepts_cpu_and_refuses_gpu_with_the_reason():
    assert paddle.set_device("cpu") == paddle.CPUPlace()
    assert paddle.get_device() == "cpu"
    for gpu in ("gpu", "gpu:0", "GPU:1"):
        with pytest.raises(ValueError, match=r"CUDAPlace\(\d\): .*use CPUPlace"):
            paddle.set_device(gpu)
    assert paddle.get_device() == "cpu"
    with pytest.raises(ValueError, match="set_device: unknown device 'tpu'; expected 'cpu', 'gpu' or 'gpu:N'"):
        paddle.set_device("tpu")
