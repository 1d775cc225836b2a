"""The HTML report of a transpile and FLEETGRAPH_DUMP_DIR: every role, every send linked to the
pserver block that serves it, the plan's table, all-reduce buckets; opened in headless Chromium
where it is installed."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
from html.parser import HTMLParser

import pytest
from models import fit_a_line_fluid, mlp, sparse_ctr

import fleetgraph as paddle
import fleetgraph.distributed.fleet as fleet
import fleetgraph.distributed.fleet.base.role_maker as role_maker
import fleetgraph.fluid as fluid
from fleetgraph.inspect.report import RoleView, build_report
from fleetgraph.ir import Program, program_guard, unique_name
from fleetgraph.transpiler import DistributeTranspiler, DistributeTranspilerConfig, dump
from fleetgraph.transpiler.dump import plan_view, transpile_roles, write_roles

PSERVERS = ["127.0.0.1:6174", "127.0.0.1:6175"]
RANKS = ["127.0.0.1:6170", "127.0.0.1:6171", "127.0.0.1:6172"]
FIT_A_LINE_ROLES = ["trainer 0", "pserver 127.0.0.1:6174", "pserver 127.0.0.1:6175", "trainer 1"]


class Page(HTMLParser):
    """The parts of the report a test reads: role columns, ops (with their block), plan rows, data."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.roles: list[dict] = []  # in page order
        self.blocks: dict[str, str] = {}  # block element id -> role name
        self.ops: dict[str, dict] = {}  # op element id -> attrs, plus its role and block
        self.rows: list[dict] = []
        self.tags: list[tuple[str, dict]] = []
        self.data: dict = {}
        self._block = None
        self._in_data = False
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append((tag, a))
        classes = (a.get("class") or "").split()
        if tag == "section" and "role" in classes:
            self.roles.append(a)
        elif tag == "div" and "block" in classes:
            self._block = a["id"]
            self.blocks[a["id"]] = self.roles[-1]["data-role"]
        elif tag == "li" and "op" in classes:
            self.ops[a["id"]] = {**a, "role": self.roles[-1]["data-role"], "block": self._block}
        elif tag == "tr" and ({"block-row", "bucket-row"} & set(classes)):
            self.rows.append(a)
        elif tag == "script" and a.get("id") == "fg-data":
            self._in_data = True

    def handle_data(self, data):
        if self._in_data:
            self.data = json.loads(data)
            self._in_data = False


def _pserver_job(model, trainers=2, config=None):
    main, startup = model[0], model[1]
    t = DistributeTranspiler(config)
    t.transpile(0, program=main, pservers=",".join(PSERVERS), trainers=trainers, startup_program=startup)
    return t, transpile_roles(t)


def _report(t, roles) -> Page:
    return Page(build_report(roles, plan_view(t.plan)))


@pytest.fixture(scope="module")
def fit_a_line_job():
    return _pserver_job(fit_a_line_fluid())


def test_report_shows_every_role_trainers_around_the_pservers(fit_a_line_job):
    page = _report(*fit_a_line_job)
    assert [r["data-role"] for r in page.roles] == FIT_A_LINE_ROLES
    assert [r["data-kind"] for r in page.roles] == ["trainer", "pserver", "pserver", "trainer"]
    summary = {role: [page.ops[o]["id"] for o in page.ops if page.ops[o]["role"] == role] for role in FIT_A_LINE_ROLES}
    assert len(summary["trainer 0"]) == len(summary["trainer 1"]) == 17 + 5  # main and startup ops


def test_every_send_is_linked_to_the_pserver_block_that_optimizes_its_gradient(fit_a_line_job):
    t, roles = fit_a_line_job
    page = _report(t, roles)
    sends = {oid: op for oid, op in page.ops.items() if page.data["ops"][oid]["type"] == "send"}
    assert len(sends) == 4  # two gradients from each of two trainers
    for oid, op in sends.items():
        details = page.data["ops"][oid]
        grad = details["attrs"]["send_varnames"][0]  # 'fc_0.w_0@GRAD.trainer_1'
        endpoint = details["attrs"]["epmap"][0]
        (target,) = op["data-links"].split()
        assert page.blocks[target] == f"pserver {endpoint}"
        served = t.plan.param(grad.split("@")[0]).blocks[0]
        assert served.endpoint == endpoint
        block_ops = [page.data["ops"][o] for o, x in page.ops.items() if x["block"] == target]
        assert [o["type"] for o in block_ops] == ["sum", "scale", "sgd"]
        assert block_ops[0]["inputs"]["X"][int(roles[0].name[-1] != op["role"][-1])][0] == grad
        assert block_ops[-1]["outputs"]["ParamOut"][0][0] == served.param


