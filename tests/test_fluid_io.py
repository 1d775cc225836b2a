"""fluid.io and fluid.reader: save/load of a program's state (Paddle 1.8's test_static_save_load.py),
PyReader and fluid.layers.py_reader (test_py_reader_*.py), DataLoader.from_dataset, and the names
Paddle's modules re-export."""

import os
import signal

import numpy as np
import pytest

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import FleetgraphError
from fleetgraph.layers.io import create_py_reader_by_data, double_buffer, py_reader, read_file

PLACE = fluid.CPUPlace()


# -- save / load -----------------------------------------------------------------------------------
def _trained_program():
    """An fc net trained one Adam step: parameters and optimizer state all nonzero."""
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.data("x", [None, 4], "float32")
        hidden = fluid.layers.fc(x, 5, act="tanh")
        loss = fluid.layers.reduce_mean(fluid.layers.fc(hidden, 1))
        test_program = main.clone(for_test=True)
        fluid.optimizer.Adam(0.01).minimize(loss)
    exe = fluid.Executor(PLACE)
    exe.run(startup)
    exe.run(main, feed={"x": np.random.RandomState(0).rand(3, 4).astype("float32")})
    return main, test_program, exe


def _persistable_values(program):
    return {
        v.name: np.array(fluid.global_scope().find_var(v.name).get_tensor(), copy=True)
        for v in fluid.io.get_program_persistable_vars(program)
    }


def _zero(program):
    for v in fluid.io.get_program_persistable_vars(program):
        tensor = fluid.global_scope().find_var(v.name).get_tensor()
        tensor.set(np.zeros_like(np.array(tensor)), PLACE)


def _assert_restored(program, base):
    for name, value in _persistable_values(program).items():
        np.testing.assert_array_equal(value, base[name], err_msg=name)


@pytest.fixture
def scope():
    with fluid.scope_guard(fluid.core.Scope()):
        yield


@pytest.mark.usefixtures("scope")
@pytest.mark.parametrize("suffix", ["", ".pdparams", ".pdopt", ".pdmodel"])
def test_save_writes_pdparams_pdopt_pdmodel_and_load_restores_every_persistable(tmp_path, suffix):
    main, _, exe = _trained_program()
    base = _persistable_values(main)
    assert any(n.endswith("moment1_0") for n in base) and all(np.abs(v).sum() != 0 for v in base.values())
    fluid.io.save(main, str(tmp_path / "test_1"))
    assert sorted(os.listdir(tmp_path)) == ["test_1.pdmodel", "test_1.pdopt", "test_1.pdparams"]
    _zero(main)
    fluid.io.load(main, str(tmp_path / ("test_1" + suffix)), exe)
    _assert_restored(main, base)


@pytest.mark.usefixtures("scope")
def test_load_program_state_then_set_program_state_restores(tmp_path):
    main, test_program, _ = _trained_program()
    base = _persistable_values(main)
    fluid.io.save(main, str(tmp_path / "some_dir" / "test_1"))
    states = [fluid.io.load_program_state(str(tmp_path / "some_dir" / f"test_1{s}")) for s in ("", ".pdparams")]
    assert sorted(states[0]) == sorted(base) and all(np.array_equal(states[1][k], base[k]) for k in base)
    _zero(main)
    with pytest.warns(UserWarning, match="Paramerter not found in program"):
        fluid.io.set_program_state(test_program, states[0])  # the test clone has no optimizer state
    params = {p.name for p in fluid.io.get_program_parameter(main)}
    for name in params:
        np.testing.assert_array_equal(np.array(fluid.global_scope().find_var(name).get_tensor()), base[name])
    fluid.io.set_program_state(main, states[0])
    _assert_restored(main, base)


@pytest.mark.usefixtures("scope")
def test_set_program_state_refuses_another_shape_or_dtype(tmp_path):
    main, _, _ = _trained_program()
    w = fluid.io.get_program_parameter(main)[0].name
    with pytest.raises(ValueError, match=r"Parameter's shape does not match.*\(\(4, 5\)\).*\(\(5, 4\)\)"):
        fluid.io.set_program_state(main, {w: np.zeros((5, 4), "float32")})
    with pytest.raises(ValueError, match="Parameter's data type does not match"):
        fluid.io.set_program_state(main, {w: np.zeros((4, 5), "float64")})


