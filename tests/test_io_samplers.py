"""paddle.io as Paddle 2.0's: the samplers, ComposeDataset and ChainDataset, DataLoader's worker
processes with get_worker_info (as test_multiprocess_dataloader_*.py use them), and a static
DataLoader without feed_list yielding NumPy arrays."""

from __future__ import annotations

import multiprocessing
import os
import time

import numpy as np
import pytest

import fleetgraph as paddle
from fleetgraph.ir import FleetgraphError, Program, program_guard

io = paddle.io


class Squares(io.Dataset):
    def __init__(self, n=10):
        self.n = n

    def __getitem__(self, i):
        return np.array([i], "float32"), np.array([i * i], "int64")

    def __len__(self):
        return self.n


class Range(io.IterableDataset):
    """start..end-1; in a worker process, only the worker's share (Paddle's get_worker_info example)."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def __iter__(self):
        info = io.get_worker_info()
        start, end = self.start, self.end
        if info is not None:
            per = int(np.ceil((end - start) / info.num_workers))
            start, end = start + info.id * per, min(start + (info.id + 1) * per, end)
        for i in range(start, end):
            yield np.array([i], "int64")


class WhoReads(io.Dataset):
    """Each sample says which process read it and what get_worker_info said there."""

    def __getitem__(self, i):
        info = io.get_worker_info()
        return np.array([os.getpid(), -1 if info is None else info.id, -1 if info is None else info.num_workers])

    def __len__(self):
        return 8


def test_sequence_and_random_samplers():
    assert list(io.SequenceSampler(range(5))) == [0, 1, 2, 3, 4]
    np.random.seed(3)
    first = list(io.RandomSampler(range(10)))
    np.random.seed(3)
    assert list(io.RandomSampler(range(10))) == first and sorted(first) == list(range(10))
    drawn = io.RandomSampler(range(3), replacement=True, num_samples=20)
    assert len(drawn) == 20 and set(drawn) <= {0, 1, 2}
    assert list(io.RandomSampler(range(5), generator=iter([4, 2, 0, 1, 3, 9]))) == [4, 2, 0, 1, 3]
    with pytest.raises(FleetgraphError, match="num_samples is for replacement=True"):
        io.RandomSampler(range(5), num_samples=3)
    with pytest.raises(NotImplementedError):
        iter(io.Sampler(range(3)))
    assert isinstance(io.BatchSampler(sampler=io.SequenceSampler(range(5)), batch_size=2), io.Sampler)


def test_weighted_random_sampler_draws_only_positive_weights():
    probs = np.zeros(20, "float32")
    probs[np.random.default_rng(0).permutation(20)[:10]] = np.random.default_rng(1).random(10) + 0.1
    with_replacement = io.WeightedRandomSampler(probs, 30, True)
    assert len(with_replacement) == 30 and all(probs[i] > 0 for i in with_replacement)
    distinct = list(io.WeightedRandomSampler(probs, 10, False))
    assert len(set(distinct)) == 10 and all(probs[i] > 0 for i in distinct)
    for bad, n in [(np.zeros(10), 10), (-np.ones(10), 10), (probs[:12], 12)]:
        with pytest.raises(FleetgraphError):
            list(io.WeightedRandomSampler(bad, n, n != 12))
    with pytest.raises(FleetgraphError, match="num_samples"):
        io.WeightedRandomSampler(probs, 1.5)


def test_compose_dataset_joins_fields_and_chain_dataset_reads_one_after_another():
    composed = io.ComposeDataset([Squares(4), io.TensorDataset([np.arange(4) * 10])])
    assert len(composed) == 4 and [np.asarray(f).item() for f in composed[3]] == [3, 9, 30]
    with pytest.raises(FleetgraphError, match="one length"):
        io.ComposeDataset([Squares(4), Squares(5)])
    chained = io.ChainDataset([Range(0, 3), Range(10, 12)])
    assert [s.item() for s in chained] == [0, 1, 2, 10, 11]
    with pytest.raises(FleetgraphError, match="expected a paddle.io.IterableDataset"):
        io.ChainDataset([Squares(3)])
    with pytest.raises(RuntimeError):
        len(chained)


def test_workers_give_the_single_process_batches_in_order():
    one = [[t.numpy() for t in b] for b in io.DataLoader(Squares(10), batch_size=3)]
    two = [[t.numpy() for t in b] for b in io.DataLoader(Squares(10), batch_size=3, num_workers=2)]
    assert len(one) == len(two) == 4
    for a, b in zip(one, two):
        np.testing.assert_array_equal(a[0], b[0])
        np.testing.assert_array_equal(a[1], b[1])


def test_get_worker_info_is_the_workers_inside_them_and_none_outside():
    assert io.get_worker_info() is None
    rows = np.concatenate([b[0].numpy() for b in io.DataLoader(WhoReads(), batch_size=2, num_workers=2)])
    assert os.getpid() not in rows[:, 0] and len(set(rows[:, 0])) == 2
    assert sorted(set(rows[:, 1])) == [0, 1] and set(rows[:, 2]) == {2}
    inline = np.concatenate([b[0].numpy() for b in io.DataLoader(WhoReads(), batch_size=4)])
    assert set(inline[:, 0]) == {os.getpid()} and set(inline[:, 1]) == {-1}


def test_an_iterable_dataset_split_by_worker_info_is_read_once_over():
    batches = list(io.DataLoader(Range(0, 10), batch_size=2, num_workers=2))
    values = sorted(int(v) for b in batches for v in b[0].numpy().ravel())
    assert values == list(range(10))
    assert [int(b[0].numpy()[0, 0]) for b in batches[:2]] == [0, 5]  # round-robin over the workers


def test_worker_init_fn_runs_once_in_each_worker(tmp_path):
    def mark(worker_id):
        (tmp_path / f"worker{worker_id}").write_text(str(io.get_worker_info().num_workers))

    assert len(list(io.DataLoader(Squares(8), batch_size=2, num_workers=3, worker_init_fn=mark))) == 4
    assert sorted(p.name for p in tmp_path.iterdir()) == ["worker0", "worker1", "worker2"]


def test_leaving_a_pass_early_stops_its_workers():
    batches = iter(io.DataLoader(Squares(40), batch_size=2, num_workers=2))
    next(batches)
    assert len(multiprocessing.active_children()) == 2
    del batches
    assert multiprocessing.active_children() == []


def test_a_workers_error_reaches_the_parent():
    class Broken(Squares):
        def __getitem__(self, i):
            if i == 5:
                raise KeyError(f"no sample {i}")
            return super().__getitem__(i)

    with pytest.raises(KeyError, match="no sample 5"):
        list(io.DataLoader(Broken(8), batch_size=2, num_workers=2))

    def refuse(worker_id):
        raise ValueError(f"worker {worker_id} refuses")

    with pytest.raises(ValueError, match="refuses"):
        list(io.DataLoader(Squares(4), batch_size=2, num_workers=2, worker_init_fn=refuse))


def test_a_static_loader_without_feed_list_yields_numpy_arrays_to_feed():
    paddle.enable_static()
    main, startup = Program(), Program()
    with program_guard(main, startup):
        x = paddle.static.data(name="x", shape=[None, 1], dtype="float32")
        y = paddle.static.data(name="y", shape=[None, 1], dtype="int64")
        total = paddle.fluid.layers.reduce_sum(x) + paddle.fluid.layers.reduce_sum(paddle.cast(y, "float32"))
    exe = paddle.static.Executor()
    exe.run(startup)
    for workers in (0, 2):
        batches = list(io.DataLoader(Squares(6), batch_size=3, num_workers=workers))
        assert all(isinstance(f, np.ndarray) for b in batches for f in b)
        sums = [exe.run(main, feed={"x": bx, "y": by}, fetch_list=[total])[0] for bx, by in batches]
        np.testing.assert_allclose(np.ravel(sums), [0 + 1 + 2 + 0 + 1 + 4, 3 + 4 + 5 + 9 + 16 + 25])
    listed = io.DataLoader(Squares(4), feed_list=[x, y], batch_size=2)
    assert [b[1].ravel().tolist() for b in listed] == [[0, 1], [4, 9]]
    with pytest.raises(FleetgraphError, match="feed_list"):
        io.DataLoader(Squares(4), batch_size=2, return_list=False)


@pytest.mark.parametrize("workers", [0, 2])
def test_batch_size_none_delivers_each_sample_unstacked(workers):
    loader = io.DataLoader(Squares(4), batch_size=None, num_workers=workers)
    assert len(loader) == 4 and loader.collate_fn is None
    samples = [[t.numpy().tolist() for t in s] for s in loader]
    assert samples == [[[i], [i * i]] for i in range(4)]
    streamed = [s[0].numpy().tolist() for s in io.DataLoader(Range(0, 3), batch_size=None, num_workers=workers)]
    assert sorted(streamed) == [[0], [1], [2]]


def test_a_worker_that_answers_no_batch_within_timeout_is_an_error():
    class Slow(Squares):
        def __getitem__(self, i):
            time.sleep(1)
            return super().__getitem__(i)

    with pytest.raises(RuntimeError, match="no batch from the workers in 0.3 s"):
        list(io.DataLoader(Slow(1), batch_size=1, num_workers=1, timeout=0.3))
