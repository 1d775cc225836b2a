"""The `fleetgraph` command line on the programs that examples/fit_a_line/train.py saves."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from xml.etree import ElementTree

import pytest

from fleetgraph.cli import main
from fleetgraph.ir import op_summary

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIT_A_LINE_SUMMARY = (  # examples/fit_a_line is seed 001, Fluid-spelled: layers.mean is a mean op
    "block0: mul elementwise_add elementwise_sub square mean fill_constant mean_grad square_grad "
    "elementwise_sub_grad elementwise_add_grad mul_grad sgd sgd"
)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """The directory `train.py --epochs 1 --save DIR` fills: main.json, startup.json, inference/."""
    out = tmp_path_factory.mktemp("fit_a_line")
    script = os.path.join(ROOT, "examples", "fit_a_line", "train.py")
    subprocess.run([sys.executable, script, "--epochs", "1", "--save", str(out)], check=True, capture_output=True)
    return out


def _run(capsys, *argv) -> tuple[int, str, str]:
    status = main([str(a) for a in argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


# -- inspect ------------------------------------------------------------------------------------


def test_inspect_prints_the_program_text(saved, capsys):
    status, out, _ = _run(capsys, "inspect", saved / "main.json")
    assert status == 0
    assert out.startswith("{ // block_idx:0  parent_idx:-1  forward_idx:-1")
    assert "persist trainable param fc_0.w_0 : LOD_TENSOR.shape(13, 1)" in out
    assert "= sgd(inputs={Param=['fc_0.w_0']" in out


def test_inspect_summary_prints_one_line_of_op_types_per_block(saved, capsys):
    assert _run(capsys, "inspect", saved / "main.json", "--summary") == (0, FIT_A_LINE_SUMMARY + "\n", "")
    status, out, _ = _run(capsys, "inspect", saved / "startup.json", "--summary", "--block", "0")
    assert (status, out) == (0, "block0: uniform_random fill_constant fill_constant\n")


def test_inspect_reads_the_program_of_a_saved_inference_model(saved, capsys):
    status, out, _ = _run(capsys, "inspect", saved / "inference" / "model.json", "--summary")
    assert (status, out) == (0, "block0: mul elementwise_add\n")


def test_inspect_reads_a_saved_inference_model_directory(saved, capsys):
    status, out, _ = _run(capsys, "inspect", saved / "inference", "--summary")
    assert (status, out) == (0, "block0: mul elementwise_add\n")


def test_inspect_directory_without_a_model_exits_2(capsys, tmp_path):
    status, _, err = _run(capsys, "inspect", tmp_path)
    assert status == 2
    expected = "expected a saved inference model directory holding model.json, got no JSON file"
    assert err == f"fleetgraph inspect: {tmp_path}: {expected}\n"


def test_inspect_reads_an_onnx_model(capsys, tmp_path):
    fg_onnx = pytest.importorskip("fleetgraph.onnx")
    onnx = pytest.importorskip("onnx")
    import numpy as np
    from onnx import TensorProto, helper, numpy_helper

    w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3), "w")
    b = numpy_helper.from_array(np.zeros(3, dtype=np.float32), "b")
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["x", "w", "b"], ["h"]), helper.make_node("Relu", ["h"], ["y"])],
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])],
        initializer=[w, b],
    )
    path = tmp_path / "mlp.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    status, out, err = _run(capsys, "inspect", path, "--summary")
    assert (status, err) == (0, "")
    assert out == "block0: matmul elementwise_add relu\n"  # Gemm is a matmul and an add of its C
    assert out == op_summary(fg_onnx.load(str(path))[0]) + "\n"


def test_inspect_corrupt_onnx_file_exits_2_with_one_line(capsys, tmp_path):
    pytest.importorskip("fleetgraph.onnx")
    path = tmp_path / "bad.onnx"
    path.write_bytes(b"not a protobuf")
    status, out, err = _run(capsys, "inspect", path, "--summary")
    assert (status, out) == (2, "")
    assert err.startswith(f"fleetgraph inspect: {path}: ") and err.count("\n") == 1


def test_python_dash_m_fleetgraph_runs_the_command_line(saved):
    done = subprocess.run(
        [sys.executable, "-m", "fleetgraph", "inspect", str(saved / "main.json"), "--summary"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, FIT_A_LINE_SUMMARY + "\n", "")


def test_inspect_dot_writes_graphviz_text(saved, capsys, tmp_path):
    target = tmp_path / "main.dot"
    status, out, _ = _run(capsys, "inspect", saved / "main.json", "--dot", target)
    assert (status, out) == (0, f"wrote {target}\n")
    dot = target.read_text()
    assert dot.startswith("digraph program {") and "subgraph cluster_block0 {" in dot
    assert '"b0/var:fc_0.w_0" -> "b0/op:0" [label="Y"];' in dot
    status, out, _ = _run(capsys, "inspect", saved / "main.json", "--dot", "-", "--block", "0")
    assert status == 0 and out.startswith('digraph "block0" {')


def test_inspect_svg_without_graphviz_draws_with_fast_sugiyama(saved, capsys, tmp_path, monkeypatch):
    pytest.importorskip("fast_sugiyama")
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    target = tmp_path / "main.svg"
    assert _run(capsys, "inspect", saved / "main.json", "--svg", target) == (0, f"wrote {target}\n", "")
    svg = ElementTree.parse(target).getroot()
    nodes = svg.findall(".//{http://www.w3.org/2000/svg}g[@class='node']")
    assert len(nodes) == 13 + 17  # fit_a_line's ops and variables, as in the DOT view
    texts = [t.text for t in svg.iter("{http://www.w3.org/2000/svg}text")]
    assert FIT_A_LINE_SUMMARY.split()[1:] == [t for t in texts if t in FIT_A_LINE_SUMMARY.split()[1:]]


def test_inspect_svg_without_graphviz_or_fast_sugiyama_says_what_to_install(saved, capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    monkeypatch.setitem(sys.modules, "fast_sugiyama", None)  # import fails
    status, out, err = _run(capsys, "inspect", saved / "main.json", "--svg", tmp_path / "main.svg")
    assert (status, out) == (2, "")
    assert err == (
        "fleetgraph inspect: --svg without Graphviz needs the fast-sugiyama package "
        "(pip install 'fleetgraph[svg]'); or install Graphviz\n"
    )
    assert not (tmp_path / "main.svg").exists()


@pytest.mark.skipif(shutil.which("dot") is None, reason="needs Graphviz's dot (apt-get install graphviz)")
def test_inspect_svg_renders_with_graphviz(saved, capsys, tmp_path):
    status, _, _ = _run(capsys, "inspect", saved / "main.json", "--svg", tmp_path / "main.svg")
    assert status == 0 and "<svg" in (tmp_path / "main.svg").read_text()


def test_inspect_missing_file_exits_2_with_one_line(capsys, tmp_path):
    status, out, err = _run(capsys, "inspect", tmp_path / "nope.json")
    assert (status, out) == (2, "")
    assert err == f"fleetgraph inspect: cannot read '{tmp_path / 'nope.json'}': No such file or directory\n"


@pytest.mark.parametrize("content", ["not json", "[1, 2]", '{"format": "fleetgraph.program", "version": 1}'])
def test_inspect_invalid_file_exits_2_with_one_line(capsys, tmp_path, content):
    path = tmp_path / "bad.json"
    path.write_text(content)
    status, out, err = _run(capsys, "inspect", path, "--summary")
    assert (status, out) == (2, "")
    assert err.startswith(f"fleetgraph inspect: {path}: ") and err.count("\n") == 1
    assert "Traceback" not in err


def test_inspect_block_out_of_range_exits_2(saved, capsys):
    status, _, err = _run(capsys, "inspect", saved / "main.json", "--block", "3")
    assert (status, err) == (2, "fleetgraph inspect: --block: expected 0..0, got 3\n")


# -- transpile ----------------------------------------------------------------------------------

PSERVERS = "127.0.0.1:6174,127.0.0.1:6175"


def test_transpile_writes_every_role_plan_and_summary(saved, capsys, tmp_path):
    out = tmp_path / "out"
    status, printed, err = _run(
        capsys, "transpile", saved / "main.json", "--pservers", PSERVERS, "--trainers", 2, "--out", out
    )
    assert (status, err) == (0, "")
    names = [
        "trainer_0.json",
        "trainer_0_startup.json",
        "trainer_1.json",
        "trainer_1_startup.json",
        "pserver_127.0.0.1_6174.json",
        "pserver_127.0.0.1_6174_startup.json",
        "pserver_127.0.0.1_6175.json",
        "pserver_127.0.0.1_6175_startup.json",
        "plan.txt",
        "plan.json",
        "summary.txt",
    ]
    assert printed.splitlines() == [str(out / name) for name in names]
    assert sorted(os.listdir(out)) == sorted(names)
    summary = (out / "summary.txt").read_text().splitlines()
    assert "pserver 127.0.0.1:6174 main:" in summary
    assert summary[summary.index("pserver 127.0.0.1:6174 main:") + 1] == "block0: listen_and_serv"
    assert summary[0] == "trainer 0 main:" and "send" in summary[1].split()
    assert (out / "plan.txt").read_text().strip()


def test_transpiled_programs_load_back_with_inspect(saved, capsys, tmp_path):
    out = tmp_path / "out"
    _run(capsys, "transpile", saved / "main.json", "--pservers", PSERVERS, "--trainers", 2, "--async", "--out", out)
    status, printed, _ = _run(capsys, "inspect", out / "pserver_127.0.0.1_6175.json", "--summary", "--block", "0")
    assert (status, printed) == (0, "block0: listen_and_serv\n")


def test_transpile_collective_writes_one_program_pair_per_rank(saved, capsys, tmp_path):
    endpoints = "127.0.0.1:6170,127.0.0.1:6171"
    status, printed, err = _run(
        capsys, "transpile", saved / "main.json", "--mode", "collective", "--endpoints", endpoints, "--out", tmp_path
    )
    assert (status, err) == (0, "")
    names = ["trainer_0.json", "trainer_0_startup.json", "trainer_1.json", "trainer_1_startup.json"]
    assert printed.splitlines() == [str(tmp_path / n) for n in [*names, "plan.txt", "plan.json", "summary.txt"]]
    summary = (tmp_path / "summary.txt").read_text().splitlines()
    assert summary[::2] == ["trainer 0 main:", "trainer 0 startup:", "trainer 1 main:", "trainer 1 startup:"]
    assert summary[1].split().count("c_allreduce_sum") == 2


def test_transpile_geo_passes_the_push_interval(saved, capsys, tmp_path):
    status, _, _ = _run(
        capsys, "transpile", saved / "main.json", "--pservers", PSERVERS, "--trainers", 1, "--geo", 5, "--out", tmp_path
    )
    assert status == 0
    assert "every 5 steps" in (tmp_path / "plan.txt").read_text()


def test_transpile_malformed_pservers_exits_2_with_one_line(saved, capsys, tmp_path):
    status, out, err = _run(
        capsys, "transpile", saved / "main.json", "--pservers", "127.0.0.1", "--trainers", 2, "--out", tmp_path
    )
    assert (status, out) == (2, "")
    assert err.startswith("fleetgraph transpile: pservers '127.0.0.1' is malformed") and err.count("\n") == 1
    assert not list(tmp_path.iterdir())


def test_transpile_without_startup_says_to_pass_it(saved, capsys, tmp_path):
    lone = tmp_path / "main.json"
    shutil.copy(saved / "main.json", lone)
    status, _, err = _run(capsys, "transpile", lone, "--pservers", PSERVERS, "--trainers", 2, "--out", tmp_path)
    assert status == 2
    assert err.startswith("fleetgraph transpile: no startup program; expected --startup FILE or ")


def test_transpile_pserver_mode_needs_pservers(saved, capsys, tmp_path):
    status, _, err = _run(capsys, "transpile", saved / "main.json", "--trainers", 2, "--out", tmp_path)
    assert (status, err) == (2, "fleetgraph transpile: pserver mode: expected --pservers IP:PORT,..., got none\n")


def test_transpile_html_writes_the_report_of_every_role(saved, capsys, tmp_path):
    report = tmp_path / "report.html"
    status, printed, err = _run(
        capsys, "transpile", saved / "main.json", "--pservers", PSERVERS, "--trainers", 2, "--out", tmp_path / "out",
        "--html", report,
    )  # fmt: skip
    assert (status, err) == (0, "")
    assert printed.splitlines()[-1] == str(report)
    page = report.read_text()
    assert page.startswith("<!DOCTYPE html>")
    roles = re.findall(r'<section class="role (\w+)" id="r\d+" data-role="([^"]+)"', page)
    assert roles == [
        ("trainer", "trainer 0"),
        ("pserver", "pserver 127.0.0.1:6174"),
        ("pserver", "pserver 127.0.0.1:6175"),
        ("trainer", "trainer 1"),
    ]


# -- diff and --version --------------------------------------------------------------------------


def test_diff_of_a_program_and_its_transpiled_trainer_shows_the_added_ops(saved, capsys, tmp_path):
    out = tmp_path / "out"
    _run(capsys, "transpile", saved / "main.json", "--pservers", PSERVERS, "--trainers", 2, "--out", out)
    status, printed, err = _run(capsys, "diff", saved / "main.json", out / "trainer_0.json")
    assert (status, err) == (1, "")  # differ, as diff(1) says
    lines = printed.splitlines()
    assert lines[0] == "block0:"
    assert sum(re.match(r"\+ op send\b", line) is not None for line in lines) == 2  # one per gradient
    assert sum(line.startswith("+ op send_barrier") for line in lines) == 1
    assert any(line.startswith("- op sgd") for line in lines)  # the updates moved to the pservers
    status, printed, _ = _run(capsys, "diff", saved / "main.json", saved / "main.json")
    assert (status, printed) == (0, "no differences\n")


def test_diff_of_a_missing_file_exits_2_with_one_line(saved, capsys, tmp_path):
    status, out, err = _run(capsys, "diff", saved / "main.json", tmp_path / "nope.json")
    assert (status, out) == (2, "")
    assert err.startswith("fleetgraph diff: cannot read") and err.count("\n") == 1


def test_version_names_the_package(capsys):
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.startswith("fleetgraph ")


def test_transpile_refuses_an_endpoint_with_two_ports(saved, capsys, tmp_path):
    status, _, err = _run(
        capsys, "transpile", saved / "main.json", "--pservers", "127.0.0.1:6174:6174", "--trainers", 2,
        "--out", tmp_path,
    )  # fmt: skip
    assert status == 2
    assert "'127.0.0.1:6174:6174' has a ':' in its host '127.0.0.1:6174' (one port only" in err
