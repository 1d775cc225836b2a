"""Fleet in one process: roles from the environment (both spellings), strategies, the transpile
`minimize` does in place for each role, saving and loading, and the Fluid-era import paths. Whole
jobs as real processes are in test_fleet_jobs.py."""

from __future__ import annotations

import json

import numpy as np
import pytest
from models import fit_a_line_2x, global_batches, mlp

import fleetgraph as paddle
import fleetgraph.distributed.fleet as fleet
import fleetgraph.distributed.fleet.base.role_maker as role_maker
from fleetgraph.distributed.role import DEFAULT_COLLECTIVE_ENDPOINT, RoleEnvError
from fleetgraph.fluid.incubate.fleet.parameter_server.distribute_transpiler.distributed_strategy_factory import (
    DistributedStrategyFactory,
)
from fleetgraph.ir import FleetgraphError, Program, op_summary, program_guard, save_arrays, unique_name
from fleetgraph.transpiler import DistributeTranspilerConfig, HashName
from fleetgraph.transpiler.distribute_transpiler import resolve_mode
from fleetgraph.transpiler.ps_plan import ASYNC, GEO, HALF_ASYNC, SYNC

ROLE_VARS = (
    "TRAINING_ROLE",
    "PADDLE_PSERVERS_IP_PORT_LIST",
    "PADDLE_TRAINER_ENDPOINTS",
    "PADDLE_TRAINERS_NUM",
    "PADDLE_TRAINER_ID",
    "PADDLE_PORT",
    "POD_IP",
    "PADDLE_CURRENT_ENDPOINT",
    "PADDLE_TRAINING_ROLE",
    "PADDLE_PSERVER_IPS",
    "PADDLE_PSERVER_PORT",
    "PADDLE_TRAINERS",
    "PADDLE_CURRENT_IP",
)
SERVERS = ["127.0.0.1:6174", "127.0.0.1:6175"]
FLEET_PS = {"PADDLE_PSERVERS_IP_PORT_LIST": ",".join(SERVERS), "PADDLE_TRAINERS_NUM": "2"}
FLUID_PS = {"PADDLE_PSERVER_IPS": "ps0.paddlepaddle.com, ps1.paddlepaddle.com", "PADDLE_TRAINERS": "2"}
FLUID_SERVERS = ("ps0.paddlepaddle.com:6174", "ps1.paddlepaddle.com:6174")
RANKS = {"PADDLE_TRAINER_ENDPOINTS": "127.0.0.1:7000,127.0.0.1:7001", "PADDLE_TRAINERS_NUM": "2"}


@pytest.fixture
def role_env(monkeypatch):
    """Clear every role variable; returns a function that sets some."""
    for name in ROLE_VARS:
        monkeypatch.delenv(name, raising=False)

    def set_env(env: dict) -> None:
        for name, value in env.items():
            monkeypatch.setenv(name, value)

    return set_env


def worker(index=0, workers=2, servers=SERVERS):
    return role_maker.UserDefinedRoleMaker(
        current_id=index, role=role_maker.Role.WORKER, worker_num=workers, server_endpoints=servers
    )


def server(index=0, workers=2, servers=SERVERS):
    return role_maker.UserDefinedRoleMaker(
        current_id=index, role=role_maker.Role.SERVER, worker_num=workers, server_endpoints=servers
    )


def dist_sgd(strategy=None, lr=0.01):
    return fleet.distributed_optimizer(paddle.optimizer.SGD(lr), strategy)


def types(program: Program, block: int = 0) -> list[str]:
    return [op.type for op in program.block(block).ops]


# -- roles from the environment ----------------------------------------------------------------------

