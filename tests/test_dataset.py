"""QueueDataset and InMemoryDataset over small files: batches, threads, pipe_command, shards, shuffles."""

from __future__ import annotations

import gzip
import random
import sys
import threading
import time

import numpy as np
import pytest

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.data import dataset as dataset_module
from fleetgraph.data import source as source_module
from fleetgraph.data.errors import BadLineError, DatasetError, DatasetTimeoutError, PipeCommandError
from fleetgraph.data.pipes import live_pids
from fleetgraph.ir import Program, program_guard
from fleetgraph.static import data


@pytest.fixture
def use_var():
    with program_guard(Program(), Program()):
        return [
            data("dense", shape=[-1, 2], dtype="float32"),
            data("ids", shape=[-1, 1], dtype="int64", lod_level=1),
            data("label", shape=[-1, 1], dtype="int64"),
        ]


@pytest.fixture(autouse=True)
def _no_hooks():
    yield
    dataset_module.set_file_shard(0, 1)
    dataset_module.set_worker_exchange(None)
    dataset_module.set_worker_allreduce(None)


def sample_line(i: int) -> str:
    ids = " ".join(str(1000 * i + k) for k in range(i % 3 + 1))
    return f"2 {i}.5 {-(i + 0.25)} {i % 3 + 1} {ids} 1 {i % 2}"


def write_files(tmp_path, counts) -> list[str]:
    """Files of consecutive samples: file j holds the next counts[j] samples."""
    paths, i = [], 0
    for j, count in enumerate(counts):
        path = tmp_path / f"part-{j}"
        path.write_text("".join(sample_line(i + k) + "\n" for k in range(count)))
        paths.append(str(path))
        i += count
    return paths


def expected_samples(first: int, count: int) -> list[tuple]:
    return [
        ((i + 0.5, -i - 0.25), tuple(1000 * i + k for k in range(i % 3 + 1)), i % 2)
        for i in range(first, first + count)
    ]


def samples_of(batch: dict) -> list[tuple]:
    """A feed dict back into samples (dense row, ids, label), checking each value's type and dtype."""
    dense, ids, label = batch["dense"], batch["ids"], batch["label"]
    assert dense.dtype == np.float32 and dense.shape[1:] == (2,)
    assert ids.data.dtype == np.int64 and ids.data.shape[1:] == (1,) and label.shape[1:] == (1,)
    off = ids.lod()[0]
    return [
        (tuple(dense[i].tolist()), tuple(ids.data[off[i] : off[i + 1], 0].tolist()), int(label[i, 0]))
        for i in range(len(dense))
    ]


def drain(dataset) -> list[dict]:
    with dataset._batch_source() as source:
        batches = list(source)
        assert source.samples == sum(len(b["dense"]) for b in batches)
    return batches


def queue_dataset(use_var, files, **kw) -> paddle.distributed.QueueDataset:
    ds = paddle.distributed.QueueDataset()
    ds.init(**{"batch_size": 4, "use_var": use_var, **kw})
    ds.set_filelist(files)
    return ds


def test_queue_dataset_batches_hold_the_files_in_order_across_file_ends(tmp_path, use_var):
    files = write_files(tmp_path, [5, 6])
    batches = drain(queue_dataset(use_var, files))
    assert [len(b["dense"]) for b in batches] == [4, 4, 3]  # one reader: batches run on past a file's end
    assert [s for b in batches for s in samples_of(b)] == expected_samples(0, 11)
    assert list(batches[0]) == ["dense", "ids", "label"]


def test_three_threads_give_the_same_samples_as_one(tmp_path, use_var):
    files = write_files(tmp_path, [7, 3, 9, 5, 1])
    one = [s for b in drain(queue_dataset(use_var, files, thread_num=1)) for s in samples_of(b)]
    three_batches = drain(queue_dataset(use_var, files, thread_num=3))
    three = [s for b in three_batches for s in samples_of(b)]
    assert sorted(three) == sorted(one) == sorted(expected_samples(0, 25))
    assert sum(len(b["dense"]) < 4 for b in three_batches) <= 3  # at most one short batch per reader