def test_set_program_state_before_the_startup_program_says_so():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.scope_guard(fluid.core.Scope()):
        fluid.layers.fc(fluid.data("x", [None, 2], "float32"), 1)
        with pytest.raises(ValueError, match=r"Variable \[ fc_\d+.w_0 \] Not found, Please make sure run startup"):
            fluid.io.set_program_state(main, {})


@pytest.mark.usefixtures("scope")
def test_load_from_a_save_persistables_directory(tmp_path):
    main, test_program, exe = _trained_program()
    base = _persistable_values(main)
    fluid.io.save_persistables(exe, str(tmp_path / "test_path"), main)
    _zero(main)
    with pytest.raises(ValueError, match="executor is required"):
        fluid.io.load(main, str(tmp_path / "test_path"), None)
    fluid.io.load(main, str(tmp_path / "test_path"), exe)
    _assert_restored(main, base)
    with pytest.warns(UserWarning, match="not used"):
        fluid.io.load(test_program, str(tmp_path / "test_path"), exe)
    state = fluid.io.load_program_state(str(tmp_path / "test_path"))
    assert sorted(state) == sorted(base)


@pytest.fixture
def single_file(tmp_path, scope):
    """A trained program's persistables saved by save_persistables(filename="model_single")."""
    main, _, exe = _trained_program()
    base = _persistable_values(main)
    fluid.io.save_persistables(exe, str(tmp_path / "test_path"), main, filename="model_single")
    return main, exe, base, fluid.io.get_program_persistable_vars(main), str(tmp_path / "test_path" / "model_single")


def test_load_from_a_single_file_needs_var_list(tmp_path, single_file):
    main, exe, base, persistables, path = single_file
    _zero(main)
    fluid.io.load(main, path, exe, persistables)
    _assert_restored(main, base)
    with pytest.raises(ValueError, match="executor is required"):
        fluid.io.load(main, path, None, persistables)
    with pytest.raises(ValueError, match="var_list is required"):
        fluid.io.load(main, path, exe, None)
    fluid.io.save_params(exe, str(tmp_path / "test_path"), main, filename="model_single")
    with pytest.raises(RuntimeError, match="is not in the file"):  # params only: no optimizer state there
        fluid.io.load(main, path, exe, persistables)


def test_load_program_state_of_a_single_file(single_file):
    main, _, base, persistables, path = single_file
    state = fluid.io.load_program_state(path, var_list=persistables)
    assert {k: v.tolist() for k, v in state.items()} == {k: v.tolist() for k, v in base.items()}
    with pytest.raises(ValueError, match="var_list can not be None when model_path is a file type"):
        fluid.io.load_program_state(path)
    with pytest.raises(TypeError, match="value in var_list must be variable"):
        fluid.io.load_program_state(path, var_list=["str"])
    fake = main.global_block().create_var("fake_var_name", [1], "float32", persistable=True)
    with pytest.raises(RuntimeError, match="fake_var_name"):
        fluid.io.load_program_state(path, var_list=[fake])


@pytest.mark.usefixtures("scope")
def test_static_load_with_var_list_loads_only_those(tmp_path):
    main, _, exe = _trained_program()
    base = _persistable_values(main)
    paddle.static.save(main, str(tmp_path / "m"))
    _zero(main)
    w = fluid.io.get_program_parameter(main)[0]
    paddle.static.load(main, str(tmp_path / "m"), exe, var_list=[w])
    np.testing.assert_array_equal(np.array(fluid.global_scope().find_var(w.name).get_tensor()), base[w.name])
    others = [n for n in base if n != w.name]
    assert all(np.abs(np.array(fluid.global_scope().find_var(n).get_tensor())).sum() == 0 for n in others)