ENV_CASES = [
    # (environment, is_collective, (is_worker, index, worker_num, server endpoints, current endpoint))
    ({"TRAINING_ROLE": "TRAINER", "PADDLE_TRAINER_ID": "1", **FLEET_PS}, False, (True, 1, 2, SERVERS, "")),
    (
        {"TRAINING_ROLE": "PSERVER", "POD_IP": "127.0.0.1", "PADDLE_PORT": "6175", **FLEET_PS},
        False,
        (False, 1, 2, SERVERS, "127.0.0.1:6175"),
    ),
    (
        {
            "TRAINING_ROLE": "TRAINER",
            "PADDLE_TRAINER_ID": "1",
            "PADDLE_TRAINER_ENDPOINTS": "10.0.0.1:7000,10.0.0.2:7000",
            **FLEET_PS,
        },
        False,
        (True, 1, 2, SERVERS, "10.0.0.2:7000"),
    ),
    (
        {"PADDLE_TRAINING_ROLE": "TRAINER", "PADDLE_TRAINER_ID": "0", "PADDLE_PSERVER_PORT": "6174", **FLUID_PS},
        False,
        (True, 0, 2, FLUID_SERVERS, ""),
    ),
    (
        {
            "PADDLE_TRAINING_ROLE": "PSERVER",
            "PADDLE_CURRENT_IP": "ps1.paddlepaddle.com",
            "PADDLE_PSERVER_PORT": "6174",
            **FLUID_PS,
        },
        False,
        (False, 1, 2, FLUID_SERVERS, "ps1.paddlepaddle.com:6174"),
    ),
    # seed 001's script defaults the port to 6174; one trainer needs no id
    (
        {"PADDLE_TRAINING_ROLE": "TRAINER", "PADDLE_PSERVER_IPS": "10.0.0.1", "PADDLE_TRAINERS": "1"},
        False,
        (True, 0, 1, ["10.0.0.1:6174"], ""),
    ),
    # the launcher sets both spellings
    (
        {
            "TRAINING_ROLE": "TRAINER",
            "PADDLE_TRAINING_ROLE": "TRAINER",
            "PADDLE_TRAINER_ID": "1",
            **FLEET_PS,
            **FLUID_PS,
        },
        False,
        (True, 1, 2, SERVERS, ""),
    ),
    ({}, True, (True, 0, 1, [], DEFAULT_COLLECTIVE_ENDPOINT)),
    (
        {"PADDLE_TRAINER_ID": "1", "PADDLE_CURRENT_ENDPOINT": "127.0.0.1:7001", **RANKS},
        True,
        (True, 1, 2, [], "127.0.0.1:7001"),
    ),
]


@pytest.mark.parametrize("env, collective, expected", ENV_CASES)
def test_cloud_role_maker_reads_either_spelling(role_env, env, collective, expected):
    role_env(env)
    fleet.init(role_maker.PaddleCloudRoleMaker(is_collective=collective))
    is_worker, index, workers, servers, current = expected
    assert (fleet.is_worker(), fleet.is_server()) == (is_worker, not is_worker)
    assert (fleet.worker_index() if is_worker else fleet.server_index()) == index
    assert fleet.worker_num() == workers
    assert fleet.server_endpoints() == list(servers)
    assert fleet.server_endpoints(to_string=True) == ",".join(servers)
    assert fleet.server_num() == len(servers)
    assert fleet.is_first_worker() == (is_worker and index == 0)
    assert fleet.fleet._role().current_endpoint() == current


def test_collective_init_with_no_environment_is_a_single_rank(role_env):
    fleet.init(is_collective=True)
    assert (fleet.worker_index(), fleet.worker_num(), fleet.worker_endpoints()) == (0, 1, [DEFAULT_COLLECTIVE_ENDPOINT])
    fleet.barrier_worker()  # nobody to wait for


