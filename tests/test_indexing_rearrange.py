"""The indexing and rearranging layers of fluid.layers (slice, strided_slice, crop, crop_tensor, pad,
pad2d, pad_constant_like, roll, flip, reverse, index_select, index_sample, nonzero, unique,
unique_with_counts, scatter_nd, scatter_nd_add, multiplex, shard_index, hash, lod_reset, lod_append,
similarity_focus, space_to_depth, pixel_shuffle, shuffle_channel, temporal_shift, unfold) give the
results of Paddle 1.8.5's docstrings and unit tests, in a program and eagerly, and keep or set LoD
as Paddle's ops do."""

from __future__ import annotations

import numpy as np
import pytest
from op_cases import CASES
from op_cases.rearrange import space_to_depth_ref
from test_manipulation_ops import both_modes, run_static
from test_op_registry import _build, _rows

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import FleetgraphError, Program, program_guard, unique_name
from fleetgraph.onnx import (
    export,
    to_onnx_indexing,  # noqa: F401  (its rules, until onnx/export.py imports it)
)
from fleetgraph.ops.lod_tensor import LoDTensor, create_lod_tensor

L = fluid.layers
DATA = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], "float32")  # the slice / strided_slice docstrings' input
GRID = np.arange(1, 10, dtype="float32").reshape(3, 3)  # roll's docstring input


@both_modes
def test_slice_keeps_every_axis_and_clamps_ends_as_paddles_docstring(run):
    a, b = run(lambda x: (L.slice(x, [0, 1], [1, 0], [2, 3]), L.slice(x, [0, 1], [0, 1], [-1, 1000])), x=DATA)
    np.testing.assert_array_equal(a, [[5, 6, 7]])
    np.testing.assert_array_equal(b, [[2, 3, 4]])


def test_slice_refuses_variable_bounds_it_cannot_take():
    with program_guard(Program(), Program()), unique_name.guard():
        x = fluid.data("x", [2, 4], "float32")
        start = L.fill_constant([1], "int32", 1)
        with pytest.raises(NotImplementedError, match="slice: starts"):
            L.slice(x, [0], [start], [2])


@both_modes
def test_strided_slice_steps_and_reverses_as_paddles_docstring(run):
    a, b = run(
        lambda x: (
            L.strided_slice(x, [0, 1], [1, 0], [2, 3], [1, 1]),
            L.strided_slice(x, [0, 1], [0, -1], [-1, 0], [1, -2]),
        ),
        x=DATA,
    )
    np.testing.assert_array_equal(a, [[5, 6, 7]])
    np.testing.assert_array_equal(b, DATA[0:-1, -1:0:-2])


def test_strided_slice_takes_a_variable_inside_its_starts():
    def build(x):
        start = L.fill_constant([1], "int32", 1)
        return L.strided_slice(x, [0, 1], [0, start], [2, 4], [1, 2])

    (got,) = run_static(build, x=DATA)
    np.testing.assert_array_equal(got, DATA[:, 1:4:2])


@both_modes
def test_crop_and_crop_tensor_cut_the_window_at_the_offsets(run):
    x = np.arange(30, dtype="float32").reshape(3, 5, 2)
    a, b = run(lambda v: (L.crop(v, shape=[2, 2, 2], offsets=[1, 2, 0]), L.crop_tensor(v, [-1, 3, 1], [1, 1, 1])), x=x)
    np.testing.assert_array_equal(a, x[1:3, 2:4, 0:2])
    np.testing.assert_array_equal(b, x[1:, 1:4, 1:2])


def test_crop_takes_its_shape_from_a_variable_and_crop_tensor_its_offsets_from_one():
    x = np.arange(30, dtype="float32").reshape(5, 6)

    def build(v):
        like = L.fill_constant([2, 3], "float32", 0.0)
        offsets = L.assign(np.array([3, 2], "int32"))
        return L.crop(v, shape=like, offsets=[1, 1]), L.crop_tensor(v, shape=[2, -1], offsets=offsets)

    a, b = run_static(build, x=x)
    np.testing.assert_array_equal(a, x[1:3, 1:4])
    np.testing.assert_array_equal(b, x[3:5, 2:])


