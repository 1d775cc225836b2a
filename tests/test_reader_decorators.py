"""paddle.reader's decorators, checked as Paddle 1.8's python/paddle/reader/tests/decorator_test.py checks them."""

import functools
import random
import time

import pytest

import fleetgraph as paddle
import fleetgraph.reader


def reader_creator_10(dur=0.0):
    def reader():
        for i in range(10):
            time.sleep(dur)
            yield i

    return reader


def failing_after(n):
    def reader():
        yield from range(n)
        raise KeyError("bad record")

    return reader


def test_paddle_reader_exports_paddles_names():
    assert set(fleetgraph.reader.__all__) == {
        "cache",
        "map_readers",
        "buffered",
        "compose",
        "chain",
        "shuffle",
        "ComposeNotAligned",
        "firstn",
        "xmap_readers",
        "multiprocess_reader",
    }
    assert issubclass(fleetgraph.reader.ComposeNotAligned, ValueError)


def test_map_readers_applies_func_to_each_sample():
    d = {"h": 0, "i": 1}
    r = fleetgraph.reader.map_readers(lambda x: d[x], lambda: iter("hi"))
    assert list(r()) == [0, 1]
    added = fleetgraph.reader.map_readers(lambda a, b: a + b, reader_creator_10(), reader_creator_10())
    assert list(added()) == [2 * i for i in range(10)]


def test_cache_reads_once_and_replays():
    calls = []

    def reader():
        calls.append(1)
        yield from range(3)

    cached = fleetgraph.reader.cache(reader)
    assert list(cached()) == [0, 1, 2] and list(cached()) == [0, 1, 2]
    assert len(calls) == 1


@pytest.mark.parametrize("size", range(0, 20, 3))
def test_buffered_keeps_every_sample_in_order(size):
    assert list(fleetgraph.reader.buffered(reader_creator_10(), size)()) == list(range(10))


def test_buffered_reads_ahead_while_the_consumer_waits():
    b = fleetgraph.reader.buffered(reader_creator_10(0.03), 10)
    last = time.time()
    for i in b():
        if i == 0:
            time.sleep(1)
        else:
            assert time.time() - last < 0.08  # already buffered
        last = time.time()


def test_buffered_raises_the_readers_error():
    with pytest.raises(KeyError, match="bad record"):
        list(fleetgraph.reader.buffered(failing_after(3), 2)())


def test_compose_joins_samples_into_flat_tuples():
    reader = fleetgraph.reader.compose(reader_creator_10(), reader_creator_10())
    assert list(reader()) == [(i, i) for i in range(10)]
    pairs = fleetgraph.reader.compose(lambda: iter([(1, 2)]), lambda: iter([3]))
    assert list(pairs()) == [(1, 2, 3)]


def test_compose_not_aligned_raises_after_the_aligned_samples():
    total = 0
    reader = fleetgraph.reader.compose(
        fleetgraph.reader.chain(reader_creator_10(), reader_creator_10()), reader_creator_10()
    )
    with pytest.raises(fleetgraph.reader.ComposeNotAligned):
        for _ in reader():
            total += 1
    assert total == 10


def test_compose_without_alignment_check_stops_at_the_shortest():
    reader = fleetgraph.reader.compose(
        fleetgraph.reader.chain(reader_creator_10(), reader_creator_10()), reader_creator_10(), check_alignment=False
    )
    assert len(list(reader())) == 10


def test_chain_reads_readers_in_turn():
    c = fleetgraph.reader.chain(reader_creator_10(), reader_creator_10())
    assert list(c()) == list(range(10)) * 2


@pytest.mark.parametrize(("size", "keeps_order"), [(0, True), (1, True), (10, False), (100, False)])
def test_shuffle_windows(size, keeps_order):
    random.seed(1)
    out = list(fleetgraph.reader.shuffle(reader_creator_10(), size)())
    assert sorted(out) == list(range(10))
    if keeps_order:
        assert out == list(range(10))


def test_firstn_stops_after_n():
    assert list(fleetgraph.reader.firstn(reader_creator_10(), 4)()) == [0, 1, 2, 3]


@pytest.mark.parametrize("order", [True, False])
@pytest.mark.parametrize("threads", [1, 2, 4, 8, 16])
@pytest.mark.parametrize("size", [1, 2, 4, 8, 16])
def test_xmap_readers_maps_every_sample(order, threads, size):
    reader = fleetgraph.reader.xmap_readers(lambda x: x + 1, reader_creator_10(), threads, size, order)
    for _ in range(3):
        result = list(reader())
        assert (result if order else sorted(result)) == list(range(1, 11))


def test_xmap_readers_in_order_even_when_late_samples_finish_first():
    def slow_for_small(x):
        time.sleep(0.02 * (5 - x) if x < 5 else 0)
        return x

    reader = fleetgraph.reader.xmap_readers(slow_for_small, reader_creator_10(), 4, 4, order=True)
    assert list(reader()) == list(range(10))


def test_xmap_readers_raises_the_mappers_error():
    def mapper(x):
        if x == 5:
            raise ZeroDivisionError("mapper failed")
        return x

    with pytest.raises(ZeroDivisionError, match="mapper failed"):
        list(fleetgraph.reader.xmap_readers(mapper, reader_creator_10(), 2, 2)())
    with pytest.raises(KeyError):
        list(fleetgraph.reader.xmap_readers(lambda x: x, failing_after(3), 2, 2)())


def _samples_reader(samples, index):
    for i, sample in enumerate(samples):
        if i % 3 == index:
            yield sample


@pytest.mark.parametrize("use_pipe", [False, True])
def test_multiprocess_reader_yields_every_sample_of_every_reader(use_pipe):
    samples = [[[i], [i + 1, i + 2], i + 3] for i in range(1000)]
    readers = [functools.partial(_samples_reader, samples, k) for k in range(3)]
    # Paddle's test passes 100 as use_pipe and use_pipe as queue_size: kept as it is
    results = list(fleetgraph.reader.multiprocess_reader(readers, use_pipe, 100)())
    assert sorted(results) == sorted(samples)


def test_multiprocess_reader_through_pipes_delivers_json_values():
    out = list(fleetgraph.reader.multiprocess_reader([lambda: iter([(1, 2)])], use_pipe=True)())
    assert out == [[1, 2]]


@pytest.mark.parametrize("use_pipe", [False, True])
def test_multiprocess_reader_raises_when_a_reader_fails(use_pipe):
    with pytest.raises(ValueError, match="multiprocess reader raises an exception"):
        list(fleetgraph.reader.multiprocess_reader([failing_after(2)], use_pipe)())


def test_multiprocess_reader_refuses_no_readers():
    with pytest.raises(ValueError, match="multiprocess_reader: readers expected a non-empty list"):
        fleetgraph.reader.multiprocess_reader([])


def test_paddle_batch_groups_samples():
    assert list(paddle.batch(reader_creator_10(), 4)()) == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert list(paddle.batch(reader_creator_10(), 4, drop_last=True)()) == [[0, 1, 2, 3], [4, 5, 6, 7]]
