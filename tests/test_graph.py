"""Graph views of programs: networkx nodes and slot-labelled edges, DOT text, and program diffs."""

from __future__ import annotations

import re
from xml.etree import ElementTree

import pytest
from models import fit_a_line_2x

import fleetgraph as paddle
from fleetgraph.inspect.graph import diff, op_node, program_to_dot, to_dot, to_networkx, var_node
from fleetgraph.inspect.svg import program_to_svg
from fleetgraph.ir import Program, program_guard, unique_name
from fleetgraph.transpiler import append_backward

FIT_A_LINE_OPS = 13
FIT_A_LINE_VARS = 17
FIT_A_LINE_EDGES = 41  # one per argument name of every op, inputs and outputs


@pytest.fixture
def fit_a_line():
    main, _, _, _, _ = fit_a_line_2x()
    return main


def _slots(graph, src, dst):
    return sorted(data["slot"] for data in graph.get_edge_data(src, dst, default={}).values())


def _forward_program():
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = paddle.static.data(name="x", shape=[None, 13], dtype="float32")
        y = paddle.static.data(name="y", shape=[None, 1], dtype="float32")
        loss = paddle.mean(paddle.nn.functional.square_error_cost(paddle.static.nn.fc(x, size=1), y))
    return main, loss


def _program_with_sub_block():
    """Block 1 scales a parameter of block 0 into a variable of its own."""
    program = Program()
    block0 = program.global_block()
    block0.create_parameter("w", shape=[3, 2])
    block1 = program._create_block()
    block1.create_var("w.scaled", shape=[3, 2])
    block1.append_op("scale", inputs={"X": "w"}, outputs={"Out": "w.scaled"}, attrs={"scale": 0.5})
    program._rollback()
    return program


# -- networkx -----------------------------------------------------------------------------------


def test_fit_a_line_graph_has_a_node_per_op_and_variable(fit_a_line):
    graph = to_networkx(fit_a_line.global_block())
    kinds = [data["kind"] for _, data in graph.nodes(data=True)]
    assert kinds.count("op") == FIT_A_LINE_OPS
    assert kinds.count("var") == FIT_A_LINE_VARS
    assert graph.number_of_edges() == FIT_A_LINE_EDGES


def test_node_attributes_describe_ops_and_variables(fit_a_line):
    graph = to_networkx(fit_a_line.global_block())
    assert graph.nodes[op_node(0)] == dict(kind="op", type="mul", index=0, role=0, peers=[])
    assert graph.nodes[op_node(12)]["type"] == "sgd"
    assert graph.nodes[op_node(12)]["role"] == 2  # OpRole.Optimize
    weight = graph.nodes[var_node("fc_0.w_0")]
    assert (weight["shape"], weight["dtype"], weight["persistable"], weight["parameter"]) == (
        (13, 1),
        "float32",
        True,
        True,
    )
    assert graph.nodes[var_node("x")]["persistable"] is False


def test_edges_run_from_inputs_to_op_to_outputs_labelled_by_slot(fit_a_line):
    graph = to_networkx(fit_a_line.global_block())
    assert _slots(graph, var_node("x"), op_node(0)) == ["X"]
    assert _slots(graph, var_node("fc_0.w_0"), op_node(0)) == ["Y"]
    assert _slots(graph, op_node(0), var_node("fc_0.tmp_0")) == ["Out"]
    assert _slots(graph, op_node(9), var_node("fc_0.b_0@GRAD")) == ["Y@GRAD"]
    sgd_in = sorted(data["slot"] for _, _, data in graph.in_edges(op_node(11), data=True))
    assert sgd_in == ["Grad", "LearningRate", "Param"]
    assert _slots(graph, op_node(11), var_node("fc_0.b_0")) == ["ParamOut"]


def test_sub_block_graph_includes_the_parent_variables_it_reads():
    graph = to_networkx(_program_with_sub_block().block(1))
    assert sorted(graph.nodes) == [op_node(0), var_node("w"), var_node("w.scaled")]
    assert graph.nodes[var_node("w")]["block"] == 0
    assert graph.nodes[var_node("w.scaled")]["block"] == 1
    assert _slots(graph, var_node("w"), op_node(0)) == ["X"]


# -- DOT ----------------------------------------------------------------------------------------

_QUOTED = r'"(?:[^"\\]|\\.)*"'
_STATEMENT = re.compile(rf"^\s*{_QUOTED}( -> {_QUOTED})? \[(\w+={_QUOTED}(, )?)+\];$")


def _statements(dot: str) -> list[str]:
    return [line for line in dot.splitlines() if line.strip().startswith('"')]


def test_dot_has_a_statement_per_node_and_edge_and_every_one_is_well_formed(fit_a_line):
    dot = to_dot(fit_a_line.global_block())
    assert dot.startswith('digraph "block0" {\n') and dot.endswith("}\n")
    assert dot.count("{") == dot.count("}")
    statements = _statements(dot)
    assert len(statements) == FIT_A_LINE_OPS + FIT_A_LINE_VARS + FIT_A_LINE_EDGES
    assert all(_STATEMENT.match(line) for line in statements), [s for s in statements if not _STATEMENT.match(s)]