@both_modes
@pytest.mark.parametrize("mode", ["constant", "reflect", "edge"])
def test_pad2d_pads_top_bottom_left_right_in_each_mode_as_paddles_docstring(run, mode):
    x = np.array([[[[1, 2, 3], [4, 5, 6]]]], "float32")
    (got,) = run(lambda v: L.pad2d(v, paddings=[0, 1, 2, 1], mode=mode), x=x)
    kw = {"constant_values": 0.0} if mode == "constant" else {}
    np.testing.assert_array_equal(got, np.pad(x, ((0, 0), (0, 0), (0, 1), (2, 1)), mode=mode, **kw))


@both_modes
def test_pad2d_reads_nhwc_images(run):
    x = np.arange(24, dtype="float32").reshape(1, 3, 4, 2)
    (got,) = run(lambda v: L.pad2d(v, [1, 0, 0, 2], mode="reflect", data_format="NHWC"), x=x)
    np.testing.assert_array_equal(got, np.pad(x, ((0, 0), (1, 0), (0, 2), (0, 0)), mode="reflect"))


def test_pad2d_refuses_an_unknown_mode():
    with pytest.raises(ValueError, match="pad2d: mode 'wrap'"):
        run_static(lambda v: L.pad2d(v, [1, 1, 1, 1], mode="wrap"), x=np.zeros((1, 1, 2, 2), "float32"))


@both_modes
def test_pad_and_pad_constant_like_fill_with_the_pad_value(run):
    x, y = np.zeros((2, 3, 2), "float32"), np.ones((1, 3, 1), "float32")
    a, b = run(lambda u, v: (L.pad(v, [0, 1, 1, 0, 0, 2], 7.0), L.pad_constant_like(u, v, pad_value=-1.0)), x=x, y=y)
    np.testing.assert_array_equal(a, np.pad(y, ((0, 1), (1, 0), (0, 2)), constant_values=7.0))
    np.testing.assert_array_equal(b, np.pad(y, ((0, 1), (0, 0), (0, 1)), constant_values=-1.0))


@both_modes
def test_roll_without_dims_rolls_the_flattened_input_as_paddles_docstring(run):
    a, b = run(lambda x: (L.roll(x, shifts=1), L.roll(x, shifts=1, dims=0)), x=GRID)
    np.testing.assert_array_equal(a, [[9, 1, 2], [3, 4, 5], [6, 7, 8]])
    np.testing.assert_array_equal(b, [[7, 8, 9], [1, 2, 3], [4, 5, 6]])


@both_modes
def test_flip_and_reverse_reverse_the_given_axes(run):
    a, b, c = run(lambda x: (L.flip(x, [0, 1]), L.reverse(x, 0), L.reverse(x, [1])), x=GRID)
    np.testing.assert_array_equal(a, GRID[::-1, ::-1])
    np.testing.assert_array_equal(b, GRID[::-1])
    np.testing.assert_array_equal(c, GRID[:, ::-1])


def test_flip_keeps_the_lod_and_reverse_drops_it_as_paddle_1_8():
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = L.data(name="x", shape=[2], dtype="float32", lod_level=1)
        flipped, reversed_ = L.flip(x, [1]), L.reverse(x, 0)
    rows = np.arange(10, dtype="float32").reshape(5, 2)
    got_flip, got_rev = fluid.Executor().run(
        main,
        feed={"x": create_lod_tensor(rows, [[2, 3]])},
        fetch_list=[flipped, reversed_],
        scope=paddle.static.Scope(),
        return_numpy=False,
    )
    assert (flipped.lod_level, reversed_.lod_level) == (1, 0)
    assert got_flip.lod() == [[0, 2, 5]]
    np.testing.assert_array_equal(got_flip.data, rows[:, ::-1])
    np.testing.assert_array_equal(np.asarray(got_rev), rows[::-1])


@both_modes
def test_index_select_and_index_sample_pick_as_paddles_docstrings(run):
    x = np.array([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]], "float32")
    index = np.array([0, 1, 1], "int32")
    sample = np.array([[0, 1, 2], [1, 2, 3], [0, 0, 0]], "int64")
    a, b = run(lambda v, i, s: (L.index_select(v, i, dim=1), L.index_sample(v, s)), x=x, i=index, s=sample)
    np.testing.assert_array_equal(a, [[1, 2, 2], [5, 6, 6], [9, 10, 10]])
    np.testing.assert_array_equal(b, [[1, 2, 3], [6, 7, 8], [9, 9, 9]])


