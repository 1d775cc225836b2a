"""Building an op checks it against its declaration: required slots filled, in-place outputs on their inputs."""

from __future__ import annotations

import pytest

from fleetgraph.ir import FleetgraphError, Program


def _block_with(*names):
    block = Program().global_block()
    for name in names:
        block.create_var(name, [2, 3])
    return block


def test_an_empty_required_slot_is_rejected_naming_op_and_slot():
    block = _block_with("x", "y")
    with pytest.raises(FleetgraphError, match="elementwise_add: required input slot 'Y' is empty"):
        block.append_op("elementwise_add", {"X": ["x"], "Y": []}, {"Out": ["y"]})
    with pytest.raises(FleetgraphError, match="scale: required output slot 'Out' is empty"):
        block.append_op("scale", {"X": ["x"]}, {})
    assert block.ops == []


def test_an_in_place_output_must_name_its_input():
    block = _block_with("x", "y")
    with pytest.raises(
        FleetgraphError, match=r"c_allreduce_sum: output Out updates input X in place; expected \['x'\], got \['y'\]"
    ):
        block.append_op("c_allreduce_sum", {"X": ["x"]}, {"Out": ["y"]})
    op = block.append_op("c_allreduce_sum", {"X": ["x"]}, {"Out": ["x"]})
    assert (op.input("X"), op.output("Out")) == (["x"], ["x"])
