"""fluid.core (Scope, LoDTensor, Tensor, LoDTensorArray), fluid.executor, fluid.dataset and
fluid.data_feeder, checked as Paddle 1.8's test_scope.py, test_tensor.py and the check_* helpers'
messages have them."""

import numpy as np
import pytest

import fleetgraph.fluid as fluid
from fleetgraph.fluid import core
from fleetgraph.fluid.data_feeder import check_dtype, check_type, check_variable_and_dtype, convert_dtype


# -- Scope (test_scope.py) -------------------------------------------------------------------------
def test_a_new_scope_has_no_variables():
    assert core.Scope().find_var("test") is None


def test_a_declared_variable_is_found_here_and_in_kid_scopes():
    scope = core.Scope()
    assert scope.var("var_a") is not None
    assert scope.find_var("var_a") is not None
    assert scope.new_scope().find_var("var_a") is not None


def test_var_holds_an_int():
    var = core.Scope().var("test_int")
    var.set_int(10)
    assert var.is_int() and var.get_int() == 10


def test_a_kid_scope_updates_its_parents_entry_and_keeps_its_own():
    parent = core.Scope()
    parent.var("w").get_tensor().set(np.ones(2, np.float32), core.CPUPlace())
    kid = parent.new_scope()
    kid.find_var("w").get_tensor().set(np.full(2, 3.0, np.float32), core.CPUPlace())
    kid.var("tmp").get_tensor().set(np.zeros(1), core.CPUPlace())
    np.testing.assert_array_equal(np.array(parent.find_var("w").get_tensor()), [3.0, 3.0])
    assert parent.find_var("tmp") is None and kid.local_var_names() == ["tmp"]
    assert kid.parent() is parent
    parent.drop_kids()


# -- Tensor through a scope (test_tensor.py) -------------------------------------------------------
def test_int_tensor_allocated_then_set():
    tensor = core.Scope().var("test_tensor").get_tensor()
    tensor._set_dims([1000, 784])
    tensor._alloc_int(core.CPUPlace())
    array = np.array(tensor)
    assert array.shape == (1000, 784)
    array[3, 9], array[19, 11] = 1, 2
    tensor.set(array, core.CPUPlace())
    again = np.array(tensor)
    assert again[3, 9] == 1 and again[19, 11] == 2


def test_float_lod_tensor_keeps_its_lengths():
    tensor = core.Scope().var("test_lod_tensor").get_tensor()
    tensor._set_dims([5, 2, 3, 4])
    tensor._alloc_float(core.CPUPlace())
    array = np.array(tensor)
    assert array.shape == (5, 2, 3, 4) and array.dtype == np.float32
    array[0, 0, 0, 0], array[0, 0, 0, 1] = 1.0, 2.0
    tensor.set(array, core.CPUPlace())
    assert np.array(tensor)[0, 0, 0, 1] == 2.0
    assert tensor.recursive_sequence_lengths() == []
    tensor.set_recursive_sequence_lengths([[2, 1], [1, 2, 2]])
    assert tensor.recursive_sequence_lengths() == [[2, 1], [1, 2, 2]]
    assert tensor.lod() == [[0, 2, 3], [0, 1, 3, 5]]
    assert tensor.has_valid_recursive_sequence_lengths()
    assert tensor._get_dims() == [5, 2, 3, 4] and tensor.shape() == [5, 2, 3, 4]


def test_lod_tensor_lengths_set_before_the_data_stay():
    lod_tensor = core.LoDTensor()
    lod_tensor._set_dims([5, 2, 3, 4])
    lod_tensor.set_recursive_sequence_lengths([[2, 1], [1, 2, 2]])
    lod_tensor._alloc_float(core.CPUPlace())
    array = np.array(lod_tensor)
    array[0, 0, 0, 0] = 1.0
    lod_tensor.set(array, core.CPUPlace())
    assert np.array(lod_tensor)[0, 0, 0, 0] == 1.0
    assert lod_tensor.recursive_sequence_lengths() == [[2, 1], [1, 2, 2]]


def test_lengths_that_do_not_cover_the_rows_are_not_valid():
    tensor = core.LoDTensor(np.zeros((4, 1)))
    tensor.set_lod([[0, 1, 4]])
    assert tensor.has_valid_recursive_sequence_lengths()
    tensor.set(np.zeros((6, 1)), core.CPUPlace())
    assert not tensor.has_valid_recursive_sequence_lengths()
    with pytest.raises(ValueError, match="set_lod: LoD level 0 ends at 4, but the data has 6 rows"):
        tensor.set_lod([[0, 1, 4]])


def test_empty_tensor_has_its_dims():
    tensor = core.Scope().var("t").get_tensor()
    tensor._set_dims([0, 1])
    tensor._alloc_float(core.CPUPlace())
    assert np.array(tensor).shape == (0, 1)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"])
def test_tensor_slices_as_numpy_does(dtype):
    tensor = core.Tensor()
    tensor._set_dims([3, 3, 3])
    array = np.arange(1, 28).reshape(3, 3, 3).astype(dtype)
    tensor.set(array, core.CPUPlace())
    for index in [1, slice(1, None), slice(0, 2), slice(2, None, -2), (slice(0, None), slice(0, None))]:
        np.testing.assert_array_equal(np.array(tensor[index]), array[index])
    np.testing.assert_array_equal(np.array(tensor[2::-2][0]), array[2::-2][0])
    np.testing.assert_array_equal(np.array(tensor[0::1, 0::-1, 2:]), array[0::1, 0::-1, 2:])
    assert tensor._dtype() == np.dtype(dtype)