def test_save_needs_a_file_name(tmp_path):
    with pytest.raises(ValueError, match="expected dirname/filename"):
        fluid.io.save(fluid.Program(), str(tmp_path) + os.sep)


def test_program_parameter_and_persistable_lists():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        fluid.data("img", [64, 784], "float32")
        fluid.layers.create_parameter([784, 200], "float32", name="fc_w")
        fluid.layers.create_parameter([200], "float32", name="fc_b")
    assert [p.name for p in fluid.io.get_program_parameter(main)] == ["fc_w", "fc_b"]
    assert [p.name for p in fluid.io.get_program_persistable_vars(main)] == ["fc_w", "fc_b"]


# -- PyReader (test_py_reader_return_list.py, the 1.8 docs' start/reset loop) -----------------------
def _image_reader(count, width=3):
    def reader():
        for i in range(count):
            yield (np.full([width], i, "float32"),)

    return reader


@pytest.mark.parametrize("return_list", [True, False])
def test_iterable_pyreader_yields_a_feed_per_place(return_list):
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        image = fluid.layers.data(name="image", shape=[3], dtype="float32")
        reader = fluid.io.PyReader(feed_list=[image], capacity=4, iterable=True, return_list=return_list)
        reader.decorate_sample_list_generator(paddle.batch(_image_reader(10), batch_size=4), PLACE)
        for _ in range(2):  # each epoch starts from the beginning
            batches = [data[0][0] if return_list else data[0]["image"] for data in reader()]
            assert [b[:, 0].tolist() for b in batches] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_pyreader_sample_generator_drops_the_short_batch():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        image = fluid.data("image", [None, 3], "float32")
        reader = fluid.io.PyReader(feed_list=[image], capacity=2)
        reader.decorate_sample_generator(_image_reader(10), batch_size=4, drop_last=True, places=[PLACE])
        assert [len(d[0]["image"]) for d in reader()] == [4, 4]


def test_pyreader_in_dygraph_yields_tensors():
    with fluid.dygraph.guard():
        reader = fluid.io.PyReader(capacity=2)
        reader.decorate_sample_generator(_image_reader(5), batch_size=2, drop_last=False, places=PLACE)
        assert [d[0].numpy()[:, 0].tolist() for d in reader()] == [[0, 1], [2, 3], [4]]


def test_non_iterable_pyreader_runs_until_eof_each_epoch():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        image = fluid.data("image", [None, 3], "float32")
        reader = fluid.io.PyReader(feed_list=[image], capacity=4, iterable=False)  # its read comes first
        total = fluid.layers.reduce_sum(image)
        reader.decorate_batch_generator(_batches)
    exe = fluid.Executor(PLACE)
    exe.run(startup)
    for _ in range(3):
        reader.start()
        sums = []
        while True:
            try:
                sums.append(float(exe.run(main, fetch_list=[total])[0]))
            except fluid.core.EOFException:
                reader.reset()
                break
        assert sums == [0.0, 6.0, 12.0]
    assert not reader.iterable


def _batches():
    for i in range(3):
        yield [np.full((2, 3), i, "float32")]


# -- fluid.layers.py_reader / create_py_reader_by_data / double_buffer / read_file ------------------
def _run_epochs(exe, main, reader, fetch, epochs=2):
    out = []
    for _ in range(epochs):
        reader.start()
        epoch = []
        while True:
            try:
                epoch.append(exe.run(main, fetch_list=fetch))
            except fluid.core.EOFException:
                reader.reset()
                break
        out.append(epoch)
    return out