def test_every_recv_is_linked_to_the_block_that_updates_its_parameter(fit_a_line_job):
    page = _report(*fit_a_line_job)
    recvs = [oid for oid in page.ops if page.data["ops"][oid]["type"] == "recv"]
    assert len(recvs) == 8  # two parameters, in each trainer's main and startup programs
    for oid in recvs:
        details = page.data["ops"][oid]
        (target,) = page.ops[oid]["data-links"].split()
        updates = [page.data["ops"][o]["outputs"].get("ParamOut") for o, x in page.ops.items() if x["block"] == target]
        assert [details["outputs"]["Out"][0][0]] == [u[0][0] for u in updates if u]


def test_plan_table_has_one_row_per_block_where_it_lives(fit_a_line_job):
    t, roles = fit_a_line_job
    page = _report(t, roles)
    expected = [(ep, b.name) for ep in PSERVERS for _, b in t.plan.blocks_on(ep)]
    assert [(r["data-endpoint"], r["data-block"]) for r in page.rows] == expected
    assert expected == [("127.0.0.1:6174", "fc_0.b_0"), ("127.0.0.1:6175", "fc_0.w_0")]


def test_distributed_table_rows_move_per_id_and_lookups_reach_both_blocks():
    t, roles = _pserver_job(sparse_ctr(lambda: paddle.optimizer.SGD(0.01)))
    view = plan_view(t.plan)
    tables = [b for s in view["pservers"] for b in s["blocks"] if b["kind"] == "table"]
    assert [(b["name"], b["rows"], b["bytes_sent"], b["bytes_received"]) for b in tables] == [
        ("table.block0", [0, 2500], 8 + 8 + 16, 16),  # id asked + id and gradient row pushed; the row back
        ("table.block1", [2500, 5000], 8 + 8 + 16, 16),
    ]
    page = _report(t, roles)
    lookups = [o for o in page.ops if page.data["ops"][o]["type"] == "distributed_lookup_table"]
    assert len(lookups) == 2
    for oid in lookups:
        targets = page.ops[oid]["data-links"].split()
        assert [page.blocks[x] for x in targets] == [f"pserver {ep}" for ep in PSERVERS]
        assert {link["kind"] for link in page.data["links"] if link["source"] == oid} == {"prefetch"}


def test_collective_report_lists_each_bucket_and_chains_its_allreduce_across_ranks():
    main, startup, *_ = mlp(lambda: paddle.optimizer.SGD(0.01), hidden=(32, 32))
    config = DistributeTranspilerConfig()
    config.mode, config.fuse_all_reduce_ops, config.fuse_grad_size_in_MB = "collective", True, 0.002
    t = DistributeTranspiler(config)
    t.transpile(0, program=main, trainers=",".join(RANKS), startup_program=startup, current_endpoint=RANKS[0])
    roles = transpile_roles(t)
    page = _report(t, roles)
    assert [r["data-role"] for r in page.roles] == ["trainer 0", "trainer 1", "trainer 2"]
    assert [r["data-fused"] for r in page.rows] == [b.fused for b in t.plan.buckets]
    assert t.plan.buckets[0].grads == ["fc_2.b_0@GRAD", "fc_2.w_0@GRAD", "fc_1.b_0@GRAD"]
    first = [o for o in page.ops if page.data["ops"][o].get("bucket", "").startswith("bucket 0:")]
    assert [page.ops[o]["role"] for o in first] == ["trainer 0", "trainer 1", "trainer 2"]
    assert "fc_2.b_0@GRAD, fc_2.w_0@GRAD, fc_1.b_0@GRAD" in page.data["ops"][first[0]]["bucket"]
    chain = [(link["source"], link["target"]) for link in page.data["links"] if link["kind"] == "allreduce"]
    assert (first[0], first[1]) in chain and (first[1], first[2]) in chain


def test_report_is_self_contained(fit_a_line_job):
    page = _report(*fit_a_line_job)
    assert not [a for tag, a in page.tags if tag in ("link", "img", "iframe", "object", "embed")]
    assert not [a for tag, a in page.tags if tag == "script" and "src" in a]
    assert all(not a.get("href", "#").split("#")[0] for _, a in page.tags)  # in-page anchors only