@both_modes
def test_nonzero_gives_coordinates_or_one_column_per_axis(run):
    x = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 3.0]], "float32")
    rows, (first, second) = run(lambda v: L.nonzero(v), x=x)[0], run(lambda v: L.nonzero(v, as_tuple=True), x=x)
    np.testing.assert_array_equal(rows, [[0, 0], [1, 1], [2, 2]])
    assert rows.dtype == np.int64
    np.testing.assert_array_equal(first, [[0], [1], [2]])
    np.testing.assert_array_equal(second, [[0], [1], [2]])


@both_modes
def test_unique_keeps_first_appearance_order_and_counts_as_paddles_docstring(run):
    x = np.array([2, 3, 3, 1, 5, 3], "int64")
    out, index, count = run(lambda v: L.unique_with_counts(v), x=x)
    np.testing.assert_array_equal(out, [2, 3, 1, 5])
    np.testing.assert_array_equal(index, [0, 1, 1, 2, 3, 1])
    np.testing.assert_array_equal(count, [1, 3, 1, 1])
    assert index.dtype == count.dtype == np.int32
    out64, index64 = run(lambda v: L.unique(v, dtype=np.int64), x=x)
    np.testing.assert_array_equal(out64, [2, 3, 1, 5])
    assert index64.dtype == np.int64


def test_unique_refuses_a_float_index_dtype():
    with pytest.raises(TypeError, match="unique: dtype 'float32'"):
        run_static(lambda v: L.unique(v, dtype="float32"), x=np.zeros(3, "int64"))


@both_modes
def test_scatter_nd_adds_each_update_at_its_index_as_paddles_docstring(run):
    index = np.array([[1, 1], [0, 1], [1, 3]], "int64")
    updates = np.arange(3 * 9, dtype="float32").reshape(3, 9) / 10
    ref = np.ones((3, 5, 9), "float32")
    (scattered, added) = run(
        lambda i, u, r: (L.scatter_nd(i, u, [3, 5, 9]), L.scatter_nd_add(r, i, u)), i=index, u=updates, r=ref
    )
    want = np.zeros((3, 5, 9), "float32")
    for idx, upd in zip(index, updates):
        want[tuple(idx)] += upd
    np.testing.assert_allclose(scattered, want)
    np.testing.assert_allclose(added, want + 1)


@both_modes
def test_multiplex_takes_each_row_from_the_input_its_index_names(run):
    x1, x2 = np.array([[1, 2], [3, 4]], "float32"), np.array([[5, 6], [7, 8]], "float32")
    (got,) = run(lambda a, b, i: L.multiplex([a, b], i), a=x1, b=x2, i=np.array([[1], [0]], "int32"))
    np.testing.assert_array_equal(got, [[5, 6], [3, 4]])


@both_modes
def test_shard_index_keeps_this_shards_ids_as_paddles_docstring(run):
    ids = np.array([[1], [6], [12], [19]], "int64")
    zero, one = run(lambda v: (L.shard_index(v, 20, 2, 0), L.shard_index(v, 20, 2, 1, ignore_value=-5)), x=ids)
    np.testing.assert_array_equal(zero, [[1], [6], [-1], [-1]])
    np.testing.assert_array_equal(one, [[-5], [-5], [2], [9]])


@both_modes
def test_hash_gives_paddles_xxh64_values(run):
    ids = np.array([1, 2**32 + 1], "int64").reshape(2, 1)
    (got,) = run(lambda v: L.hash(v, hash_size=10000, num_hash=2), x=ids)
    np.testing.assert_array_equal(got, np.array([1269, 9609, 3868, 7268]).reshape(2, 2, 1))