@pytest.mark.parametrize("use_double_buffer", [True, False])
def test_py_reader_feeds_read_file_variables(use_double_buffer):
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        reader = py_reader(
            capacity=4,
            shapes=[(-1, 3), (-1, 1)],
            dtypes=["float32", "int64"],
            name="train_reader",
            use_double_buffer=use_double_buffer,
        )
        x, y = read_file(reader)
        total = fluid.layers.reduce_sum(x)
    types = [op.type for op in main.global_block().ops]
    assert types == ["create_py_reader"] + ["create_double_buffer_reader"] * use_double_buffer + ["read", "reduce_sum"]
    assert main.global_block().ops[0].input("blocking_queue") == ["train_reader_queue"]
    assert (x.shape, x.dtype, y.dtype) == ((-1, 3), "float32", "int64")
    reader.decorate_paddle_reader(
        paddle.batch(lambda: ((np.full([3], i, "float32"), np.array([i])) for i in range(5)), batch_size=2)
    )
    exe = fluid.Executor(PLACE)
    exe.run(startup)
    for epoch in _run_epochs(exe, main, reader, [total, y]):
        assert [float(s) for s, _ in epoch] == [3.0, 15.0, 12.0]
        assert [lab[:, 0].tolist() for _, lab in epoch] == [[0, 1], [2, 3], [4]]


def test_create_py_reader_by_data_fills_the_data_variables_with_lod():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        ids = fluid.data("ids", [None, 1], "int64", lod_level=1)
        label = fluid.data("label", [None, 1], "int64")
        reader = create_py_reader_by_data(capacity=2, feed_list=[ids, label], use_double_buffer=False)
        got_ids, got_label = read_file(reader)
        pooled = fluid.layers.sequence_pool(fluid.layers.cast(got_ids, "float32"), "sum")
    assert got_ids is ids and got_label is label
    reader.decorate_sample_list_generator(lambda: iter([[([1, 2], [0]), ([3], [1])]]))
    exe = fluid.Executor(PLACE)
    exe.run(startup)
    ((result,),) = _run_epochs(exe, main, reader, [pooled], epochs=1)
    np.testing.assert_array_equal(result[0], [[3.0], [3.0]])


def test_double_buffer_and_read_file_refuse_other_variables():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [None, 1], "float32")
        with pytest.raises(ValueError, match="double_buffer: expected a reader from fluid.layers.py_reader"):
            double_buffer(x)
        with pytest.raises(ValueError, match="read_file: expected a reader"):
            read_file(x)
        with pytest.raises(TypeError, match="feed_list should be a list of Variable"):
            create_py_reader_by_data(2, x)
        with pytest.raises(ValueError, match="py_reader: expected one entry per slot"):
            py_reader(2, shapes=[(-1, 1)], dtypes=["float32", "int64"])


def test_double_buffer_records_the_place():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        reader = double_buffer(py_reader(2, [(-1, 1)], ["float32"], use_double_buffer=False), place=PLACE)
    assert main.global_block().ops[-1].attr("place") == str(PLACE).upper()
    assert callable(reader.start) and reader.queue is not None


# -- DataLoader.from_dataset -----------------------------------------------------------------------
def test_from_dataset_yields_one_feed_per_place(tmp_path):
    path = tmp_path / "part-0"
    path.write_text("".join(f"1 {i}.0 1 {i}\n" for i in range(7)))
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [None, 1], "float32")
        y = fluid.data("y", [None, 1], "int64")
    dataset = fluid.DatasetFactory().create_dataset("QueueDataset")
    dataset.set_batch_size(2)
    dataset.set_use_var([x, y])
    dataset.set_filelist([str(path)])
    loader = fluid.io.DataLoader.from_dataset(dataset, [PLACE], drop_last=True)
    for _ in range(2):
        feeds = [group[0] for group in loader()]
        assert [f["y"][:, 0].tolist() for f in feeds] == [[0, 1], [2, 3], [4, 5]]
    keep = fluid.io.DataLoader.from_dataset(dataset, [PLACE], drop_last=False)
    assert [g[0]["x"][:, 0].tolist() for g in keep][-1] == [6.0]
    with pytest.raises(ValueError, match="Filelist number of dataset 1 must be not less than place number 2"):
        fluid.io.DataLoader.from_dataset(dataset, [PLACE, PLACE])