def test_names_that_look_like_markup_stay_text():
    main = Program()
    with program_guard(main, Program()), unique_name.guard():
        block = main.global_block()
        block.create_var("</script><b>x", shape=[2])
        block.append_op("scale", inputs={"X": "</script><b>x"}, outputs={"Out": "</script><b>x"})
    page = Page(build_report([RoleView("trainer 0", "trainer", "", main)]))
    assert [tag for tag, _ in page.tags].count("b") == 1  # the op type's <b>, none from the name
    assert page.data["ops"]["r0-main-b0-o0"]["inputs"]["X"][0][0] == "</script><b>x"


def test_send_to_an_endpoint_no_pserver_has_is_marked(fit_a_line_job):
    _, roles = fit_a_line_job
    kept = [r for r in roles if r.name in ("trainer 0", "pserver 127.0.0.1:6175")]
    page = Page(build_report(kept))
    lost = [o for o in page.data["dangling"] if page.data["ops"][o]["type"] == "send"]
    assert [page.data["ops"][o]["attrs"]["epmap"] for o in lost] == [["127.0.0.1:6174"]]
    assert "dangling" in page.ops[lost[0]]["class"].split()


# -- FLEETGRAPH_DUMP_DIR ------------------------------------------------------------------------

DUMPED = [
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
    "report.html",
]


def test_dump_dir_gets_every_role_the_plan_and_the_report_from_the_transpiler(tmp_path, monkeypatch):
    monkeypatch.setenv("FLEETGRAPH_DUMP_DIR", str(tmp_path))
    main, startup, *_ = fit_a_line_fluid()
    t = DistributeTranspiler()
    t.transpile(1, program=main, pservers=",".join(PSERVERS), trainers=2, startup_program=startup)
    assert sorted(os.listdir(tmp_path)) == sorted(DUMPED)
    assert (tmp_path / "plan.txt").read_text() == str(t.plan) + "\n"
    trainer_1 = paddle.ir.load_program(str(tmp_path / "trainer_1.json"))
    assert paddle.ir.op_summary(trainer_1) == paddle.ir.op_summary(t.get_trainer_program())
    page = Page((tmp_path / "report.html").read_text())
    assert [r["data-role"] for r in page.roles] == FIT_A_LINE_ROLES


def test_dump_dir_gets_the_job_from_a_fleet_server(tmp_path, monkeypatch):
    monkeypatch.setenv("FLEETGRAPH_DUMP_DIR", str(tmp_path))
    for name in ("_role_maker", "_strategy", "_transpiler", "_origin_program", "_main_program", "_startup_program"):
        monkeypatch.setattr(fleet.fleet, name, getattr(fleet.fleet, name))  # the process's Fleet as it was, after
    fleet.init(
        role_maker.UserDefinedRoleMaker(
            current_id=1, role=role_maker.Role.SERVER, worker_num=2, server_endpoints=PSERVERS
        )
    )
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = paddle.static.data(name="x", shape=[None, 13], dtype="float32")
        loss = paddle.mean(paddle.static.nn.fc(x, size=1))
        fleet.distributed_optimizer(paddle.optimizer.SGD(0.01)).minimize(loss)
    assert sorted(os.listdir(tmp_path)) == sorted(DUMPED)
    served = json.loads((tmp_path / "plan.json").read_text())
    assert [s["endpoint"] for s in served["pservers"]] == PSERVERS
    assert paddle.ir.op_summary(main) == paddle.ir.op_summary(
        paddle.ir.load_program(str(tmp_path / "pserver_127.0.0.1_6175.json"))
    )


def test_a_transpile_in_another_thread_dumps_while_one_is_dumping(tmp_path, monkeypatch):
    """The 'already dumping' mark is per thread: a job's transpile on one thread is dumped even while
    another thread's dump runs its own nested transpiles."""
    monkeypatch.setenv("FLEETGRAPH_DUMP_DIR", str(tmp_path))
    dumped = []
    monkeypatch.setattr(dump, "write_roles", lambda *a, **k: dumped.append(threading.current_thread().name))
    main, startup, *_ = fit_a_line_fluid()
    other = threading.Thread(
        target=lambda: DistributeTranspiler().transpile(
            0, program=main.clone(), pservers=",".join(PSERVERS), trainers=2, startup_program=startup.clone()
        ),
        name="other",
    )
    calls = []

    class Nesting(DistributeTranspiler):
        def transpile(self, *args, **kwargs):
            calls.append(self)
            if len(calls) == 2:  # the dump's first nested transpile: the other thread's job runs now
                other.start()
                other.join(timeout=60)
            return super().transpile(*args, **kwargs)

    Nesting().transpile(0, program=main, pservers=",".join(PSERVERS), trainers=2, startup_program=startup)
    assert not other.is_alive()
    assert sorted(dumped) == ["MainThread", "other"]