ENV_ERRORS = [
    # (environment, is_collective, the one variable the error names, the example it shows)
    ({}, False, "TRAINING_ROLE is not set", "TRAINING_ROLE=TRAINER"),
    ({"TRAINING_ROLE": "WORKER", **FLEET_PS}, False, "TRAINING_ROLE='WORKER'", "TRAINING_ROLE=TRAINER"),
    (
        {"TRAINING_ROLE": "TRAINER", "PADDLE_TRAINERS_NUM": "2"},
        False,
        "PADDLE_PSERVERS_IP_PORT_LIST is not set",
        "PADDLE_PSERVERS_IP_PORT_LIST=127.0.0.1:6174,127.0.0.1:6175",
    ),
    (
        {"TRAINING_ROLE": "TRAINER", "PADDLE_PSERVERS_IP_PORT_LIST": "127.0.0.1", "PADDLE_TRAINERS_NUM": "2"},
        False,
        "PADDLE_PSERVERS_IP_PORT_LIST='127.0.0.1'",
        "PADDLE_PSERVERS_IP_PORT_LIST=127.0.0.1:6174",
    ),
    (
        {"TRAINING_ROLE": "TRAINER", "PADDLE_PSERVERS_IP_PORT_LIST": ",".join(SERVERS)},
        False,
        "PADDLE_TRAINERS_NUM is not set",
        "PADDLE_TRAINERS_NUM=2",
    ),
    (
        {"TRAINING_ROLE": "TRAINER", **FLEET_PS, "PADDLE_TRAINERS_NUM": "two", "PADDLE_TRAINER_ID": "0"},
        False,
        "PADDLE_TRAINERS_NUM='two': expected a positive integer",
        "e.g. PADDLE_TRAINERS_NUM=2",
    ),
    ({"TRAINING_ROLE": "TRAINER", **FLEET_PS}, False, "PADDLE_TRAINER_ID is not set", "PADDLE_TRAINER_ID=0"),
    (
        {"TRAINING_ROLE": "TRAINER", "PADDLE_TRAINER_ID": "2", **FLEET_PS},
        False,
        "PADDLE_TRAINER_ID='2'",
        "PADDLE_TRAINER_ID=0",
    ),
    ({"TRAINING_ROLE": "PSERVER", "PADDLE_PORT": "6174", **FLEET_PS}, False, "POD_IP is not set", "POD_IP=127.0.0.1"),
    (
        {"TRAINING_ROLE": "PSERVER", "POD_IP": "127.0.0.1", "PADDLE_PORT": "http", **FLEET_PS},
        False,
        "PADDLE_PORT='http'",
        "PADDLE_PORT=6174",
    ),
    (
        {"TRAINING_ROLE": "PSERVER", "POD_IP": "127.0.0.1", "PADDLE_PORT": "7000", **FLEET_PS},
        False,
        "POD_IP:PADDLE_PORT = '127.0.0.1:7000' is not one of PADDLE_PSERVERS_IP_PORT_LIST",
        "e.g. PADDLE_PSERVERS",
    ),
    (
        {"TRAINING_ROLE": "TRAINER", "PADDLE_TRAINING_ROLE": "PSERVER", **FLEET_PS},
        False,
        "disagree",
        "TRAINING_ROLE=TRAINER",
    ),
    (
        {"PADDLE_TRAINING_ROLE": "TRAINER", "PADDLE_TRAINERS": "2", "PADDLE_TRAINER_ID": "0"},
        False,
        "PADDLE_PSERVER_IPS is not set",
        "PADDLE_PSERVER_IPS=ps0.example.com,ps1.example.com",
    ),
    (
        {"PADDLE_TRAINING_ROLE": "TRAINER", "PADDLE_PSERVER_IPS": "a, ,b", "PADDLE_TRAINERS": "2"},
        False,
        "PADDLE_PSERVER_IPS='a, ,b'",
        "PADDLE_PSERVER_IPS=ps0.example.com",
    ),
    (
        {"PADDLE_TRAINING_ROLE": "TRAINER", "PADDLE_PSERVER_PORT": "61740000", **FLUID_PS},
        False,
        "PADDLE_PSERVER_PORT='61740000'",
        "PADDLE_PSERVER_PORT=6174",
    ),
    (
        {"PADDLE_TRAINING_ROLE": "TRAINER", **FLUID_PS, "PADDLE_TRAINERS": "0"},
        False,
        "PADDLE_TRAINERS='0'",
        "PADDLE_TRAINERS=2",
    ),
    (
        {"PADDLE_TRAINING_ROLE": "PSERVER", **FLUID_PS},
        False,
        "PADDLE_CURRENT_IP is not set",
        "PADDLE_CURRENT_IP=ps0.example.com",
    ),
    ({"PADDLE_TRAINERS_NUM": "2"}, True, "PADDLE_TRAINER_ENDPOINTS is not set", "PADDLE_TRAINER_ENDPOINTS=127.0.0.1"),
    ({**RANKS, "PADDLE_TRAINER_ID": "5"}, True, "PADDLE_TRAINER_ID='5'", "PADDLE_TRAINER_ID=0"),
    (
        {**RANKS, "PADDLE_TRAINER_ID": "0", "PADDLE_CURRENT_ENDPOINT": "127.0.0.1:7001"},
        True,
        "PADDLE_CURRENT_ENDPOINT='127.0.0.1:7001'",
        "PADDLE_CURRENT_ENDPOINT=127.0.0.1:6170",
    ),
]


@pytest.mark.parametrize("env, collective, names, example", ENV_ERRORS)
def test_missing_or_malformed_role_variable_is_one_error_naming_it(role_env, env, collective, names, example):
    role_env(env)
    with pytest.raises(RoleEnvError) as info:
        fleet.init(is_collective=collective)
    assert isinstance(info.value, FleetgraphError) and isinstance(info.value, ValueError)
    assert names in str(info.value) and example in str(info.value)