# -- the rest of fluid.io / fluid.reader ------------------------------------------------------------
def test_batched_tensor_provider_batches_samples():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [None, 2], "float32")
    samples = lambda: ((np.array([i, i], "float32"),) for i in range(5))  # noqa: E731
    provider = fluid.reader.BatchedTensorProvider([x], PLACE, 2, samples, drop_last=False)
    assert [b[0][:, 0].tolist() for b in provider()] == [[0, 1], [2, 3], [4]]
    dropping = fluid.reader.BatchedTensorProvider([x], PLACE, 2, samples, drop_last=True)
    assert len(list(dropping())) == 2


def test_cleanup_func_registrar_runs_once_on_a_signal_then_the_earlier_handler():
    calls = []
    previous = signal.signal(signal.SIGUSR1, lambda signum, frame: calls.append("earlier"))
    try:
        fluid.reader.CleanupFuncRegistrar.register(lambda: calls.append("cleanup"), signals=[signal.SIGUSR1])
        os.kill(os.getpid(), signal.SIGUSR1)
        os.kill(os.getpid(), signal.SIGUSR1)
    finally:
        signal.signal(signal.SIGUSR1, previous)
    assert calls == ["cleanup", "earlier", "earlier"]
    with pytest.raises(TypeError, match="is not callable object"):
        fluid.reader.CleanupFuncRegistrar.register(3)


def test_fluid_io_reexports_paddles_names():
    import functools

    assert fluid.io.Executor is fluid.Executor and fluid.io.global_scope is fluid.global_scope
    assert fluid.io.reader is fluid.reader and fluid.io.layers is fluid.layers and fluid.io.reduce is functools.reduce
    assert fluid.io.shuffle is paddle.reader.shuffle and fluid.io.batch is paddle.batch
    assert fluid.io.DataLoader is fluid.reader.DataLoader and fluid.io.PyReader is fluid.reader.PyReader
    assert fluid.reader.DataLoader.from_generator is paddle.io.DataLoader.from_generator
    assert fluid.io.BatchSampler is paddle.io.BatchSampler and fluid.io.Dataset is paddle.io.Dataset
    assert fluid.io.dataloader.Dataset is paddle.io.Dataset
    assert isinstance(fluid.io.DataLoader(paddle.io.TensorDataset([np.zeros((2, 1))]), batch_size=1), object)


def test_monkey_patched_reader_reset_empties_the_queue_for_the_next_start():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup):
        reader = py_reader(capacity=8, shapes=[(-1, 1)], dtypes=["float32"], use_double_buffer=False)
        x = read_file(reader)
    plain = fluid.io.monkey_patch_reader_methods(main.global_block().var(reader.name))
    assert plain.persistable and plain.stop_gradient
    with pytest.raises(ValueError, match="the scope holds no reader under this name yet"):
        plain.reset()
    reader.decorate_batch_generator(lambda: ([np.full((1, 1), i, "float32")] for i in range(5)))
    exe = fluid.Executor(PLACE)
    reader.start()
    assert exe.run(main, fetch_list=[x])[0].tolist() == [[0.0]]
    plain.reset()  # what was queued is gone; the next start begins the epoch again
    reader.reset()
    assert [r.tolist() for (r,) in _run_epochs(exe, main, reader, [x], epochs=1)[0]] == [[[i]] for i in range(5)]


@pytest.mark.usefixtures("scope")
def test_save_vars_and_load_vars_and_load_params_round_trip(tmp_path):
    main, _, exe = _trained_program()
    base = _persistable_values(main)
    params = fluid.io.get_program_parameter(main)
    fluid.io.save_vars(exe, str(tmp_path / "vars"), main, vars=params)
    fluid.io.save_params(exe, str(tmp_path / "params"), main)
    _zero(main)
    fluid.io.load_vars(exe, str(tmp_path / "vars"), main, predicate=lambda v: v in params)
    assert all(
        np.array_equal(np.array(fluid.global_scope().find_var(p.name).get_tensor()), base[p.name]) for p in params
    )
    _zero(main)
    fluid.io.load_params(exe, str(tmp_path / "params"), main)
    assert all(
        np.array_equal(np.array(fluid.global_scope().find_var(p.name).get_tensor()), base[p.name]) for p in params
    )


