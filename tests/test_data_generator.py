"""Data generators write the MultiSlot lines Paddle's write (outputs taken from PaddlePaddle 2.6.2)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import fleetgraph as paddle
import fleetgraph.distributed.fleet as fleet
from fleetgraph.data.errors import PipeCommandError
from fleetgraph.fluid.incubate import data_generator as fluid_dg
from fleetgraph.ir import Program, program_guard
from fleetgraph.static import data

REPO = Path(paddle.__file__).resolve().parent.parent

CTR_SCRIPT = """
import sys
import fleetgraph.distributed.fleet as fleet


class CTR(fleet.MultiSlotDataGenerator):
    def generate_sample(self, line):
        def local_iter():
            label, dense, ids = line.rstrip("\\n").split("\\t")
            if label == "skip":
                yield None
                return
            if label == "fail":
                sys.exit("bad raw line: " + line.strip())
            yield [("dense", [float(x) for x in dense.split(",")]), ("ids", [int(x) for x in ids.split(",")]),
                   ("label", [int(label)])]
        return local_iter


CTR().run_from_stdin()
"""
RAW = "1\t0.5,1.25,3\t7,18446744073709551615\nskip\t\t\n0\t1e-05,2,0.1\t9\n"
PADDLE_OUTPUT = "3 0.5 1.25 3.0 2 7 18446744073709551615 1 1\n3 1e-05 2.0 0.1 1 9 1 0\n"


@pytest.fixture
def ctr_script(tmp_path) -> str:
    path = tmp_path / "ctr_reader.py"
    path.write_text(CTR_SCRIPT)
    env_path = os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])
    return f"PYTHONPATH={env_path} {sys.executable} {path}"


def test_a_generator_run_from_stdin_writes_paddles_lines(ctr_script):
    out = subprocess.run(ctr_script, shell=True, input=RAW, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout == PADDLE_OUTPUT


def test_a_generator_as_pipe_command_feeds_a_dataset(tmp_path, ctr_script):
    raw = tmp_path / "raw-0"
    raw.write_text(RAW)
    with program_guard(Program(), Program()):
        use_var = [
            data("dense", shape=[-1, 3], dtype="float32"),
            data("ids", shape=[-1, 1], dtype="int64", lod_level=1),
            data("label", shape=[-1, 1], dtype="int64"),
        ]
    ds = paddle.distributed.QueueDataset()
    ds.init(batch_size=8, use_var=use_var, pipe_command=ctr_script)
    ds.set_filelist([str(raw)])
    with ds._batch_source() as source:
        (batch,) = list(source)
    np.testing.assert_array_equal(batch["dense"], np.array([[0.5, 1.25, 3.0], [1e-5, 2.0, 0.1]], np.float32))
    assert batch["ids"].data[:, 0].tolist() == [7, -1, 9] and batch["ids"].lod() == [[0, 2, 3]]
    assert batch["label"].tolist() == [[1], [0]]
    raw.write_text(RAW + "fail\tx\tx\n")
    with pytest.raises(PipeCommandError, match=r"(?s)exited with status 1.*bad raw line: fail"):
        with ds._batch_source() as source:
            list(source)


class Words(fleet.MultiSlotDataGenerator):
    def generate_sample(self, line):
        def local_iter():
            yield [("words", [int(x) for x in line.split()])]

        return local_iter

    def generate_batch(self, samples):
        def local_iter():
            width = max(len(s[0][1]) for s in samples)
            for s in samples:
                yield [("words", s[0][1] + [0] * (width - len(s[0][1])))]

        return local_iter


def test_generate_batch_sees_set_batch_samples_at_a_time(monkeypatch, capsys):
    monkeypatch.setattr(sys, "stdin", __import__("io").StringIO("1 2 3\n4\n5 6\n"))
    words = Words()
    words.set_batch(2)
    words.run_from_stdin()
    assert capsys.readouterr().out == "3 1 2 3\n3 4 0 0\n2 5 6\n"


def test_run_from_memory_and_zip_samples(capsys):
    class Memory(fluid_dg.MultiSlotDataGenerator):
        def generate_sample(self, line):
            def local_iter():
                assert line is None
                for i in range(3):
                    yield zip(["a", "b"], [[i, i + 1], [0.5 * i]])

            return local_iter

    Memory().run_from_memory()
    assert capsys.readouterr().out == "2 0 1 1 0.0\n2 1 2 1 0.5\n2 2 3 1 1.0\n"


def test_the_string_generator_writes_values_as_given():
    gen = fleet.MultiSlotStringDataGenerator()
    assert gen._gen_str([("words", ["a", "b", "c"]), ("label", ["1"])]) == "3 a b c 1 1\n"
    assert gen._gen_str([("a", [])]) == "0\n"
    with pytest.raises(ValueError, match="must be in list or tuple typeExamples"):
        gen._gen_str("nope")


@pytest.mark.parametrize(
    "samples, message",
    [
        ([[("a", [])]], "the elements of each field can not be empty, you need padding it in process()."),
        ([[("a", (1, 2))]], "elements<class 'tuple'> must be in list type"),
        ([[(1, [1])]], "name<class 'int'> must be in str type"),
        ([[("a", ["x"])]], "the type of element<class 'str'> must be in int or float"),
        ([[("a", [1.5, "x"])]], "the type of element<class 'str'> must be in int or float"),
        ([[("a", [1])], [("b", [1])]], "the field name of two given line are not match: require<a>, get<b>."),
        ([[("a", [1])], [("a", [1]), ("b", [2])]], "the complete field set of two given line are inconsistent."),
        (["nope"], "the output of process() must be in list or tuple typeExample"),
    ],
)
def test_malformed_samples_raise_paddles_errors(samples, message):
    gen = fleet.MultiSlotDataGenerator()
    with pytest.raises(ValueError) as info:
        for sample in samples:
            gen._gen_str(sample)
    assert str(info.value).startswith(message)


def test_after_the_first_sample_a_float_slot_is_checked_no_further():
    gen = fleet.MultiSlotDataGenerator()  # Paddle's quirk, kept: its output is then refused by the parser
    assert [gen._gen_str(s) for s in ([("a", [1.5])], [("a", ["x"])])] == ["1 1.5\n", "1 x\n"]
    gen = fleet.MultiSlotDataGenerator()
    assert [gen._gen_str(s) for s in ([("a", [1])], [("a", [1.5, "x"])])] == ["1 1\n", "2 1.5 x\n"]
    assert fleet.data_generator.MultiSlotDataGenerator is fluid_dg.MultiSlotDataGenerator


def test_the_base_generator_asks_to_be_subclassed():
    gen = fleet.data_generator.DataGenerator()
    with pytest.raises(NotImplementedError, match="Please rewrite this function"):
        gen.generate_sample("x")
    with pytest.raises(NotImplementedError, match="MultiSlotDataGenerator"):
        gen._gen_str([("a", [1])])