@pytest.mark.parametrize(
    "env, collective, workers",
    [
        (
            {
                "TRAINING_ROLE": "TRAINER",
                "PADDLE_TRAINER_ID": "0",
                "PADDLE_TRAINER_ENDPOINTS": "127.0.0.1:7000",
                **FLEET_PS,
            },
            False,
            2,
        ),
        ({**RANKS, "PADDLE_TRAINERS_NUM": "3", "PADDLE_TRAINER_ID": "0"}, True, 2),
    ],
)
def test_a_trainer_count_disagreeing_with_the_endpoints_warns_and_counts_as_paddle(role_env, env, collective, workers):
    """Paddle's parameter-server role maker takes PADDLE_TRAINERS_NUM and its collective one the
    endpoints, each ignoring the other: a script Paddle runs runs here too, told of the disagreement."""
    role_env(env)
    with pytest.warns(UserWarning, match="PADDLE_TRAINERS_NUM"):
        fleet.init(is_collective=collective)
    assert fleet.worker_num() == workers


def test_user_defined_role_maker_takes_seed_003s_arguments():
    fleet.init(role_maker=worker(index=1, workers=3))
    assert (fleet.is_worker(), fleet.worker_index(), fleet.worker_num(), fleet.server_num()) == (True, 1, 3, 2)
    fleet.init(role_maker=server(index=1))
    assert (fleet.is_server(), fleet.server_index(), fleet.is_first_worker()) == (True, 1, False)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"role": 3}, "role expected Role.WORKER or Role.SERVER"),
        ({"current_id": 2}, "current_id expected an int in [0, 2)"),
        ({"server_endpoints": []}, "server_endpoints is empty"),
        ({"server_endpoints": ["127.0.0.1"]}, "'127.0.0.1' is not ip:port"),
        ({"worker_num": 0}, "worker_num expected a positive int"),
    ],
)
def test_user_defined_role_maker_rejects_bad_arguments(kwargs, message):
    args = {"current_id": 0, "role": role_maker.Role.WORKER, "worker_num": 2, "server_endpoints": SERVERS, **kwargs}
    with pytest.raises(FleetgraphError, match=message.replace("[", r"\[").replace("(", r"\(").replace(")", r"\)")):
        role_maker.UserDefinedRoleMaker(**args)


def test_fleet_needs_init_and_minimize_first(role_env):
    fleet.fleet._role_maker = None
    with pytest.raises(FleetgraphError, match=r"call fleet.init\(\) first"):
        fleet.distributed_optimizer(paddle.optimizer.SGD(0.1))
    fleet.init(worker())
    with pytest.raises(FleetgraphError, match=r"fleet.main_program: call fleet.distributed_optimizer"):
        fleet.main_program  # noqa: B018
    with pytest.raises(FleetgraphError, match="this process is a worker; expected a server"):
        fleet.run_server()


# -- strategies ---------------------------------------------------------------------------------------


def strategy(a_sync=False, **configs):
    s = fleet.DistributedStrategy()
    s.a_sync = a_sync
    if configs:
        s.a_sync_configs = configs
    return s


def fluid_config(**fields):
    config = DistributeTranspilerConfig()
    for key, value in fields.items():
        setattr(config, key, value)
    return config


STRATEGY_MODES = [
    (None, SYNC),
    (strategy(), SYNC),
    (strategy(a_sync=True), ASYNC),
    (strategy(a_sync=True, k_steps=100), GEO),
    (DistributedStrategyFactory.create_sync_strategy(), SYNC),
    (DistributedStrategyFactory.create_half_async_strategy(), HALF_ASYNC),
    (DistributedStrategyFactory.create_async_strategy(), ASYNC),
    (DistributedStrategyFactory.create_geo_strategy(update_frequency=400), GEO),
    (fluid_config(sync_mode=True), SYNC),
    (fluid_config(sync_mode=False), HALF_ASYNC),  # Paddle 1.8: async needs runtime_split_send_recv too
    (fluid_config(sync_mode=False, runtime_split_send_recv=True), ASYNC),
]


