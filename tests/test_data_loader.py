"""`DataLoader.from_generator`: iterable and non-iterable loaders over sample, sample-list and batch
generators, the reader ops they add (checked against Paddle 2.6.2's op sequence), LoD batches, the
EOFException epoch loop, and the errors of misuse."""

from __future__ import annotations

import gc
import threading
import time

import numpy as np
import pytest

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import EOFException, FleetgraphError, KernelError, Program, op_summary, program_guard, unique_name
from fleetgraph.ops.lod_tensor import LoDTensor
from fleetgraph.ops.reader import BlockingQueue

CPU = paddle.CPUPlace()
# five samples: x = [i, i], y = [i]; two full batches of two, and one short batch
SAMPLES = [(np.full(2, i, "float32"), np.array([i], "int64")) for i in range(5)]
FULL_BATCHES = [[[0, 0], [1, 1]], [[2, 2], [3, 3]]]


def _samples():
    return iter(SAMPLES)


def _sample_lists():
    return paddle.batch(_samples, 2, drop_last=True)()


def _batches():
    for i in (0, 2):
        yield [np.stack([SAMPLES[i][0], SAMPLES[i + 1][0]]), np.array([[i], [i + 1]], "int64")]


SOURCES = {
    "sample": lambda loader, places: loader.set_sample_generator(_samples, 2, drop_last=True, places=places),
    "sample_list": lambda loader, places: loader.set_sample_list_generator(_sample_lists, places),
    "batch": lambda loader, places: loader.set_batch_generator(_batches, places),
}


def _build(iterable, **kw):
    """x [-1, 2] float32 and y [-1, 1] int64 fed by a loader; s = sum(x) + sum(y)."""
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = paddle.static.data("x", [-1, 2], "float32")
        y = paddle.static.data("y", [-1, 1], "int64")
        loader = paddle.io.DataLoader.from_generator(
            feed_list=[x, y], capacity=kw.pop("capacity", 2), iterable=iterable, **kw
        )
        s = paddle.sum(x) + paddle.sum(paddle.cast(y, "float32"))
    return main, startup, loader, s


def _epoch(exe, main, loader, fetch, scope=None):
    """The seed's loop: start, run until EOFException, reset; the fetched values of every run."""
    loader.start()
    got = []
    try:
        while True:
            got.append(exe.run(program=main, fetch_list=fetch, scope=scope))
    except paddle.common_ops_import.core.EOFException:
        loader.reset()
    return got


def _loader_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith("DataLoader-")}


# -- the program a non-iterable loader builds -------------------------------------------------------


def test_non_iterable_loader_appends_paddles_reader_ops_where_it_is_created():
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = paddle.static.data("x", [-1, 3], "float32")
        ids = paddle.static.data("ids", [-1, 1], "int64", lod_level=1)
        y = paddle.static.data("y", [-1, 1], "float32")
        h = paddle.static.nn.fc(x, 2)
        loader = fluid.io.DataLoader.from_generator(feed_list=[x, ids, y], capacity=4, iterable=False)
        paddle.mean(h)
    # Paddle 2.6.2 and 3.3.1 (legacy IR) print the same sequence for this program
    assert (
        op_summary(main) == "block0: mul elementwise_add create_py_reader create_double_buffer_reader read reduce_mean"
    )
    assert op_summary(startup) == "block0: uniform_random fill_constant"
    create, buffer, read = main.global_block().ops[2:5]
    assert create.input("blocking_queue") == [loader.queue_name]
    assert loader.queue_name.startswith("lod_tensor_blocking_queue_")
    assert create.output("Out")[0].startswith("create_py_reader_")
    assert {k: create.attrs[k] for k in ("shape_concat", "ranks", "lod_levels", "dtypes", "need_check_feed")} == {
        "shape_concat": [-1, 3, -1, 1, -1, 1],
        "ranks": [2, 2, 2],
        "lod_levels": [0, 1, 0],
        "dtypes": [5, 3, 5],  # Paddle's VarType codes: FP32, INT64, FP32
        "need_check_feed": [1, 1, 1],
    }
    assert buffer.input("UnderlyingReader") == create.output("Out") and buffer.attrs["place"] == "AUTO"
    assert buffer.output("Out")[0].startswith("double_buffer_")
    assert read.input("Reader") == buffer.output("Out") == [loader.reader_name]
    assert read.output("Out") == ["x", "ids", "y"] and read.attrs["drop_last"] is True
    for name in (loader.queue_name, create.output("Out")[0], loader.reader_name):
        var = main.global_block().var(name)
        assert (var.type, var.persistable) == ("raw", True)


