"""paddle.io.DataLoader over a Dataset: Tensor batches in dynamic mode, feed dicts for static
programs; samplers (sequence, shuffled, distributed), iterable datasets, collate functions."""

from __future__ import annotations

import numpy as np
import pytest
from dygraph_helpers import fresh_mode_and_names  # noqa: F401  (autouse)

import fleetgraph as paddle
from fleetgraph.ir import FleetgraphError, Program, program_guard, unique_name


class Squares(paddle.io.Dataset):
    """Sample i: features [i, i, i] (float32) and label i % 2."""

    def __init__(self, n: int = 10) -> None:
        self.n = n

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, i):
        return np.full([3], i, "float32"), np.array([i % 2], "int64")


def _rows(loader) -> list[int]:
    return [int(v) for x, _ in loader for v in x.numpy()[:, 0]]


def test_batches_are_tensors_of_stacked_fields_in_order_with_a_short_last_one():
    loader = paddle.io.DataLoader(Squares(10), batch_size=4)
    batches = list(loader)
    assert len(loader) == len(batches) == 3
    x, y = batches[0]
    assert isinstance(x, paddle.Tensor) and x.shape == [4, 3] and x.stop_gradient
    np.testing.assert_array_equal(x.numpy()[:, 0], [0, 1, 2, 3])
    np.testing.assert_array_equal(y.numpy().ravel(), [0, 1, 0, 1])
    assert batches[-1][0].shape == [2, 3]
    assert len(list(paddle.io.DataLoader(Squares(10), batch_size=4, drop_last=True))) == 2


def test_shuffle_gives_each_sample_once_per_epoch_in_a_new_order():
    loader = paddle.io.DataLoader(Squares(20), batch_size=6, shuffle=True)
    first, second = _rows(loader), _rows(loader)
    assert sorted(first) == sorted(second) == list(range(20))
    assert first != list(range(20)) and first != second


def test_distributed_batch_sampler_gives_each_rank_its_share_padded_as_paddle():
    shares = [list(paddle.io.DistributedBatchSampler(Squares(7), 2, num_replicas=2, rank=r)) for r in (0, 1)]
    assert shares == [[[0, 2], [4, 6]], [[1, 3], [5, 0]]]  # 7 samples padded to 8 from the start
    sampler = paddle.io.DistributedBatchSampler(Squares(8), 4, num_replicas=2, rank=0, shuffle=True)
    epoch0 = [i for b in sampler for i in b]
    sampler.set_epoch(1)
    assert epoch0 != [i for b in sampler for i in b] and len(epoch0) == 4
    rows = _rows(paddle.io.DataLoader(Squares(7), batch_sampler=paddle.io.DistributedBatchSampler(Squares(7), 2, 2, 1)))
    assert rows == [1, 3, 5, 0]


def test_an_iterable_dataset_is_read_in_order_and_dict_samples_keep_their_keys():
    class Stream(paddle.io.IterableDataset):
        def __iter__(self):
            for i in range(5):
                yield {"x": np.array([i, -i], "float32"), "y": i}

    batches = list(paddle.io.DataLoader(Stream(), batch_size=2, collate_fn=paddle.io.default_collate_fn))
    assert [b[0]["y"].tolist() for b in batches] == [[0, 1], [2, 3], [4]]
    with pytest.raises(FleetgraphError, match="read in order"):
        paddle.io.DataLoader(Stream(), shuffle=True)


def test_a_custom_collate_fn_and_a_tensor_dataset():
    data = paddle.io.TensorDataset([np.arange(6.0).reshape(6, 1), np.arange(6)])
    loader = paddle.io.DataLoader(data, batch_size=3, collate_fn=lambda s: [np.array([x for x, _ in s]).sum()])
    assert [float(b[0].numpy()) for b in loader] == [3.0, 12.0]


def test_dynamic_training_from_a_data_loader_equals_training_on_the_same_batches():
    def train(batches):
        paddle.seed(3)
        with unique_name.guard():  # the same parameter names, so the same initial values
            net = paddle.nn.Linear(3, 1)
        opt = paddle.optimizer.SGD(learning_rate=0.01, parameters=net.parameters())
        for x, y in batches:
            loss = paddle.mean((net(x) - paddle.cast(y, "float32")) ** 2)
            loss.backward()
            opt.step()
            opt.clear_grad()
        return net.weight.numpy()

    loaded = train(paddle.io.DataLoader(Squares(12), batch_size=4))
    data = Squares(12)
    by_hand = [[paddle.to_tensor(np.stack([data[i][k] for i in range(s, s + 4)])) for k in (0, 1)] for s in (0, 4, 8)]
    np.testing.assert_array_equal(loaded, train(by_hand))


def test_a_static_program_reads_feed_dicts_checked_against_feed_list():
    paddle.enable_static()
    main, startup = Program(), Program()
    with program_guard(main, startup):
        x = paddle.static.data(name="x", shape=[None, 3], dtype="float32")
        y = paddle.static.data(name="y", shape=[None, 1], dtype="int64")
        out = paddle.mean(paddle.static.nn.fc(x, size=1))
    loader = paddle.io.DataLoader(Squares(8), feed_list=[x, y], batch_size=4, return_list=False)
    exe = paddle.static.Executor()
    scope = paddle.static.Scope()
    exe.run(startup, scope=scope)
    feeds = list(loader)
    assert [sorted(f[0]) for f in feeds] == [["x", "y"], ["x", "y"]]
    assert np.isfinite(exe.run(main, feed=feeds[0][0], fetch_list=[out], scope=scope)[0]).all()
    with pytest.raises(FleetgraphError, match="feed_list"):  # feed dicts need the variables they feed
        paddle.io.DataLoader(Squares(8), batch_size=4, return_list=False)
    # without feed_list, Paddle 2.0's static loader yields each batch as a list of arrays
    x_batch, y_batch = next(iter(paddle.io.DataLoader(Squares(8), batch_size=4)))
    assert np.asarray(x_batch).shape[0] == 4 and np.asarray(y_batch).shape[0] == 4
    wrong = paddle.io.DataLoader(Squares(8), feed_list=[x], batch_size=4)
    with pytest.raises(FleetgraphError, match="2 fields for 1 feed_list"):
        next(iter(wrong))


def test_a_batch_sampler_excludes_batch_size_and_a_dataset_is_required():
    with pytest.raises(FleetgraphError, match="batch_sampler decides"):
        paddle.io.DataLoader(Squares(), batch_sampler=paddle.io.BatchSampler(Squares(), batch_size=2), batch_size=4)
    with pytest.raises(FleetgraphError, match="expected a dataset"):
        paddle.io.DataLoader()