@pytest.mark.parametrize("given, mode", STRATEGY_MODES)
def test_strategy_selects_the_parameter_server_mode(given, mode):
    fleet.init(server(index=0))
    fit_a_line_2x(optimizer=dist_sgd(given))
    serve = fleet.main_program.global_block().ops[0]
    assert serve.type == "listen_and_serv" and serve.attrs["distributed_mode"] == mode
    config = fleet.fleet._transpiler.config
    assert resolve_mode(config, None) == mode
    if mode == GEO:
        assert config.geo_sgd_need_push_nums == (100 if isinstance(given, fleet.DistributedStrategy) else 400)


def test_fleet_init_strategy_is_the_default_for_distributed_optimizer():
    fleet.init(server(), strategy=strategy(a_sync=True))
    fit_a_line_2x(optimizer=dist_sgd())
    assert fleet.main_program.global_block().ops[0].attrs["distributed_mode"] == ASYNC


def test_collective_strategy_sets_fusion():
    fleet.init(role_maker.UserDefinedRoleMaker(is_collective=True, worker_num=1))
    s = fleet.DistributedStrategy()
    s.fuse_grad_size_in_MB = 8
    mlp(lambda: dist_sgd(s), hidden=(16,))
    config = fleet.fleet._transpiler.config
    assert (config.mode, config.fuse_all_reduce_ops, config.fuse_grad_size_in_MB) == ("collective", True, 8)


@pytest.mark.parametrize(
    "attr, value, message",
    [
        ("a_snyc", True, "no attribute 'a_snyc'; did you mean 'a_sync'"),
        ("amp", True, "amp: not supported"),
        ("a_sync", "yes", "a_sync: expected True or False"),
        ("a_sync_configs", {"k_step": 3}, "unknown key 'k_step'; did you mean 'k_steps'"),
        ("fuse_grad_size_in_MB", 0, "expected a positive number"),
    ],
)
def test_strategy_rejects_what_it_does_not_implement(attr, value, message):
    with pytest.raises(FleetgraphError, match=message):
        setattr(fleet.DistributedStrategy(), attr, value)


def test_geo_steps_without_a_sync_is_an_error():
    fleet.init(worker())
    with pytest.raises(FleetgraphError, match="k_steps=5 .GEO. needs a_sync=True"):
        fit_a_line_2x(optimizer=dist_sgd(strategy(a_sync=False, k_steps=5)))


def test_fluid_strategy_program_config_can_be_tuned_but_keeps_its_mode():
    s = DistributedStrategyFactory.create_async_strategy()
    s.get_program_config().min_block_size = 81920
    s.set_program_config({"slice_var_up": False, "sync_mode": True})
    config = s.get_program_config()
    assert (config.min_block_size, config.slice_var_up, config.sync_mode) == (81920, False, False)
    with pytest.raises(FleetgraphError, match="no 'min_blok_size'; did you mean 'min_block_size'"):
        s.set_program_config({"min_blok_size": 1})


# -- minimize transpiles in place ----------------------------------------------------------------------


def test_worker_minimize_makes_the_loss_program_the_trainer_program():
    fleet.init(worker(index=1))
    main, startup, *_ = fit_a_line_2x(optimizer=dist_sgd())
    assert fleet.main_program is main and fleet.startup_program is startup
    ops = types(main)
    assert ops.count("send") == 2 and ops[-5:] == ["send", "send_barrier", "recv", "recv", "fetch_barrier"]
    assert "sgd" not in ops  # the servers optimize
    assert types(startup)[-3:] == ["recv", "recv", "fetch_barrier"]
    sends = [op.attrs["send_varnames"] for op in main.global_block().ops if op.type == "send"]
    assert sends == [["fc_0.b_0@GRAD.trainer_1"], ["fc_0.w_0@GRAD.trainer_1"]]


def test_default_main_program_is_the_trainer_program_after_minimize():
    """Seeds 000 and 002 run `default_main_program()` after minimize."""
    fleet.init(worker())
    with program_guard(Program(), Program()), unique_name.guard():
        x = paddle.static.data(name="x", shape=[None, 13], dtype="float32")
        y = paddle.static.data(name="y", shape=[None, 1], dtype="float32")
        loss = paddle.mean(paddle.nn.functional.square_error_cost(paddle.static.nn.fc(x, size=1), y))
        dist_sgd().minimize(loss)
        assert "send" in types(paddle.static.default_main_program())
        assert "recv" in types(paddle.static.default_startup_program())
        assert paddle.static.default_main_program() is fleet.main_program