def test_multiprocess_queue_set_is_drained_at_exit():
    import queue

    pending = queue.Queue()
    pending.put(1)
    fluid.io.multiprocess_queue_set.add(pending)
    try:
        fluid.reader._clear_multiprocess_queue_set()  # what CleanupFuncRegistrar runs at exit
    finally:
        fluid.io.multiprocess_queue_set.discard(pending)
    assert pending.empty()


def test_fluid_reader_reexports_the_dataset_classes_and_name_generator():
    assert fluid.reader.DatasetBase is paddle.distributed.QueueDataset.__mro__[1]
    assert fluid.io.InMemoryDataset is paddle.distributed.InMemoryDataset
    generator = fluid.io.UniqueNameGenerator("p_")
    assert generator("fc") == "p_fc_0" and generator("fc") == "p_fc_1"


def test_is_parameter_is_persistable_and_is_belong_to_optimizer():
    main, _, _ = _trained_program()
    kinds = {
        v.name: (fluid.io.is_parameter(v), fluid.io.is_persistable(v), fluid.io.is_belong_to_optimizer(v))
        for v in main.list_vars()
    }
    assert kinds["fc_0.w_0"] == (True, True, False)
    assert kinds["fc_0.w_0_moment1_0"] == (False, True, True)
    assert kinds["x"] == (False, False, False)


@pytest.mark.parametrize("use_thread", [False, True])
def test_batches_pushed_into_a_py_readers_queue_are_read_in_order(use_thread):
    # test_py_reader_push_pop.py: the script fills reader.queue itself, without start()
    import threading

    shapes, dtypes = [(-1, 3, 2, 1), (-1, 1)], ["float32", "int64"]
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()), fluid.scope_guard(fluid.core.Scope()):
        data_file = py_reader(capacity=10, shapes=shapes, dtypes=dtypes, lod_levels=[0, 0])
        feed_queue = data_file.queue
        read_out = read_file(data_file)
        rng = np.random.RandomState(3)
        inputs = []
        for _ in range(20):
            batch = fluid.core.LoDTensorArray()
            size = rng.randint(10, 21)
            for shape, dtype in zip(shapes, dtypes):
                batch.append(fluid.core.LoDTensor(rng.uniform(0, 1000, (size, *shape[1:])).astype(dtype)))
            inputs.append(batch)
        exe = fluid.Executor(PLACE)
        outputs = []
        if use_thread:
            threading.Thread(target=lambda: [feed_queue.push(b) for b in inputs], daemon=True).start()
            outputs = [exe.run(main, fetch_list=read_out) for _ in inputs]
        else:
            for batch in inputs:
                assert feed_queue.push(batch)
                outputs.append(exe.run(main, fetch_list=read_out))
        feed_queue.close()
        with pytest.raises(fluid.core.EOFException):
            exe.run(main, fetch_list=read_out)
    assert feed_queue.capacity() == 10 and feed_queue.size() == 0
    for batch, out in zip(inputs, outputs):
        for tensor, value in zip(batch, out):
            np.testing.assert_array_equal(np.array(tensor), value)


def test_a_killed_queue_fails_the_read_after_the_pushed_batches():
    main = fluid.Program()
    with fluid.program_guard(main, fluid.Program()):
        reader = py_reader(capacity=2, shapes=[(-1, 1)], dtypes=["float32"])
        x = read_file(reader)
    reader.queue.push([np.ones((1, 1), "float32")])
    reader.queue.kill()
    exe = fluid.Executor(PLACE)
    assert exe.run(main, fetch_list=[x])[0].tolist() == [[1.0]]
    with pytest.raises(FleetgraphError, match="the queue was killed: .*kill\\(\\) was called"):
        exe.run(main, fetch_list=[x])
    with pytest.raises(FleetgraphError, match="a batch holds 2 values; expected 1"):
        reader.reset()
        reader.queue.push([np.ones((1, 1), "float32"), np.ones((1, 1), "float32")])
