"""The one dispatch: every builder ends in `bind`, which chooses eager or static from the inputs
before any output exists, so no output is made of the wrong kind and repaired afterwards."""

from __future__ import annotations

import numpy as np
import pytest
from dygraph_helpers import fresh_mode_and_names  # noqa: F401  (autouse)

import fleetgraph as paddle
import fleetgraph.fluid as fluid
import fleetgraph.nn.functional as F
from fleetgraph.dygraph.dispatch import bind
from fleetgraph.ir import FleetgraphError
from fleetgraph.layers import LayerHelper


def _static_x(main):
    with paddle.static.program_guard(main, paddle.static.Program()):
        return paddle.static.data("x", [2, 3], "float32")


def test_layer_functions_on_tensors_leave_the_default_program_untouched_in_fluids_static_default():
    """Before, a layer function made a static placeholder in the default program, then removed it on
    seeing Tensor inputs; now nothing of an eager call reaches the program."""
    main = paddle.default_main_program()
    before = (dict(main.global_block().vars), len(main.global_block().ops))
    x = paddle.to_tensor(np.arange(6, dtype="float32").reshape(2, 3))
    outs = [
        fluid.layers.softmax(x),
        fluid.layers.reshape(x, [3, 2]),
        fluid.layers.topk(x, 1)[0],
        fluid.layers.split(x, 3, dim=1)[0],
        F.softmax_with_cross_entropy(x, paddle.to_tensor(np.zeros((2, 1), "int64"))),
    ]
    assert all(isinstance(o, paddle.Tensor) and o.value is not None for o in outs)
    assert (dict(main.global_block().vars), len(main.global_block().ops)) == before


def test_layer_functions_on_static_variables_build_the_program_in_dynamic_mode():
    """Before, a Layer-less call in dynamic mode made Tensor placeholders and turned them into the
    block's Variables; now the helper knows from its inputs that the outputs are static."""
    main = paddle.static.Program()
    x = _static_x(main)
    paddle.disable_static()
    with paddle.static.program_guard(main, paddle.static.Program()):
        top, indices = fluid.layers.topk(x, 2)
        parts = fluid.layers.split(x, 3, dim=1)
    outs = [top, indices, *parts]
    assert not any(isinstance(o, paddle.Tensor) for o in outs)
    assert all(main.global_block().vars[o.name] is o for o in outs)
    assert [op.type for op in main.global_block().ops] == ["top_k", "split"]


def test_a_layer_helper_makes_outputs_of_its_inputs_kind_whatever_the_mode():
    tensor = paddle.to_tensor(np.ones(2, "float32"))
    static = _static_x(paddle.static.Program())
    for set_mode in (paddle.enable_static, paddle.disable_static):
        set_mode()
        assert isinstance(LayerHelper("relu", inputs=tensor).create_variable_for_type_inference(), paddle.Tensor)
        assert not isinstance(LayerHelper("relu", inputs=[static]).create_variable_for_type_inference(), paddle.Tensor)
    assert LayerHelper("relu").eager  # no inputs: the mode decides (dynamic, just set)


def test_static_inputs_with_tensor_outputs_are_refused_not_repaired():
    main = paddle.static.Program()
    x = _static_x(main)
    with paddle.static.program_guard(main, paddle.static.Program()):
        with pytest.raises(FleetgraphError, match="static inputs with eager Tensor outputs"):
            bind("relu", {"X": [x]}, outputs={"Out": [paddle.Tensor()]})
    assert [op.type for op in main.global_block().ops] == []


def test_bind_makes_its_outputs_of_the_chosen_kind():
    x = paddle.to_tensor(np.array([[-1.0, 2.0]], "float32"))
    out = bind("reshape2", {"X": [x]}, {"shape": [2]}, extra_outputs=("XShape",))
    np.testing.assert_array_equal(out.numpy(), [-1.0, 2.0])
    main = paddle.static.Program()
    static = _static_x(main)
    with paddle.static.program_guard(main, paddle.static.Program()):
        out = bind("reshape2", {"X": [static]}, {"shape": [6]}, extra_outputs=("XShape",), name="r")
    op = main.global_block().ops[-1]
    assert op.outputs["Out"] == [out.name] and out.name.startswith("r.tmp_")
    assert main.global_block().vars[op.outputs["XShape"][0]].stop_gradient


def test_data_parallel_lives_in_distributed_under_every_public_spelling():
    from fleetgraph.distributed.parallel import DataParallel

    assert paddle.DataParallel is DataParallel is paddle.distributed.DataParallel
    assert paddle.distributed.ParallelEnv().world_size >= 1