def test_lod_reset_and_lod_append_set_the_lod_as_paddles_docstrings():
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = L.data(name="x", shape=[1], dtype="float32", lod_level=1)
        y = L.data(name="y", shape=[1], dtype="float32", lod_level=2)
        plain = L.data(name="plain", shape=[1], dtype="float32")
        by_attr, by_y = L.lod_reset(x, target_lod=[0, 4, 6]), L.lod_reset(x, y=y)
        appended = L.lod_append(plain, [0, 1, 3, 6])
    rows = np.arange(6, dtype="float32").reshape(6, 1)
    feed = {
        "x": create_lod_tensor(rows, [[2, 3, 1]]),
        "y": create_lod_tensor(rows, [[2, 2], [2, 2, 1, 1]]),
        "plain": rows,
    }
    got = fluid.Executor().run(
        main, feed=feed, fetch_list=[by_attr, by_y, appended], scope=paddle.static.Scope(), return_numpy=False
    )
    assert [g.recursive_sequence_lengths() for g in got] == [[[4, 2]], [[2, 2], [2, 2, 1, 1]], [[1, 2, 3]]]
    assert (by_attr.lod_level, by_y.lod_level, appended.lod_level) == (1, 2, 1)
    np.testing.assert_array_equal(got[0].data, rows)


def test_lod_reset_needs_y_or_target_lod():
    with pytest.raises(ValueError, match="y and target_lod are both None"):
        run_static(lambda v: L.lod_reset(v), x=np.zeros((2, 1), "float32"))


@both_modes
def test_similarity_focus_marks_the_greedy_maxima_along_the_axis_as_paddles_test(run):
    x = np.array(
        [
            [[[0.8, 0.1], [0.4, 0.5]], [[0.9, 0.7], [0.9, 0.9]], [[0.8, 0.9], [0.1, 0.2]]],
            [[[0.2, 0.5], [0.3, 0.4]], [[0.9, 0.7], [0.8, 0.4]], [[0.0, 0.2], [0.4, 0.7]]],
        ],
        "float32",
    )
    (got,) = run(lambda v: L.similarity_focus(v, axis=1, indexes=[0]), x=x)
    want = np.array([[[1, 0], [0, 1]], [[0, 1], [1, 0]]], "float32")
    np.testing.assert_array_equal(got, np.repeat(want[:, None], 3, axis=1))


@both_modes
def test_pixel_shuffle_shuffle_channel_and_space_to_depth_rearrange_as_paddle(run):
    x = np.arange(2 * 8 * 2 * 2, dtype="float32").reshape(2, 8, 2, 2)
    shuffled, channels, depth = run(
        lambda v: (L.pixel_shuffle(v, 2), L.shuffle_channel(v, group=2), L.space_to_depth(v, 2)), x=x
    )
    np.testing.assert_array_equal(shuffled, x.reshape(2, 2, 2, 2, 2, 2).transpose(0, 1, 4, 2, 5, 3).reshape(2, 2, 4, 4))
    np.testing.assert_array_equal(channels[0, :, 0, 0], [0, 16, 4, 20, 8, 24, 12, 28])
    np.testing.assert_array_equal(depth, space_to_depth_ref(x, 2)["Out"])  # Paddle's element order
    assert depth.shape == (2, 32, 1, 1)


@both_modes
def test_temporal_shift_moves_channels_between_neighbouring_frames(run):
    x = np.arange(2 * 4, dtype="float32").reshape(2, 4, 1, 1) + 1  # one clip of 2 frames, 4 channels
    (got,) = run(lambda v: L.temporal_shift(v, seg_num=2, shift_ratio=0.25), x=x)
    # channel 0 from the previous frame, channel 1 from the next, channels 2 and 3 unchanged
    np.testing.assert_array_equal(got[:, :, 0, 0], [[0, 6, 3, 4], [1, 0, 7, 8]])


@both_modes
def test_unfold_lays_each_sliding_block_out_as_a_column(run):
    x = np.arange(16, dtype="float32").reshape(1, 1, 4, 4)
    (got,) = run(lambda v: L.unfold(v, kernel_sizes=2, strides=2), x=x)
    assert got.shape == (1, 4, 4)
    np.testing.assert_array_equal(got[0, :, 0], [0, 1, 4, 5])
    np.testing.assert_array_equal(got[0, :, 3], [10, 11, 14, 15])


def test_pad2d_reflect_gradient_adds_each_mirrored_copy_back_eagerly():
    paddle.disable_static()
    x = paddle.to_tensor(np.array([[[[1.0, 2.0, 3.0]]]], "float32"))
    x.stop_gradient = False
    out = L.pad2d(x, paddings=[0, 0, 2, 2], mode="reflect")  # [3, 2, 1, 2, 3, 2, 1]
    L.reduce_sum(out).backward()
    np.testing.assert_array_equal(x.gradient(), [[[[2.0, 3.0, 2.0]]]])