def test_without_double_buffer_read_takes_the_py_reader():
    main, _, loader, _ = _build(iterable=False, use_double_buffer=False)
    assert op_summary(main).startswith("block0: create_py_reader read ")
    assert main.global_block().ops[1].input("Reader") == [loader.reader_name]


def test_each_loader_gets_its_own_queue_even_under_a_fresh_unique_name_guard():
    main_a, _, a, _ = _build(iterable=False)
    main_b, _, b, _ = _build(iterable=False)
    assert a.queue_name != b.queue_name and a.reader_name != b.reader_name


def test_iterable_loader_adds_no_ops():
    main, startup, _, _ = _build(iterable=True)
    assert op_summary(main) == "block0: reduce_sum cast reduce_sum elementwise_add"
    assert op_summary(startup) == "block0: "


def test_fluid_io_loader_is_paddle_io_loader_with_from_dataset():
    assert issubclass(fluid.io.DataLoader, paddle.io.DataLoader) and callable(fluid.io.DataLoader.from_dataset)


# -- non-iterable: the seed's start / EOFException / reset loop -----------------------------------


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_each_epoch_reads_every_batch_once_in_order(source):
    main, startup, loader, _ = _build(iterable=False)
    SOURCES[source](loader, CPU)
    exe = paddle.static.Executor(CPU)
    scope = paddle.static.Scope()
    exe.run(startup, scope=scope)
    with paddle.static.scope_guard(scope):
        for _ in range(2):
            got = _epoch(exe, main, loader, ["x", "y"], scope)
            assert [x.tolist() for x, _ in got] == FULL_BATCHES
            assert [y.ravel().tolist() for _, y in got] == [[0, 1], [2, 3]]


def test_set_sample_generator_returns_the_loader_as_the_seed_uses_it():
    main, startup, loader, s = _build(iterable=False)
    reader = loader.set_sample_generator(_samples, batch_size=2, drop_last=True, places=CPU)
    assert reader is loader
    exe = paddle.static.Executor(CPU)
    exe.run(startup)
    got = _epoch(exe, main, reader, [s.name])
    assert [float(v[0]) for v in got] == [(0 + 2) + (0 + 1), (4 + 6) + (2 + 3)]


def test_short_last_batch_is_kept_without_drop_last():
    main, startup, loader, _ = _build(iterable=False)
    loader.set_sample_generator(_samples, batch_size=2, drop_last=False)
    exe = paddle.static.Executor(CPU)
    got = _epoch(exe, main, loader, ["x"])
    assert [x.tolist() for (x,) in got] == FULL_BATCHES + [[[4, 4]]]


def test_after_the_end_every_run_raises_eof_until_reset_and_start():
    main, _, loader, _ = _build(iterable=False)
    loader.set_batch_generator(_batches)
    exe = paddle.static.Executor(CPU)
    loader.start()
    exe.run(main)
    exe.run(main)
    for _ in range(2):
        with pytest.raises(EOFException, match=r"no more batches this epoch; call reset\(\) and start\(\)"):
            exe.run(main)
    loader.reset()
    loader.start()
    (x,) = exe.run(main, fetch_list=["x"])
    assert x.tolist() == FULL_BATCHES[0]


def test_lod_batches_reach_the_program_as_lod_tensors():
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        ids = paddle.static.data("ids", [-1, 1], "int64", lod_level=1)
        label = paddle.static.data("label", [-1, 1], "int64")
        loader = paddle.io.DataLoader.from_generator(feed_list=[ids, label], capacity=2, iterable=False)

    def samples():  # as the wide & deep reader: [id] or [id1, id2] per sample
        yield [7], [1]
        yield [8, 9], [0]
        yield [3], [1]

    loader.set_sample_generator(samples, batch_size=3, drop_last=True, places=CPU)
    exe = paddle.static.Executor(CPU)
    loader.start()
    ids_value, label_value = exe.run(main, fetch_list=["ids", "label"], return_numpy=False)
    assert ids_value.lod() == [[0, 1, 3, 4]]
    assert np.array(ids_value).tolist() == [[7], [8], [9], [3]]
    assert np.array(label_value).tolist() == [[1], [0], [1]]
    loader.reset()