def test_consumers_on_several_threads_share_the_batches_once_each(tmp_path, use_var):
    files = write_files(tmp_path, [40, 40, 40])
    got, lock = [], threading.Lock()
    with queue_dataset(use_var, files, thread_num=2, batch_size=3)._batch_source() as source:

        def consume():
            while (batch := source.next()) is not None:
                with lock:
                    got.extend(samples_of(batch))

        workers = [threading.Thread(target=consume) for _ in range(4)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(timeout=30)
        assert source.samples == 120 and source.next() is None
    assert sorted(got) == sorted(expected_samples(0, 120))


def test_a_file_larger_than_one_chunk_keeps_its_line_numbers(tmp_path, use_var, monkeypatch):
    monkeypatch.setattr(source_module, "CHUNK_BYTES", 64)
    lines = [sample_line(i) for i in range(30)]
    lines[22] = "2 0.5 1.5 0 1 0"
    path = tmp_path / "part-0"
    path.write_text("\n".join(lines))  # and no newline after the last line
    with pytest.raises(BadLineError, match=r"part-0:23: slot 'ids': the number of ids can not be zero"):
        drain(queue_dataset(use_var, [str(path)]))
    lines[22] = sample_line(22)
    path.write_text("\n".join(lines))
    assert [s for b in drain(queue_dataset(use_var, [str(path)])) for s in samples_of(b)] == expected_samples(0, 30)


def test_skipped_lines_leave_the_others_and_are_named_on_stderr(tmp_path, use_var, capsys):
    path = tmp_path / "part-0"
    path.write_text(sample_line(0) + "\n2 0.5 x 1 7 1 0\n" + sample_line(1) + "\n")
    ds = queue_dataset(use_var, [str(path)], on_bad_line="skip")
    assert [s for b in drain(ds) for s in samples_of(b)] == expected_samples(0, 2)
    assert f"{path}:2: slot 'dense' value 2: expected a number, got 'x'" in capsys.readouterr().err
    ds.set_on_bad_line("raise")
    with pytest.raises(BadLineError, match=":2: slot 'dense' value 2"):
        drain(ds)
    with pytest.raises(DatasetError, match="on_bad_line"):
        ds.set_on_bad_line("ignore")


def test_pipe_command_output_is_what_gets_parsed(tmp_path, use_var):
    files = write_files(tmp_path, [3, 2])
    # the command drops each line's label slot and writes its own: label 1 everywhere
    script = tmp_path / "relabel.py"
    script.write_text("import sys\nfor line in sys.stdin:\n    print(' '.join(line.split()[:-2] + ['1', '1']))\n")
    ds = queue_dataset(use_var, files, pipe_command=f"{sys.executable} {script}", thread_num=2)
    got = sorted(s for b in drain(ds) for s in samples_of(b))
    assert got == sorted((d, i, 1) for d, i, _ in expected_samples(0, 5))
    ds.set_pipe_command("sed 's/^2 /2 /' | cat")
    assert len([s for b in drain(ds) for s in samples_of(b)]) == 5


def _gone(pid: int) -> bool:
    """No such process, or only its zombie (dead; reaped by whoever is its parent now)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_a_failing_pipe_command_raises_with_its_stderr_and_leaves_no_process(tmp_path, use_var):
    files = write_files(tmp_path, [3])
    pids = tmp_path / "pids"
    command = f"echo $$ > {pids}; sleep 60 & echo $! >> {pids}; echo 'no such column' >&2; exit 3"
    with pytest.raises(PipeCommandError) as info:
        drain(queue_dataset(use_var, files, pipe_command=command))
    message = str(info.value)
    assert "exited with status 3" in message and "no such column" in message and files[0] in message
    assert command in message
    deadline = time.monotonic() + 5
    while not all(_gone(int(p)) for p in pids.read_text().split()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(_gone(int(p)) for p in pids.read_text().split())
    assert live_pids() == []


def test_closing_a_source_early_kills_its_pipe_commands(tmp_path, use_var):
    files = write_files(tmp_path, [50, 50])
    pids = tmp_path / "pids"
    ds = queue_dataset(use_var, files, thread_num=2, batch_size=2, pipe_command=f"echo $$ >> {pids}; cat; sleep 60")
    source = ds._batch_source()
    assert source.next() is not None
    source.close()
    source.close()  # idempotent
    assert source.next() is None
    assert all(_gone(int(p)) for p in pids.read_text().split()) and live_pids() == []


def test_a_silent_pipe_command_times_out_naming_what_it_waited_for(tmp_path, use_var, monkeypatch):
    monkeypatch.setenv("FLEETGRAPH_DATASET_TIMEOUT", "0.5")
    ds = queue_dataset(use_var, write_files(tmp_path, [1]), pipe_command="sleep 60")
    with pytest.raises(DatasetTimeoutError, match=r"after 0.5 s \(FLEETGRAPH_DATASET_TIMEOUT\).*part-0"):
        drain(ds)
    assert live_pids() == []


def test_missing_and_gzip_files(tmp_path, use_var):
    with pytest.raises(DatasetError, match="cannot open .*nope"):
        drain(queue_dataset(use_var, [str(tmp_path / "nope")]))
    path = tmp_path / "part-0.gz"
    with gzip.open(path, "wt") as f:
        f.write("".join(sample_line(i) + "\n" for i in range(3)))
    assert [s for b in drain(queue_dataset(use_var, [str(path)])) for s in samples_of(b)] == expected_samples(0, 3)
    ds = queue_dataset(use_var, [str(path)], pipe_command="sed 's/^2 /2 /'")  # as Paddle: zcat, then the command
    assert [s for b in drain(ds) for s in samples_of(b)] == expected_samples(0, 3)
    assert drain(queue_dataset(use_var, [])) == []


def test_a_file_shard_reads_every_count_th_file_from_index(tmp_path, use_var):
    files = write_files(tmp_path, [2, 3, 4, 5, 6])
    dataset_module.set_file_shard(1, 2)
    got = sorted(s for b in drain(queue_dataset(use_var, files, thread_num=2)) for s in samples_of(b))
    assert got == sorted(expected_samples(2, 3) + expected_samples(9, 5))
    with pytest.raises(DatasetError, match="0 <= index < count"):
        dataset_module.set_file_shard(2, 2)


def in_memory(use_var, files, **kw) -> paddle.distributed.InMemoryDataset:
    ds = paddle.distributed.InMemoryDataset()
    ds.init(**{"batch_size": 4, "use_var": use_var, "thread_num": 3, **kw})
    ds.set_filelist(files)
    return ds


def test_in_memory_dataset_serves_the_files_in_order_every_pass(tmp_path, use_var):
    ds = in_memory(use_var, write_files(tmp_path, [5, 1, 7]))
    ds.load_into_memory()
    assert ds.get_memory_data_size() == ds.get_shuffle_data_size() == 13
    for _ in range(2):
        batches = drain(ds)
        assert [len(b["dense"]) for b in batches] == [4, 4, 4, 1]
        assert [s for b in batches for s in samples_of(b)] == expected_samples(0, 13)
    with pytest.raises(ValueError, match="read-only"):
        batches[0]["dense"][0, 0] = 1.0  # the memory outlives a pass


def test_local_shuffle_is_a_permutation_fixed_by_random_seed(tmp_path, use_var):
    ds = in_memory(use_var, write_files(tmp_path, [20, 20]))
    ds.load_into_memory()
    random.seed(3)
    ds.local_shuffle()
    first = [s for b in drain(ds) for s in samples_of(b)]
    assert sorted(first) == sorted(expected_samples(0, 40)) and first != expected_samples(0, 40)
    ds.release_memory()
    ds.load_into_memory()
    random.seed(3)
    ds.local_shuffle()
    assert [s for b in drain(ds) for s in samples_of(b)] == first
    ds.global_shuffle()  # no fleet, no exchange: a local shuffle
    assert sorted(s for b in drain(ds) for s in samples_of(b)) == sorted(first)


def test_release_memory_and_preload(tmp_path, use_var):
    ds = in_memory(use_var, write_files(tmp_path, [3, 4]))
    with pytest.raises(DatasetError, match="load_into_memory"):
        ds._batch_source()
    ds.preload_into_memory(thread_num=2)
    with pytest.raises(DatasetError, match="wait_preload_done"):
        ds._batch_source()
    ds.wait_preload_done()
    assert ds.get_memory_data_size() == 7
    ds.load_into_memory()  # as in Paddle, loading again replaces the memory
    assert ds.get_memory_data_size() == 7
    ds.release_memory()
    assert ds.get_memory_data_size() == 0
    with pytest.raises(DatasetError, match="nothing in memory"):
        ds.local_shuffle()


def test_a_load_error_surfaces_in_load_into_memory(tmp_path, use_var):
    files = write_files(tmp_path, [3, 3])
    with open(files[1], "a") as f:
        f.write("2 1 1 1 7\n")
    with pytest.raises(BadLineError, match=r"part-1:4: the line ends before slot 'label'"):
        in_memory(use_var, files).load_into_memory()
    with pytest.raises(PipeCommandError, match="status 1"):
        in_memory(use_var, files, pipe_command="false").load_into_memory()
    assert live_pids() == []


class _TwoWorkers:
    def worker_num(self) -> int:
        return 2


def test_global_shuffle_sends_samples_through_the_installed_exchange(tmp_path, use_var):
    ds = in_memory(use_var, write_files(tmp_path, [30]))
    ds.load_into_memory()
    sent = []

    def exchange(payloads):
        # a loopback "other worker": it sends back exactly what it received
        sent.append([len(p[0]) for p in payloads])
        assert all(isinstance(a, np.ndarray) for p in payloads for a in p)
        return payloads

    dataset_module.set_worker_exchange(exchange)
    ds.global_shuffle(_TwoWorkers())
    assert len(sent) == 1 and sum(sent[0]) == 30 and len(sent[0]) == 2
    assert sorted(s for b in drain(ds) for s in samples_of(b)) == sorted(expected_samples(0, 30))
    dataset_module.set_worker_exchange(lambda payloads: [payloads[0][:2]] * 2)
    with pytest.raises(ValueError, match="global_shuffle: from worker 0"):
        ds.global_shuffle(_TwoWorkers())


def test_sizes_sum_over_workers_through_the_installed_all_reduce(tmp_path, use_var):
    ds = in_memory(use_var, write_files(tmp_path, [6]))
    ds.load_into_memory()
    dataset_module.set_worker_allreduce(lambda a: a * 2)
    assert ds.get_memory_data_size(_TwoWorkers()) == 12 and ds.get_memory_data_size() == 6


def test_dataset_factory_knows_paddles_names():
    factory = fluid.DatasetFactory()
    assert type(factory.create_dataset()).__name__ == "QueueDataset"
    assert type(factory.create_dataset("InMemoryDataset")).__name__ == "InMemoryDataset"
    with pytest.raises(DatasetError, match=r"'QueueDatset'.*did you mean 'QueueDataset'.*InMemoryDataset"):
        factory.create_dataset("QueueDatset")
    with pytest.raises(NotImplementedError, match="QueueDataset does not support local shuffle"):
        factory.create_dataset().local_shuffle()


def test_fluid_setters_and_desc_read_as_paddles(use_var):
    ds = fluid.DatasetFactory().create_dataset()
    ds.set_use_var(use_var[:2])
    ds.set_batch_size(32)
    ds.set_thread(3)
    ds.set_pipe_command("python gen.py")
    assert ds.desc() == (
        'name: "MultiSlotDataFeed"\nbatch_size: 32\nmulti_slot_desc {\n  slots {\n    name: "dense"\n'
        '    type: "float"\n    is_dense: true\n    is_used: true\n    shape: -1\n    shape: 2\n  }\n'
        '  slots {\n    name: "ids"\n    type: "uint64"\n    is_used: true\n  }\n}\npipe_command: "python gen.py"\n'
    )


def test_settings_that_would_change_results_are_refused(use_var):
    ds = paddle.distributed.QueueDataset()
    with pytest.raises(DatasetError, match="HDFS is not available"):
        ds.init(use_var=use_var, fs_name="hdfs://x", fs_ugi="u,p")
    with pytest.raises(DatasetError, match="input_type"):
        ds.set_input_type(1)
    with pytest.raises(DatasetError, match="batch_size"):
        ds.set_batch_size(0)
    with pytest.raises(DatasetError, match="no use_var"):
        paddle.distributed.QueueDataset()._batch_source()
    mem = paddle.distributed.InMemoryDataset()
    mem.init(use_var=use_var, data_feed_type="MultiSlotInMemoryDataFeed", queue_num=4, fleet_send_batch_size=512)
    mem.update_settings(batch_size=8, merge_size=-1, parse_ins_id=False)
    assert mem.batch_size == 8 and mem.queue_num == 4
    with pytest.raises(DatasetError, match="parse_ins_id=True: not supported"):
        mem.init(use_var=use_var, parse_ins_id=True)
    with pytest.raises(DatasetError, match="unknown setting 'batchsize'; did you mean 'batch_size'"):
        mem.init(batchsize=3)
    mem.set_merge_by_lineid(-1)
    with pytest.raises(DatasetError, match="merge_size=2: not supported"):
        mem.set_merge_by_lineid()