def test_server_minimize_builds_listen_and_serv_programs():
    fleet.init(server(index=1))
    main, *_ = mlp(lambda: fleet.distributed_optimizer(paddle.optimizer.Adam(0.01)), hidden=(64,))
    assert op_summary(fleet.main_program).splitlines() == ["block0: listen_and_serv"] + [
        f"block{i}: sum scale adam" for i in (1, 2)
    ]
    assert fleet.main_program.global_block().ops[0].attrs["endpoint"] == SERVERS[1]
    assert "recv" not in types(fleet.startup_program)
    # the loss's program is this server's (Paddle puts the listen_and_serv program there)
    assert main is fleet.main_program and types(main) == ["listen_and_serv"]


def test_distribute_transpiler_config_is_accepted_as_the_strategy():
    """Seed 003: `fleet.distributed_optimizer(optimizer, config)`."""
    config = fluid_config(sync_mode=False, slice_var_up=False, split_method=HashName)
    fleet.init(worker())
    main, *_ = mlp(lambda: dist_sgd(config), hidden=(64,))
    ops = types(main)
    assert "send_barrier" not in ops and "split_byref" not in ops and "concat" not in ops
    assert config.mode == "pserver" and fleet.fleet._transpiler.config is not config  # the caller's is untouched


def test_sliced_parameters_are_split_and_concatenated_on_the_worker():
    fleet.init(worker())
    main, *_ = mlp(lambda: dist_sgd(), hidden=(64,))
    assert "split_byref" in types(main) and types(main)[-1] == "concat"


@pytest.mark.parametrize("fuse, expected", [(True, ["coalesce_tensor"]), (False, [])])
def test_collective_minimize_all_reduces_the_gradients(role_env, fuse, expected):
    role_env({**RANKS, "PADDLE_TRAINER_ID": "1", "PADDLE_CURRENT_ENDPOINT": "127.0.0.1:7001"})
    s = fleet.DistributedStrategy()
    s.fuse_all_reduce_ops = fuse
    fleet.init(is_collective=True, strategy=s)
    main, startup, *_ = mlp(lambda: fleet.distributed_optimizer(paddle.optimizer.Momentum(0.01)), hidden=(16,))
    ops = types(main)
    assert [t for t in ops if t == "coalesce_tensor"] == expected
    assert ops.count("c_allreduce_sum") == (1 if fuse else 4) and ops.count("momentum") == 4
    assert types(startup)[0] == "c_comm_init" and types(startup).count("c_broadcast") == 4


def test_single_rank_collective_trains_like_one_process():
    fleet.init(is_collective=True)  # no environment needed: rank 0 of 1
    feeds = list(global_batches("fit_a_line", 5, 8))
    results = []
    for wrap in (lambda opt: opt, lambda opt: fleet.distributed_optimizer(opt)):
        main, startup, _, _, loss = fit_a_line_2x(optimizer=wrap(paddle.optimizer.SGD(0.05)))
        scope, exe = paddle.static.Scope(), paddle.static.Executor()
        exe.run(startup, scope=scope)
        results.append([exe.run(main, feed=f, fetch_list=[loss], scope=scope)[0] for f in feeds])
    np.testing.assert_array_equal(results[0], results[1])


def test_barrier_worker_waits_for_nobody_alone_and_is_a_worker_call():
    fleet.init(worker(workers=1))
    fleet.barrier_worker()
    fleet.init(server())
    with pytest.raises(FleetgraphError, match="fleet.barrier_worker: this process is a server; expected a worker"):
        fleet.barrier_worker()


def test_stop_worker_tells_the_servers(monkeypatch):
    import fleetgraph.executor.comm as comm

    calls = []
    monkeypatch.setattr(comm, "stop_worker", lambda: calls.append("stop"))
    fleet.init(worker())
    fleet.init_worker()
    fleet.stop_worker()
    assert calls == ["stop"]


# -- saving and loading --------------------------------------------------------------------------------


def trained_worker_scope(main, values=None):
    """A scope holding what a worker has after training: every parameter of the trainer program."""
    scope = paddle.static.Scope()
    rng = np.random.default_rng(0)
    for p in main.all_parameters():
        scope.vars[p.name] = (values or {}).get(p.name, rng.normal(size=p.shape).astype(p.dtype))
    return scope


