"""Executor.train_from_dataset / infer_from_dataset: threads over one scope, fed by a Dataset."""

from __future__ import annotations

import numpy as np
import pytest
from models import sparse_ctr

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.data import dataset as dataset_module
from fleetgraph.data.errors import BadLineError, PipeCommandError
from fleetgraph.data.pipes import live_pids
from fleetgraph.ir import FleetgraphError, Program, program_guard, unique_name

SLOTS, VOCAB = 3, 5000


def _line(rng) -> str:
    ids = rng.integers(0, 60, size=SLOTS) * (VOCAB // 60)
    label = int(ids[0] < 20 * (VOCAB // 60))
    dense = rng.normal(size=2)
    return " ".join([*(f"1 {i}" for i in ids), "2", *(f"{d:.6f}" for d in dense), f"1 {label}"])


def _files(tmp_path, lines=400, files=2, seed=0) -> list[str]:
    rng = np.random.default_rng(seed)
    paths = []
    for f in range(files):
        path = tmp_path / f"part-{f}"
        path.write_text("".join(_line(rng) + "\n" for _ in range(lines)))
        paths.append(str(path))
    return paths


def _model():
    """sparse_ctr with lod_level 1 slots, as a dataset feeds them, and its auc."""
    main, startup = Program(), Program()
    main.random_seed = startup.random_seed = 5
    with program_guard(main, startup), unique_name.guard():
        slots = [fluid.layers.data(name=f"C{i}", shape=[1], dtype="int64", lod_level=1) for i in range(SLOTS)]
        dense = fluid.layers.data(name="dense", shape=[2], dtype="float32")
        label = fluid.layers.data(name="label", shape=[1], dtype="int64")
        attr = fluid.ParamAttr(name="table", initializer=fluid.initializer.Uniform(-0.1, 0.1))
        embs = [
            fluid.layers.sequence_pool(
                fluid.layers.embedding(s, size=[VOCAB, 4], is_sparse=True, param_attr=attr), "sum"
            )
            for s in slots
        ]
        hidden = fluid.layers.fc(fluid.layers.concat(embs + [dense], axis=1), size=16, act="relu")
        predict = fluid.layers.fc(hidden, size=2, act="softmax")
        loss = fluid.layers.mean(fluid.layers.cross_entropy(predict, label))
        auc, _, stats = fluid.layers.auc(predict, label, num_thresholds=1000)
        fluid.optimizer.Adam(0.02).minimize(loss)
    return main, startup, slots + [dense, label], loss, auc, stats


def _dataset(use_var, files, threads=1, batch=20, pipe="cat"):
    ds = paddle.distributed.QueueDataset()
    ds.init(batch_size=batch, thread_num=threads, pipe_command=pipe, use_var=use_var)
    ds.set_filelist(files)
    return ds


def _fresh(main, startup):
    scope = paddle.static.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup, scope=scope)
    return exe, scope


def test_one_thread_trains_exactly_as_exe_run_on_the_same_batches(tmp_path):
    files = _files(tmp_path)
    main, startup, use_var, loss, _, _ = _model()
    exe, scope = _fresh(main, startup)
    exe.train_from_dataset(main, _dataset(use_var, files), scope=scope)
    main2, startup2, use_var2, loss2, _, _ = _model()
    exe2, scope2 = _fresh(main2, startup2)
    with _dataset(use_var2, files)._batch_source() as source:
        while (feed := source.next()) is not None:
            exe2.run(main2, feed=feed, fetch_list=[loss2], scope=scope2)
    for p in main.all_parameters():
        np.testing.assert_array_equal(np.array(scope.vars[p.name]), np.array(scope2.vars[p.name]), err_msg=p.name)


def test_threads_share_the_scope_and_count_every_sample_in_the_auc(tmp_path, capsys):
    files = _files(tmp_path, lines=600, files=3)
    main, startup, use_var, loss, auc, stats = _model()
    exe, scope = _fresh(main, startup)
    before = np.array(scope.vars["table"]).copy()
    for _ in range(3):
        exe.train_from_dataset(
            main,
            _dataset(use_var, files, threads=2),
            scope=scope,
            fetch_list=[auc],
            fetch_info=["auc"],
            print_period=30,
        )
    counted = sum(int(np.array(scope.vars[v.name]).sum()) for v in stats[2:])  # global positives + negatives
    assert counted == 3 * 1800
    assert not np.array_equal(np.array(scope.vars["table"]), before)
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("[train_from_dataset]")]
    assert len(lines) == 3 * (90 // 30) and all("samples/s | auc: " in ln for ln in lines)
    assert float(lines[-1].rsplit(" ", 1)[1]) > 0.8  # the first slot decides the click


def test_infer_from_dataset_changes_no_parameter(tmp_path):
    files = _files(tmp_path)
    main, startup, use_var, _, auc, stats = _model()
    exe, scope = _fresh(main, startup)
    params = {p.name: np.array(scope.vars[p.name]).copy() for p in main.all_parameters()}
    exe.infer_from_dataset(main, _dataset(use_var, files, threads=2), scope=scope)
    for name, value in params.items():
        np.testing.assert_array_equal(np.array(scope.vars[name]), value, err_msg=name)
    assert sum(int(np.array(scope.vars[v.name]).sum()) for v in stats[2:]) == 800  # metrics still count


def test_a_malformed_line_stops_training_naming_its_file_and_line(tmp_path):
    files = _files(tmp_path)
    with open(files[1], "a") as f:
        f.write("1 7 1 8 0 2 0.5 0.5 1 1\n")  # slot C2 declares 0 ids
    main, startup, use_var, _, _, _ = _model()
    exe, scope = _fresh(main, startup)
    with pytest.raises(BadLineError, match=r"part-1:401: "):
        exe.train_from_dataset(main, _dataset(use_var, files, threads=2), scope=scope)


def test_a_failing_pipe_command_stops_training_with_its_stderr_and_leaves_no_process(tmp_path):
    files = _files(tmp_path)
    main, startup, use_var, _, _, _ = _model()
    exe, scope = _fresh(main, startup)
    pipe = "python -c \"import sys; print('reader: no such column', file=sys.stderr); sys.exit(3)\""
    with pytest.raises(PipeCommandError, match="reader: no such column"):
        exe.train_from_dataset(main, _dataset(use_var, files, pipe=pipe), scope=scope)
    assert not live_pids()


def test_a_sync_parameter_server_trainer_trains_with_one_thread(tmp_path, capsys):
    from ps_helpers import transpile

    from fleetgraph.executor.dataset_runner import _thread_count

    t = transpile(lambda: sparse_ctr(lambda: fluid.optimizer.SGD(0.1)))
    assert _thread_count(t.get_trainer_program(), None, 4, "train_from_dataset") == 1
    assert "one thread trains" in capsys.readouterr().err


def test_a_missing_dataset_is_one_clear_error():
    main, startup, _, _, _, _ = _model()
    exe, scope = _fresh(main, startup)
    with pytest.raises(FleetgraphError, match="dataset is None; expected a QueueDataset or InMemoryDataset"):
        exe.train_from_dataset(main, None, scope=scope)


@pytest.fixture(autouse=True)
def _no_hooks():
    yield
    dataset_module.set_file_shard(0, 1)
