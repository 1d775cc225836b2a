"""Properties of the parameter-server passes on random small models: every parameter row lives on
exactly one pserver, every program verifies, passes leave their inputs alone and are deterministic."""

from __future__ import annotations

import numpy as np
import pytest

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import Program, program_guard, program_to_json, unique_name, verify
from fleetgraph.transpiler import HashName, RoundRobin
from fleetgraph.transpiler.ps_plan import ASYNC, GEO, HALF_ASYNC, SYNC, make_plan
from fleetgraph.transpiler.ps_pserver import build_pserver_program, build_pserver_startup
from fleetgraph.transpiler.ps_trainer import build_trainer_program, build_trainer_startup

SEEDS = range(30)


def random_case(seed: int):
    """A random MLP (maybe with a sparse embedding in front), optimizer and cluster layout."""
    rng = np.random.default_rng(seed)
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = paddle.static.data(name="x", shape=[None, int(rng.integers(1, 300))])
        h = x
        if rng.random() < 0.3:
            ids = fluid.layers.data(name="ids", shape=[1], dtype="int64")
            emb = fluid.layers.embedding(ids, size=[int(rng.integers(50, 5000)), 4], is_sparse=bool(rng.random() < 0.5))
            h = paddle.concat([h, emb], axis=1)
        for _ in range(int(rng.integers(1, 4))):
            h = paddle.static.nn.fc(h, size=int(rng.integers(1, 200)), activation="relu")
        loss = paddle.mean(paddle.static.nn.fc(h, size=1))
        optimizer = [
            lambda: paddle.optimizer.SGD(0.1),
            lambda: paddle.optimizer.Adam(0.01),
            lambda: paddle.optimizer.Momentum(0.1, weight_decay=0.01),
        ][int(rng.integers(3))]()
        optimizer.minimize(loss)
    n_ps = int(rng.integers(1, 5))
    layout = dict(
        endpoints=[f"127.0.0.1:{7000 + i}" for i in range(n_ps)],
        trainers=int(rng.integers(1, 4)),
        mode=[SYNC, ASYNC, HALF_ASYNC, GEO][int(rng.integers(4))],
        slice_var_up=bool(rng.random() < 0.8),
        min_block_size=[8192, 1000, 64][int(rng.integers(3))],
        split_method=[RoundRobin, HashName][int(rng.integers(2))],
        k_steps=3,
    )
    return main, startup, layout


def build_all(main, startup, layout):
    plan = make_plan(
        main,
        layout["endpoints"],
        layout["trainers"],
        mode=layout["mode"],
        slice_var_up=layout["slice_var_up"],
        min_block_size=layout["min_block_size"],
        split_method=layout["split_method"],
        k_steps=layout["k_steps"],
    )
    trainers = []
    for t in range(layout["trainers"]):
        trainer = build_trainer_program(main, plan, t)
        trainers.append((trainer, build_trainer_startup(startup, trainer, plan, t)))
    pservers = {}
    for ep in layout["endpoints"]:
        ps_main = build_pserver_program(main, plan, ep)
        pservers[ep] = (ps_main, build_pserver_startup(startup, ps_main, plan, ep, main))
    return plan, trainers, pservers


@pytest.mark.parametrize("seed", SEEDS)
def test_every_parameter_row_lives_on_exactly_one_pserver(seed):
    main, startup, layout = random_case(seed)
    plan, _, pservers = build_all(main, startup, layout)
    for p in plan.params:
        covered = np.zeros(p.shape[0], dtype=int)
        for ep, (ps_main, ps_startup) in pservers.items():
            for b in p.blocks:
                held = ps_main.global_block().has_var(b.name)
                assert held == (b.endpoint == ep), (b.name, ep)
                if held:
                    assert ps_main.global_block().var(b.name).shape == b.shape
                    assert b.name in {n for op in ps_startup.global_block().ops for n in op.output_arg_names}
                    covered[b.offset : b.offset + b.rows] += 1
        assert covered.tolist() == [1] * p.shape[0], p.param
        assert len({b.endpoint for b in p.blocks}) == len(p.blocks)  # at most one block per pserver


@pytest.mark.parametrize("seed", SEEDS)
def test_every_transpiled_program_verifies(seed):
    main, startup, layout = random_case(seed)
    _, trainers, pservers = build_all(main, startup, layout)
    for program in [p for pair in trainers for p in pair] + [p for pair in pservers.values() for p in pair]:
        verify(program)


@pytest.mark.parametrize("seed", SEEDS[:10])
def test_passes_leave_their_inputs_unchanged_and_are_deterministic(seed):
    main, startup, layout = random_case(seed)
    before = program_to_json(main), program_to_json(startup)
    first = build_all(main, startup, layout)
    assert (program_to_json(main), program_to_json(startup)) == before
    second = build_all(main, startup, layout)
    dump = lambda built: [program_to_json(p) for pair in built[1] + list(built[2].values()) for p in pair]  # noqa: E731
    assert dump(first) == dump(second)