def test_a_short_training_through_the_loader_matches_feeding_the_batches_by_hand():
    batches = [
        (np.random.default_rng(i).normal(size=(4, 3)).astype("float32"), np.full((4, 1), i, "float32"))
        for i in range(3)
    ]

    def train(use_loader):
        main, startup = Program(), Program()
        main.random_seed = startup.random_seed = 7
        with program_guard(main, startup), unique_name.guard():
            x = paddle.static.data("x", [-1, 3], "float32")
            y = paddle.static.data("y", [-1, 1], "float32")
            if use_loader:
                loader = paddle.io.DataLoader.from_generator(feed_list=[x, y], capacity=2, iterable=False)
                loader.set_batch_generator(lambda: iter(batches))
            pred = paddle.static.nn.fc(x, 1)
            cost = paddle.mean(paddle.nn.functional.square_error_cost(pred, y))
            paddle.optimizer.SGD(learning_rate=0.1).minimize(cost)
        scope = paddle.static.Scope()
        exe = paddle.static.Executor(CPU)
        exe.run(startup, scope=scope)
        with paddle.static.scope_guard(scope):
            for _ in range(2):
                if use_loader:
                    losses = _epoch(exe, main, loader, [cost], scope)
                else:
                    losses = [
                        exe.run(main, feed={"x": bx, "y": by}, fetch_list=[cost], scope=scope) for bx, by in batches
                    ]
        params = {p.name: np.array(scope.vars[p.name]) for p in main.all_parameters()}
        return params, [float(v[0]) for v in losses]

    by_loader, by_hand = train(True), train(False)
    assert by_loader[1] == by_hand[1]
    assert by_loader[0].keys() == by_hand[0].keys()
    for name, value in by_hand[0].items():
        np.testing.assert_array_equal(by_loader[0][name], value)


# -- iterable --------------------------------------------------------------------------------------


@pytest.mark.parametrize("source", sorted(SOURCES))
def test_iterable_loader_yields_one_feed_dict_per_place(source):
    main, startup, loader, s = _build(iterable=True)
    SOURCES[source](loader, CPU)
    exe = paddle.static.Executor(CPU)
    for _ in range(2):  # each pass starts from the beginning
        datas = list(loader())
        assert [list(d[0]) for d in datas] == [["x", "y"]] * 2
        assert [d[0]["x"].tolist() for d in datas] == FULL_BATCHES
        sums = [float(exe.run(main, feed=d, fetch_list=[s])[0][0]) for d in datas]
        assert sums == [2 + 1, 10 + 5]


def test_iterable_loader_with_return_list_yields_a_list_per_place_as_paddle():
    _, _, loader, _ = _build(iterable=True, return_list=True)
    loader.set_batch_generator(_batches, places=CPU)
    first = next(iter(loader()))
    assert len(first) == 1 and [v.tolist() for v in first[0]] == [FULL_BATCHES[0], [[0], [1]]]


def test_iterable_lod_values_are_lod_tensors_and_plain_values_arrays():
    with program_guard(Program(), Program()), unique_name.guard():
        ids = paddle.static.data("ids", [-1, 1], "int64", lod_level=1)
        dense = paddle.static.data("dense", [-1, 2], "float32")
        loader = paddle.io.DataLoader.from_generator(feed_list=[ids, dense], capacity=1)
    loader.set_sample_list_generator(lambda: iter([[([1, 2], [0.5, 0.5]), ([3], [1.0, 2.0])]]), places=[CPU])
    (data,) = list(loader())
    assert isinstance(data[0]["ids"], LoDTensor) and data[0]["ids"].lod() == [[0, 2, 3]]
    assert isinstance(data[0]["dense"], np.ndarray) and data[0]["dense"].shape == (2, 2)


def test_with_several_places_each_step_takes_one_batch_per_place():
    _, _, loader, _ = _build(iterable=True)
    loader.set_sample_generator(_samples, batch_size=1, places=[CPU, CPU])
    assert [[d["x"].tolist() for d in step] for step in loader()] == [[[[0, 0]], [[1, 1]]], [[[2, 2]], [[3, 3]]]]
    _, _, keep, _ = _build(iterable=True, drop_last=False)
    keep.set_sample_generator(_samples, batch_size=1, places=[CPU, CPU])
    assert [len(step) for step in keep()] == [2, 2, 1]


def test_breaking_out_of_a_pass_and_iterating_again_starts_over():
    _, _, loader, _ = _build(iterable=True, capacity=1)
    loader.set_sample_generator(_samples, batch_size=1, places=CPU)
    for _ in loader():
        break
    assert [d[0]["x"].tolist() for d in loader()] == [[[i, i]] for i in range(5)]