def test_dot_draws_ops_as_boxes_and_marks_parameters(fit_a_line):
    dot = to_dot(fit_a_line.global_block())
    assert '"op:0" [label="mul", shape="box"' in dot
    assert '"var:fc_0.w_0" [label="fc_0.w_0\\n[13, 1]", shape="ellipse", fillcolor=' in dot
    assert 'peripheries="2", style="filled"' in _line_of(dot, '"var:fc_0.w_0" [')
    assert '"var:learning_rate_0" [' in dot and "filled" in _line_of(dot, '"var:learning_rate_0" [')
    assert "filled" not in _line_of(dot, '"var:x" [')
    assert '"var:fc_0.w_0" -> "op:0" [label="Y"];' in dot
    assert '"op:9" -> "var:fc_0.b_0@GRAD" [label="Y@GRAD"];' in dot


def test_dot_labels_each_send_and_recv_with_where_it_goes():
    from ps_helpers import transpile

    trainer = transpile(lambda: fit_a_line_2x()[:2], 0).get_trainer_program()
    dot = to_dot(trainer.global_block())
    sends = [line for line in dot.splitlines() if 'label="send\\n' in line]
    assert [re.search(r'label="send\\n-> ([^"]+)"', line).group(1) for line in sends] == [
        "127.0.0.1:6174",
        "127.0.0.1:6175",
    ]
    assert 'label="send_barrier\\n-> 127.0.0.1:6174\\n-> 127.0.0.1:6175"' in dot
    assert 'label="recv\\n-> 127.0.0.1:6175"' in dot
    assert '[label="mul", shape="box"' in dot  # other ops as before


def _line_of(dot: str, start: str) -> str:
    return next(line for line in dot.splitlines() if line.strip().startswith(start))


def test_dot_escapes_quotes_and_backslashes_in_names():
    program = Program()
    block = program.global_block()
    block.create_var('odd"name\\x', shape=[2])
    block.create_var("out", shape=[2])
    block.append_op("scale", inputs={"X": 'odd"name\\x'}, outputs={"Out": "out"})
    dot = to_dot(block)
    assert '"var:odd\\"name\\\\x" -> "op:0" [label="X"];' in dot
    assert all(_STATEMENT.match(line) for line in _statements(dot))


def test_program_dot_has_one_cluster_per_block_with_prefixed_ids():
    dot = program_to_dot(_program_with_sub_block())
    assert dot.startswith("digraph program {")
    assert "subgraph cluster_block0 {" in dot and "subgraph cluster_block1 {" in dot
    assert 'label="block 1 (parent 0)";' in dot
    assert '"b1/var:w" -> "b1/op:0" [label="X"];' in dot
    assert "dashed" in _line_of(dot, '"b1/var:w" [')  # a parent block's variable
    assert "dashed" not in _line_of(dot, '"b0/var:w" [')


# -- SVG without Graphviz ----------------------------------------------------------------------

SVG = "{http://www.w3.org/2000/svg}"


def _svg_nodes(svg_text: str) -> dict[str, list[float]]:
    """Each drawn node's id -> its shape's box (x0, y0, x1, y1), from the parsed SVG."""
    boxes = {}
    for g in ElementTree.fromstring(svg_text).iter(f"{SVG}g"):
        if g.get("class") != "node":
            continue
        shape = g[1]
        if shape.tag == f"{SVG}rect":
            x, y, w, h = (float(shape.get(k)) for k in ("x", "y", "width", "height"))
        else:
            cx, cy, rx, ry = (float(shape.get(k)) for k in ("cx", "cy", "rx", "ry"))
            x, y, w, h = cx - rx, cy - ry, 2 * rx, 2 * ry
        boxes[g.get("id")] = [x, y, x + w, y + h]
    return boxes


def test_svg_draws_every_node_of_the_dot_view_inside_the_canvas_without_overlaps(fit_a_line):
    pytest.importorskip("fast_sugiyama")
    text = program_to_svg(fit_a_line)
    root = ElementTree.fromstring(text)
    width, height = float(root.get("width")), float(root.get("height"))
    boxes = _svg_nodes(text)
    graph = to_networkx(fit_a_line.global_block())
    assert sorted(boxes) == sorted(f"b0/{n}" for n in graph.nodes)
    assert all(0 <= x0 and x1 <= width and 0 <= y0 and y1 <= height for x0, y0, x1, y1 in boxes.values())
    overlaps = [
        (a, b)
        for a, (ax0, ay0, ax1, ay1) in boxes.items()
        for b, (bx0, by0, bx1, by1) in boxes.items()
        if a < b and ax0 < bx1 and bx0 < ax1 and ay0 < by1 and by0 < ay1
    ]
    assert overlaps == []
    paths = [p for p in root.iter(f"{SVG}path") if p.get("marker-end")]
    assert len(paths) == FIT_A_LINE_EDGES