def test_save_inference_model_prunes_the_single_process_program(tmp_path):
    fleet.init(worker())
    with program_guard(Program(), Program()), unique_name.guard():
        x = paddle.static.data(name="x", shape=[None, 13], dtype="float32")
        y = paddle.static.data(name="y", shape=[None, 1], dtype="float32")
        pred = paddle.static.nn.fc(x, size=1)
        loss = paddle.mean(paddle.nn.functional.square_error_cost(pred, y))
        dist_sgd().minimize(loss)
        main = paddle.static.default_main_program()
    scope = trained_worker_scope(main)
    exe = paddle.static.Executor()
    with paddle.static.scope_guard(scope):
        fleet.save_inference_model(exe, str(tmp_path), ["x"], [pred], main_program=fleet.main_program)
    with open(tmp_path / "model.json") as f:
        saved = json.load(f)["program"]
    saved_types = [op["type"] for block in saved["blocks"] for op in block["ops"]]
    assert saved_types == ["mul", "elementwise_add"]
    infer_scope = paddle.static.Scope()
    with paddle.static.scope_guard(infer_scope):
        program, feeds, fetches = paddle.fluid.io.load_inference_model(str(tmp_path), exe)
        x_value = np.ones((2, 13), "float32")
        (out,) = exe.run(program, feed={feeds[0]: x_value}, fetch_list=fetches)
    w, b = scope.vars["fc_0.w_0"], scope.vars["fc_0.b_0"]
    np.testing.assert_allclose(out, x_value @ w + b, rtol=1e-6)


def test_init_server_loads_its_row_blocks_of_the_saved_persistables(tmp_path):
    fleet.init(server(index=0))
    mlp(lambda: fleet.distributed_optimizer(paddle.optimizer.Adam(0.01)), hidden=(64,))
    rng = np.random.default_rng(1)
    saved = {
        "fc_0.w_0": rng.normal(size=(784, 64)).astype("float32"),
        "fc_0.w_0_moment1_0": rng.normal(size=(784, 64)).astype("float32"),
        "fc_0.b_0": rng.normal(size=(64,)).astype("float32"),
        "fc_1.w_0": rng.normal(size=(64, 10)).astype("float32"),
        "fc_1.b_0": rng.normal(size=(10,)).astype("float32"),
    }
    save_arrays(saved, str(tmp_path / "persistables.npz"))
    plan = fleet.fleet._transpiler.plan
    block = next(b for b in plan.param("fc_0.w_0").blocks if b.endpoint == SERVERS[0])
    rows = slice(block.offset, block.offset + block.rows)
    scope = paddle.static.Scope()
    with paddle.static.scope_guard(scope):
        fleet.init_server(str(tmp_path))
    held = [b.name for _, b in plan.blocks_on(SERVERS[0])]
    assert block.name in held and block.offset > 0
    np.testing.assert_array_equal(scope.vars[block.name], saved["fc_0.w_0"][rows])
    np.testing.assert_array_equal(scope.vars[block.sliced("fc_0.w_0_moment1_0")], saved["fc_0.w_0_moment1_0"][rows])
    moment2 = scope.vars[block.sliced("fc_0.w_0_moment2_0")]  # not saved: the startup's zeros stay
    np.testing.assert_array_equal(moment2, np.zeros_like(moment2))
    for name in held:
        if name in saved:
            np.testing.assert_array_equal(scope.vars[name], saved[name])


def test_init_server_without_a_saved_parameter_names_it(tmp_path):
    fleet.init(server(index=0))
    fit_a_line_2x(optimizer=dist_sgd())
    save_arrays({"unrelated": np.zeros(1, "float32")}, str(tmp_path / "persistables.npz"))
    with paddle.static.scope_guard(paddle.static.Scope()):
        with pytest.raises(FleetgraphError, match="no saved value for parameter 'fc_0.b_0'"):
            fleet.init_server(str(tmp_path))
        with pytest.raises(FleetgraphError, match="does not exist"):
            fleet.init_server(str(tmp_path / "missing"))


# -- the Fluid-era import paths ------------------------------------------------------------------------