def test_tensor_set_from_a_list_of_arrays():
    array = np.random.randint(1000, size=(200, 300))
    tensor = core.Tensor()
    tensor.set([array, array], core.CPUPlace())
    np.testing.assert_array_equal(np.array(tensor), np.array([array, array]))


def test_lod_tensor_array_holds_lod_tensors():
    arr = core.LoDTensorArray()
    arr.append(core.LoDTensor(np.ones((2, 1))))
    assert len(arr) == 1 and np.array(arr[0]).shape == (2, 1)
    with pytest.raises(TypeError, match="LoDTensorArray.append: expected a LoDTensor, got ndarray"):
        arr.append(np.ones(2))


def test_a_value_set_through_the_global_scope_is_what_the_next_run_reads():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.data("x", [None, 2], "float32")
        y = fluid.layers.fc(x, 1, bias_attr=False, param_attr=fluid.ParamAttr(name="w"))
    exe = fluid.Executor(fluid.CPUPlace())
    scope = core.Scope()
    with fluid.scope_guard(scope):
        exe.run(startup)
        fluid.global_scope().find_var("w").get_tensor().set(np.array([[2.0], [3.0]], np.float32), fluid.CPUPlace())
        (out,) = exe.run(main, feed={"x": np.array([[1.0, 1.0]], np.float32)}, fetch_list=[y])
    np.testing.assert_allclose(out, [[5.0]])


def test_eof_exception_is_the_readers_end():
    assert issubclass(core.EOFException, Exception)


# -- fluid.executor, fluid.dataset -----------------------------------------------------------------
def test_fluid_executor_module_has_the_executor_and_scope_functions():
    from fleetgraph.fluid import executor

    assert executor.Executor is fluid.Executor
    assert executor.global_scope is fluid.global_scope and executor.scope_guard is fluid.scope_guard
    assert executor.default_main_program is fluid.default_main_program
    assert executor.convert_np_dtype_to_dtype_(np.float32) == "float32"
    with pytest.raises(NotImplementedError, match="paddle.fluid.executor.TrainerFactory is not in fleetgraph"):
        executor.TrainerFactory  # noqa: B018


def test_fluid_dataset_factory_makes_the_named_dataset():
    from fleetgraph.fluid import dataset

    assert isinstance(dataset.DatasetFactory().create_dataset("QueueDataset"), dataset.QueueDataset)
    assert isinstance(dataset.DatasetFactory().create_dataset("InMemoryDataset"), dataset.InMemoryDataset)


# -- fluid.data_feeder -----------------------------------------------------------------------------
def test_convert_dtype_names_numpy_types_and_strings():
    assert convert_dtype(np.float32) == "float32" and convert_dtype(np.bool_) == "bool"
    assert convert_dtype(np.dtype("int64")) == "int64" and convert_dtype("uint8") == "uint8"
    with pytest.raises(ValueError, match=r"dtype must be any of \[bool, float16, float32"):
        convert_dtype("complex64")


def test_check_variable_and_dtype_raises_paddles_messages():
    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [None, 3], "int32")
    check_variable_and_dtype(x, "x", ["int32", "int64"], "cast")
    with pytest.raises(TypeError, match=r"The data type of 'x' in relu must be \['float32'\], but received int32\."):
        check_variable_and_dtype(x, "x", ["float32"], "relu")
    with pytest.raises(TypeError, match=r"The type of 'x' in relu must be .*Variable.*, but received <class 'list'>"):
        check_variable_and_dtype([1.0], "x", ["float32"], "relu")
    with pytest.raises(TypeError, match="The data type of 'x' in relu must be"):
        check_dtype(np.int64, "x", ("float32",), "relu")
    with pytest.warns(UserWarning, match="only support float16 in GPU now"):
        check_dtype("float16", "x", ("float16",), "relu")


def test_checks_do_nothing_in_dygraph_mode():
    with fluid.dygraph.guard():
        check_type([1.0], "x", (fluid.Variable,), "relu")
        check_dtype("int8", "x", ("float32",), "relu")


def test_data_feeder_module_feeds_a_minibatch():
    from fleetgraph.fluid import data_feeder

    with fluid.program_guard(fluid.Program(), fluid.Program()):
        x = fluid.data("x", [None, 2], "float32")
        feeder = data_feeder.DataFeeder([x], fluid.CPUPlace())
    fed = feeder.feed([([1, 2],), ([3, 4],)])
    np.testing.assert_array_equal(fed["x"], np.array([[1, 2], [3, 4]], np.float32))
    assert list(data_feeder.zip([1], [2])) == [(1, 2)] and list(data_feeder.xrange(2)) == [0, 1]


def test_a_run_in_a_kid_scope_trains_the_parents_parameters():
    main, startup = fluid.Program(), fluid.Program()
    with fluid.program_guard(main, startup), fluid.unique_name.guard():
        x = fluid.data("x", [None, 2], "float32")
        loss = fluid.layers.reduce_mean(fluid.layers.fc(x, 1, param_attr=fluid.ParamAttr(name="w")))
        fluid.optimizer.SGD(0.5).minimize(loss)
    exe, parent = fluid.Executor(fluid.CPUPlace()), core.Scope()
    exe.run(startup, scope=parent)
    before = np.array(parent.find_var("w").get_tensor(), copy=True)
    kid = parent.new_scope()
    exe.run(main, feed={"x": np.ones((1, 2), np.float32)}, scope=kid)
    np.testing.assert_allclose(np.array(parent.find_var("w").get_tensor()), before - 0.5)  # d loss / d w = x = 1
    assert "w" not in kid.local_var_names()