# -- the feeding thread ----------------------------------------------------------------------------


def test_the_queue_holds_at_most_capacity_batches():
    produced = []

    def endless():
        while True:
            produced.append(len(produced))
            yield [np.zeros((1, 2), "float32"), np.zeros((1, 1), "int64")]

    main, _, loader, _ = _build(iterable=False, capacity=3)
    loader.set_batch_generator(endless)
    loader.start()
    deadline = time.monotonic() + 5.0
    while len(loader.queue) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.1)  # time enough to overfill, if it could
    assert len(loader.queue) == 3
    assert len(produced) <= 3 + 1  # the thread holds at most one more, waiting to push it
    loader.reset()


def test_reset_mid_epoch_stops_the_thread_promptly_and_the_next_epoch_starts_over():
    def endless():
        i = 0
        while True:
            yield [np.full((1, 2), i, "float32"), np.zeros((1, 1), "int64")]
            i += 1

    main, _, loader, _ = _build(iterable=False)
    loader.set_batch_generator(endless)
    exe = paddle.static.Executor(CPU)
    before = _loader_threads()
    loader.start()
    (thread,) = _loader_threads() - before
    exe.run(main)
    exe.run(main)
    began = time.monotonic()
    loader.reset()
    assert time.monotonic() - began < 1.0
    assert not thread.is_alive()
    loader.start()
    (x,) = exe.run(main, fetch_list=["x"])
    assert x.tolist() == [[0, 0]]
    loader.reset()


def test_a_dropped_loader_does_not_leave_its_thread_waiting():
    _, _, loader, _ = _build(iterable=True, capacity=1)
    loader.set_batch_generator(
        lambda: iter([[np.zeros((1, 2), "float32"), np.zeros((1, 1), "int64")]] * 10), places=CPU
    )
    before = _loader_threads()
    next(iter(loader()))
    (thread,) = _loader_threads() - before
    del loader
    gc.collect()
    thread.join(2.0)
    assert not thread.is_alive()


def test_a_feeding_thread_that_dies_silently_does_not_leave_the_reader_waiting():
    queue = BlockingQueue(2, "DataLoader(x)")
    token = queue.open()
    dead = threading.Thread(target=lambda: None)
    dead.start()
    dead.join()
    queue.attach(token, dead)
    with pytest.raises(FleetgraphError, match=r"DataLoader\(x\): the feeding thread ended without finishing the epoch"):
        queue.pop()


def test_a_thread_from_an_ended_epoch_cannot_push_into_the_next():
    queue = BlockingQueue(2, "DataLoader(x)")
    old = queue.open()
    queue.stop()
    new = queue.open()
    assert not queue.push(old, ["stale"])
    assert queue.push(new, ["fresh"]) and queue.pop() == ["fresh"]


def test_a_generator_that_raises_surfaces_its_error_in_exe_run():
    def broken():
        yield from _batches()
        raise ValueError("line 3 of part-1 is not a number")

    main, _, loader, _ = _build(iterable=False)
    loader.set_batch_generator(broken)
    exe = paddle.static.Executor(CPU)
    loader.start()
    exe.run(main)
    exe.run(main)  # the batches built before the error still arrive
    with pytest.raises(KernelError, match=r"\(read\).*the generator raised ValueError: line 3 of part-1") as info:
        exe.run(main)
    assert isinstance(info.value.__cause__.__cause__, ValueError)
    loader.reset()


def test_a_generator_that_raises_stops_an_iterable_pass():
    def broken():
        raise OSError("no such file: part-9")
        yield

    _, _, loader, _ = _build(iterable=True)
    loader.set_batch_generator(broken, places=CPU)
    with pytest.raises(FleetgraphError, match="the generator raised OSError: no such file: part-9"):
        list(loader())


@pytest.mark.parametrize(
    "batch, message",
    [
        (
            [np.zeros((2, 3), "float32"), np.zeros((2, 1), "int64")],
            r"feed 'x': expected shape \[-1, 2\] float32, got \(2, 3\)",
        ),
        ([np.zeros((2, 2), "float32")], r"a batch holds 1 values; expected 2 \(x, y\)"),
        (
            [np.zeros((2, 2), "float64"), np.zeros((2, 1), "int64")],
            r"feed 'x': expected shape \[-1, 2\] float32, got \(2, 2\) float64",
        ),
    ],
)
def test_a_batch_that_does_not_fit_the_feed_variables_is_a_clear_error(batch, message):
    main, _, loader, _ = _build(iterable=False)
    loader.set_batch_generator(lambda: iter([batch]))
    loader.start()
    with pytest.raises(KernelError, match="a batch does not fit the feed variables: .*" + message):
        paddle.static.Executor(CPU).run(main)
    loader.reset()