def test_svg_puts_an_op_below_the_variables_it_reads(fit_a_line):
    pytest.importorskip("fast_sugiyama")
    boxes = _svg_nodes(program_to_svg(fit_a_line))
    mul = boxes["b0/" + op_node(0)]
    assert boxes["b0/" + var_node("x")][3] < mul[1]  # x's bottom above mul's top
    assert mul[3] < boxes["b0/" + var_node("fc_0.tmp_0")][1]


def test_svg_of_a_program_has_one_group_per_block():
    pytest.importorskip("fast_sugiyama")
    text = program_to_svg(_program_with_sub_block())
    groups = [g.get("id") for g in ElementTree.fromstring(text).iter(f"{SVG}g") if g.get("class") == "block"]
    assert groups == ["block0", "block1"]
    assert sorted(_svg_nodes(text)) == ["b0/var:w", "b1/op:0", "b1/var:w", "b1/var:w.scaled"]


def test_svg_places_a_block_without_edges_below_its_title():
    pytest.importorskip("fast_sugiyama")
    text = program_to_svg(_program_with_sub_block())  # block 0 declares w and has no op
    title = next(t for t in ElementTree.fromstring(text).iter(f"{SVG}text") if t.text == "block 0")
    assert _svg_nodes(text)["b0/var:w"][1] > float(title.get("y"))  # the node's top below the title's baseline


# -- diff ---------------------------------------------------------------------------------------


def test_diff_of_append_backward_lists_the_gradient_ops_and_variables():
    before, loss = _forward_program()
    after = before.clone()
    append_backward(after.global_block().var(loss.name))
    assert str(diff(before, after)) == "\n".join(
        [
            "block0:",
            "+ op fill_constant( -> reduce_mean_0.tmp_0@GRAD)",
            "+ op reduce_mean_grad(square_0.tmp_0, reduce_mean_0.tmp_0@GRAD -> square_0.tmp_0@GRAD)",
            "+ op square_grad(elementwise_sub_0.tmp_0, square_0.tmp_0@GRAD -> elementwise_sub_0.tmp_0@GRAD)",
            "+ op elementwise_sub_grad(fc_0.tmp_1, y, elementwise_sub_0.tmp_0@GRAD -> fc_0.tmp_1@GRAD)",
            "+ op elementwise_add_grad(fc_0.tmp_0, fc_0.b_0, fc_0.tmp_1@GRAD -> fc_0.tmp_0@GRAD, fc_0.b_0@GRAD)",
            "+ op mul_grad(x, fc_0.w_0, fc_0.tmp_0@GRAD -> fc_0.w_0@GRAD)",
            "~ op reduce_mean(square_0.tmp_0 -> reduce_mean_0.tmp_0): op_role 0 -> 256",  # tagged as the loss
            "+ var reduce_mean_0.tmp_0@GRAD",
            "+ var square_0.tmp_0@GRAD",
            "+ var elementwise_sub_0.tmp_0@GRAD",
            "+ var fc_0.tmp_1@GRAD",
            "+ var fc_0.tmp_0@GRAD",
            "+ var fc_0.b_0@GRAD",
            "+ var fc_0.w_0@GRAD",
        ]
    )
    changes = diff(before, after).block(0)
    assert not changes.removed_ops and not changes.removed_vars and not changes.changed_vars
    assert [r.index for r in changes.added_ops] == [5, 6, 7, 8, 9, 10]


def test_diff_after_removing_an_op_lists_exactly_that_op_and_variable(fit_a_line):
    after = fit_a_line.clone()
    block = after.global_block()
    block._remove_op(12)
    block._remove_var("learning_rate_0")
    result = diff(fit_a_line, after)
    assert str(result) == "\n".join(
        [
            "block0:",
            "- op sgd(fc_0.w_0, fc_0.w_0@GRAD, learning_rate_0 -> fc_0.w_0)",
            "- var learning_rate_0",
        ]
    )
    assert result.block(0).removed_ops[0].index == 12


def test_diff_ignores_reordering_and_reports_attr_and_shape_changes(fit_a_line):
    after = fit_a_line.clone()
    block = after.global_block()
    block.ops[11], block.ops[12] = block.ops[12], block.ops[11]
    assert not diff(fit_a_line, after)
    assert str(diff(fit_a_line, after)) == "no differences"
    block.ops[0]._set_attr("x_num_col_dims", 2)
    block.var("x").shape = (-1, 14)
    assert str(diff(fit_a_line, after)).splitlines()[1:] == [
        "~ op mul(x, fc_0.w_0 -> fc_0.tmp_0): x_num_col_dims 1 -> 2",
        "~ var x: shape [-1, 13] -> [-1, 14]",
    ]


def test_diff_reports_a_block_only_one_side_has():
    before = Program()
    before.global_block().create_parameter("w", shape=[3, 2])
    after = _program_with_sub_block()
    assert str(diff(before, after)) == "\n".join(["block1:", "+ op scale(w -> w.scaled)", "+ var w.scaled"])
    assert str(diff(after, before)) == "\n".join(["block1:", "- op scale(w -> w.scaled)", "- var w.scaled"])