def test_write_roles_leaves_no_temporary_files(fit_a_line_job, tmp_path):
    t, roles = fit_a_line_job
    written = write_roles(str(tmp_path), roles, t.plan, html=str(tmp_path / "r.html"))
    assert sorted(os.listdir(tmp_path)) == sorted(os.path.basename(p) for p in written)


# -- headless Chromium --------------------------------------------------------------------------

CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="needs headless Chromium (apt-get install chromium)")


def _chromium(tmp_path, page: str, *args: str) -> subprocess.CompletedProcess:
    """One headless run with a fresh profile; console messages go to stderr as 'INFO:CONSOLE' lines."""
    flags = [
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}", "--enable-logging=stderr", "--v=0",
    ]  # fmt: skip
    return subprocess.run([CHROMIUM, *flags, *args, f"file://{page}"], capture_output=True, text=True, timeout=60)


def _console(done: subprocess.CompletedProcess) -> list[str]:
    return [line for line in done.stderr.splitlines() if ":CONSOLE" in line]


@needs_chromium
def test_report_loads_without_console_messages_and_draws_every_link(fit_a_line_job, tmp_path):
    t, roles = fit_a_line_job
    page = tmp_path / "report.html"
    page.write_text(build_report(roles, plan_view(t.plan)))
    done = _chromium(tmp_path, str(page), "--dump-dom")
    assert done.returncode == 0 and _console(done) == []
    visible = [link for link in Page(page.read_text()).data["links"] if "-main-" in link["source"]]
    assert f'data-ready="{len(visible)}"' in done.stdout  # the startup programs are folded
    shot = tmp_path / "shot.png"
    done = _chromium(tmp_path, str(page), f"--screenshot={shot}", "--window-size=1300,900")
    assert done.returncode == 0 and _console(done) == []
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@needs_chromium
def test_clicking_an_op_shows_its_inputs_outputs_and_attributes(fit_a_line_job, tmp_path):
    t, roles = fit_a_line_job
    text = build_report(roles, plan_view(t.plan))
    send = next(o for o, d in Page(text).data["ops"].items() if d["type"] == "send")
    click = f'<script>document.getElementById("{send}").click();</script>'
    page = tmp_path / "clicked.html"
    page.write_text(text.replace("</body>", click + "</body>"))
    done = _chromium(tmp_path, str(page), "--dump-dom")
    assert done.returncode == 0 and _console(done) == []
    panel = done.stdout[done.stdout.index('<aside id="panel"') :]
    assert panel.startswith('<aside id="panel">')  # no longer hidden
    for text_shown in (
        "send",
        "trainer 0 · main program · block 0",
        "fc_0.b_0@GRAD.trainer_0",
        "epmap",
        "127.0.0.1:6174 block 1",
    ):
        assert text_shown in panel
    assert f'id="{send}" tabindex="0"' in done.stdout and "op rpc selected" in done.stdout


def test_a_loops_body_and_its_gradient_block_are_drawn_under_the_ops_that_run_them():
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        layers = fluid.layers
        x = fluid.data("x", [2], "float32")
        x.stop_gradient = False
        i = layers.fill_constant([1], "int64", 0)
        n = layers.fill_constant([1], "int64", 3)
        _, y = layers.while_loop(lambda i, y: layers.less_than(i, n), lambda i, y: [i + 1, y * 2.0], [i, x])
        fluid.gradients(layers.mean(y), x)
    page = Page(build_report([RoleView("trainer 0", "trainer", "", main)]))
    ids = [a.get("id") for tag, a in page.tags if tag in ("li", "div") and a.get("id")]
    runner = {op.type: f"r0-main-b0-o{k}" for k, op in enumerate(main.global_block().ops)}
    for op_type, sub in (("while", 1), ("while_grad", 2)):
        assert ids[ids.index(runner[op_type]) + 1] == f"r0-main-b{sub}"  # the block comes right after its op
    assert sum(1 for tag, a in page.tags if tag == "div" and a.get("id") == "r0-main-b1") == 1