# -- misuse ----------------------------------------------------------------------------------------


def test_running_read_before_start_is_a_clear_error():
    main, _, loader, _ = _build(iterable=False)
    loader.set_batch_generator(_batches)
    with pytest.raises(KernelError, match=r"DataLoader\(x, y\): not started; call the loader's start\(\)"):
        paddle.static.Executor(CPU).run(main)


def test_starting_twice_is_a_clear_error():
    _, _, loader, _ = _build(iterable=False)
    loader.set_batch_generator(_batches)
    loader.start()
    with pytest.raises(FleetgraphError, match=r"already started; expected reset\(\) after the epoch's EOFException"):
        loader.start()
    loader.reset()
    loader.reset()  # resetting a stopped loader is harmless, as in Paddle


@pytest.mark.parametrize(
    "misuse, message",
    [
        (lambda: _build(iterable=False)[2].start(), "no data source; expected set_sample_generator"),
        (lambda: _build(iterable=True)[2].start(), r"the loader is iterable; expected `for data in loader\(\)"),
        (lambda: _build(iterable=True)[2].reset(), "the loader is iterable"),
        (lambda: iter(_build(iterable=False)[2]), r"built with iterable=False; expected start\(\)"),
        (lambda: _build(iterable=True)[2].set_batch_generator(_batches), "places is None; an iterable loader"),
        (
            lambda: _build(iterable=True)[2].set_sample_generator(_samples, 0, places=CPU),
            "batch_size expected a positive int, got 0",
        ),
        (lambda: _build(iterable=False, capacity=None), "capacity expected a positive int"),
        # in static mode (dynamic mode's loader needs no feed_list: the test above)
        (lambda: (paddle.enable_static(), paddle.io.DataLoader.from_generator(capacity=2)), "feed_list is empty"),
        (lambda: paddle.io.DataLoader.from_generator(feed_list=["x"], capacity=2), r"expected Variables .*got 'x'"),
        (lambda: paddle.io.DataLoader(), "expected a dataset"),  # a Dataset's loader: tests/test_map_dataset.py
    ],
)
def test_misuse_is_a_clear_error(misuse, message):
    with pytest.raises(FleetgraphError, match=message):
        misuse()


# -- DataFeeder ------------------------------------------------------------------------------------


def test_data_feeder_builds_lod_tensors_for_sequence_variables():
    with program_guard(Program(), Program()), unique_name.guard():
        ids = fluid.data("ids", [-1, 1], "int64", lod_level=1)
        x = fluid.data("x", [-1, 2], "float32")
        feeder = fluid.DataFeeder(feed_list=[ids, x], place=CPU)
    fed = feeder.feed([([4], [1, 2]), ([5, 6], [3, 4])])
    assert fed["ids"].lod() == [[0, 1, 3]] and np.array(fed["ids"]).tolist() == [[4], [5], [6]]
    assert fed["ids"].dtype == np.int64
    assert isinstance(fed["x"], np.ndarray) and fed["x"].dtype == np.float32 and fed["x"].tolist() == [[1, 2], [3, 4]]


def test_a_dygraph_generator_loader_is_iterable_and_returns_lists_whatever_was_asked():
    """Paddle 1.8's DygraphGeneratorLoader: from_generator(capacity=10) in imperative mode, with
    neither return_list nor iterable, yields lists of Tensors and warns that it changed both."""
    from fleetgraph.dygraph.mode import guard

    def batches():
        for i in range(3):
            yield [np.full((2, 3), i, np.float32), np.full((2, 1), i, np.int64)]

    with guard():
        with pytest.warns(UserWarning, match="returning as list only"):
            loader = fluid.io.DataLoader.from_generator(capacity=10)
        with pytest.warns(UserWarning, match="iterable mode only"):
            fluid.io.DataLoader.from_generator(capacity=10, iterable=False, return_list=True)
        loader.set_batch_generator(batches, places=fluid.CPUPlace())
        got = [(x.numpy()[0, 0], y.numpy()[0, 0]) for x, y in loader()]
    assert got == [(0.0, 0), (1.0, 1), (2.0, 2)]