def test_fluid_import_paths_give_the_same_fleet():
    from fleetgraph.fluid.incubate.fleet import collective
    from fleetgraph.fluid.incubate.fleet.base import role_maker as fluid_role_maker
    from fleetgraph.fluid.incubate.fleet.parameter_server import distribute_transpiler as dt
    from fleetgraph.fluid.incubate.fleet.parameter_server.distribute_transpiler import fleet as fluid_fleet

    assert fluid_fleet is fleet.fleet is collective.fleet
    assert fleet.init.__self__ is fluid_fleet and paddle.distributed.fleet is fleet
    assert fluid_role_maker.PaddleCloudRoleMaker is fleet.PaddleCloudRoleMaker
    assert fluid_role_maker.UserDefinedRoleMaker is fleet.UserDefinedRoleMaker and fluid_role_maker.Role is fleet.Role
    assert dt.distributed_strategy.StrategyFactory is DistributedStrategyFactory
    fluid_fleet.init(fluid_role_maker.UserDefinedRoleMaker(0, fluid_role_maker.Role.WORKER, 2, SERVERS))
    main, *_ = fit_a_line_2x(optimizer=fluid_fleet.distributed_optimizer(paddle.optimizer.SGD(0.1), fluid_config()))
    assert fluid_fleet.main_program is main and fleet.main_program is main


def test_fleet_init_takes_its_role_from_mpi_only_under_an_mpi_launcher():
    from fleetgraph.distributed.fleet.base.role_maker import in_mpi_job

    assert in_mpi_job({"OMPI_COMM_WORLD_SIZE": "4"})
    assert in_mpi_job({"PMI_SIZE": "4"})
    assert not in_mpi_job({})
    # the launcher's or a scheduler's role variables win over MPI's
    assert not in_mpi_job({"OMPI_COMM_WORLD_SIZE": "4", "PADDLE_TRAINING_ROLE": "TRAINER"})


def test_mpi_role_maker_without_mpi4py_says_what_to_install(monkeypatch):
    import sys

    from fleetgraph.distributed.fleet import MPISymetricRoleMaker
    from fleetgraph.ir import FleetgraphError

    monkeypatch.setitem(sys.modules, "mpi4py", None)  # as if not installed
    with pytest.raises(FleetgraphError, match=r"MPISymetricRoleMaker needs mpi4py: pip install 'fleetgraph\[mpi\]'"):
        MPISymetricRoleMaker().generate_role()


def test_slurm_host_lists_and_task_counts_expand_as_slurm_writes_them():
    from fleetgraph.distributed.fleet.base.role_maker import expand_hostlist, tasks_per_node

    assert expand_hostlist("node[01-03,07],gpu1") == ["node01", "node02", "node03", "node07", "gpu1"]
    assert expand_hostlist("rack[1-2]-n[1-2]") == ["rack1-n1", "rack1-n2", "rack2-n1", "rack2-n2"]
    assert tasks_per_node("2(x3),1", 7, 4) == [2, 2, 2, 1]
    assert tasks_per_node("", 5, 2) == [3, 2]
    with pytest.raises(ValueError, match="does not place 4 tasks on 3 nodes"):
        tasks_per_node("2(x2)", 4, 3)


def test_slurm_tasks_pair_up_and_find_every_endpoint_alone():
    from fleetgraph.distributed.fleet import Role, SlurmRoleMaker
    from fleetgraph.distributed.fleet.base.role_maker import in_slurm_job
    from fleetgraph.ir import FleetgraphError

    env = {"SLURM_NTASKS": "4", "SLURM_JOB_NODELIST": "node[1-2]", "SLURM_TASKS_PER_NODE": "2(x2)"}
    roles = []
    for procid in range(4):
        maker = SlurmRoleMaker({**env, "SLURM_PROCID": str(procid)})
        roles.append((maker.is_server(), maker.server_index() if maker.is_server() else maker.worker_index()))
    assert roles == [(True, 0), (False, 0), (True, 1), (False, 1)]
    assert maker.get_pserver_endpoints() == ["node1:6170", "node2:6170"]
    assert maker.get_trainer_endpoints() == ["node1:6171", "node2:6171"]
    assert maker.worker_num() == 2 and maker._role().role == Role.WORKER
    assert in_slurm_job({**env, "SLURM_PROCID": "0"})
    assert not in_slurm_job({**env, "SLURM_PROCID": "0", "TRAINING_ROLE": "TRAINER"})
    with pytest.raises(FleetgraphError, match="expected an even number of tasks"):
        SlurmRoleMaker({**env, "SLURM_NTASKS": "3", "SLURM_TASKS_PER_NODE": "2,1", "SLURM_PROCID": "0"}).generate_role()
    with pytest.raises(FleetgraphError, match="SLURM_JOB_NODELIST"):
        SlurmRoleMaker({"SLURM_PROCID": "0", "SLURM_NTASKS": "2"}).generate_role()