# -- ONNX: every registry case of an exported op, through onnxruntime and onnx's reference evaluator

EXPORTED = (
    *("strided_slice", "crop", "crop_tensor", "pad", "pad2d", "pad_constant_like", "roll", "flip", "reverse"),
    *("index_select", "index_sample", "where_index", "unique", "unique_with_counts", "scatter_nd_add"),
    *("multiplex", "shard_index", "space_to_depth", "pixel_shuffle", "shuffle_channel", "temporal_shift", "unfold"),
)
TENSOR_BOUNDS = {"StartsTensor", "EndsTensor", "Offsets", "Shape", "ShapeTensor", "OffsetsTensor", "Paddings"}
EXPORT_CASES = [
    c
    for t in EXPORTED
    for c in CASES[t]
    if not TENSOR_BOUNDS & set(c.inputs) and not any(isinstance(v, LoDTensor) for v in c.inputs.values())
]


@pytest.mark.parametrize("case", EXPORT_CASES, ids=[c.id for c in EXPORT_CASES])
def test_exported_op_computes_what_the_executor_does(case, tmp_path):
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from onnx.reference import ReferenceEvaluator

    prog, _, _, feed, outs = _build(case)
    fetch = [n for names in outs.values() for n in names]
    want = _rows(prog, feed, fetch)
    model = export(prog, list(feed), fetch, {}, path=tmp_path / "model.onnx")
    onnx.checker.check_model(model, full_check=True)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    runs = {"reference": ReferenceEvaluator(model).run(None, feed), "onnxruntime": session.run(None, feed)}
    for runner, got in runs.items():
        for name, g, w in zip(fetch, got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6, err_msg=f"{runner}: {name}")


def test_export_refuses_bounds_given_as_tensors():
    (case,) = [c for c in CASES["crop_tensor"] if c.name == "shape_and_offsets_tensors"]
    prog, _, _, feed, outs = _build(case)
    with pytest.raises(FleetgraphError, match="crop_tensor: bounds from the tensor input"):
        export(prog, list(feed), outs["Out"], {})


def test_crop_tensor_takes_variables_inside_its_shape_and_offsets():
    x = np.arange(30, dtype="float32").reshape(5, 6)

    def build(v):
        rows, start = L.fill_constant([1], "int32", 2), L.fill_constant([1], "int32", 3)
        return L.crop_tensor(v, shape=[rows, -1], offsets=[start, 1])

    (got,) = run_static(build, x=x)
    np.testing.assert_array_equal(got, x[3:5, 1:])


def test_ops_that_keep_the_rows_carry_the_lod_as_paddles_share_lod():
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = L.data(name="x", shape=[4, 2, 2], dtype="float32", lod_level=1)
        keep = {
            "pad2d": L.pad2d(x, [1, 0, 0, 1]),
            "space_to_depth": L.space_to_depth(x, 2),
            "temporal_shift": L.temporal_shift(x, seg_num=1),
            "pad_on_columns": L.pad(x, [0, 0, 1, 1, 0, 0, 0, 0]),
            "strided_slice_on_columns": L.strided_slice(x, [1], [0], [2], [1]),
        }
        drop = {
            "pad_on_rows": L.pad(x, [1, 0, 0, 0, 0, 0, 0, 0]),
            "pixel_shuffle": L.pixel_shuffle(x, 2),
            "unfold": L.unfold(x, 2),
        }
    assert {k: v.lod_level for k, v in keep.items()} == dict.fromkeys(keep, 1)
    assert {k: v.lod_level for k, v in drop.items()} == dict.fromkeys(drop, 0)
    rows = np.arange(3 * 16, dtype="float32").reshape(3, 4, 2, 2)
    (padded,) = fluid.Executor().run(
        main,
        feed={"x": create_lod_tensor(rows, [[1, 2]])},
        fetch_list=[keep["pad2d"]],
        scope=paddle.static.Scope(),
        return_numpy=False,
    )
    assert padded.lod() == [[0, 1, 3]]
    np.testing.assert_array_equal(padded.data, np.pad(rows, ((0, 0), (0, 0), (1, 0), (0, 1))))
