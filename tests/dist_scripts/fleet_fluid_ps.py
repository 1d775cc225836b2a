"""Seeds 003 and 004's Fluid-era Fleet script, imports changed: seed 001's linear regression, the role
from Fluid's environment variables (PADDLE_TRAINING_ROLE, PADDLE_PSERVER_IPS, ...).

    fleet_fluid_ps.py --out DIR [--strategy config|sync|half_async|async|geo] [--steps N] [--batch B]
                      [--compiled]

`config` hands a DistributeTranspilerConfig to distributed_optimizer (seed 003), the others a
strategy from DistributedStrategyFactory (seed 004). Trainer t feeds samples [t*B, (t+1)*B) of each
global batch through a DataFeeder, runs `fleet.main_program` (with --compiled, seed 004's
`CompiledProgram(fleet.main_program).with_data_parallel(...)` with the strategy's build and execution
strategies, CPU_NUM replicas), and writes DIR/trainer<t>.npz.
"""

import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import fleetgraph as paddle  # noqa: E402
import fleetgraph.fluid as fluid  # noqa: E402
import fleetgraph.fluid.incubate.fleet.base.role_maker as role_maker  # noqa: E402
from fleetgraph.fluid.incubate.fleet.parameter_server.distribute_transpiler import fleet  # noqa: E402
from fleetgraph.fluid.incubate.fleet.parameter_server.distribute_transpiler.distributed_strategy_factory import (  # noqa: E402
    DistributedStrategyFactory,
)


def build(seed: int = 7):
    """Seed 001's network in the current default programs: returns (x, y, avg_cost)."""
    fluid.default_main_program().random_seed = seed
    fluid.default_startup_program().random_seed = seed
    y = fluid.layers.data(name="y", shape=[1], dtype="float32")
    x = fluid.layers.data(name="x", shape=[13], dtype="float32")
    y_predict = fluid.layers.fc(input=x, size=1, act=None)
    avg_cost = fluid.layers.mean(fluid.layers.square_error_cost(input=y_predict, label=y))
    return x, y, avg_cost


def samples(steps: int, rows: int, part: int, parts: int, seed: int = 3):
    """A reader of (x, y) samples: this part's rows of each of `steps` global batches of `rows`."""

    def reader():
        rng = np.random.default_rng(seed)
        for _ in range(steps):
            x = rng.normal(size=(rows, 13)).astype("float32")
            y = (x.sum(axis=1, keepdims=True) * 0.3 + 1).astype("float32")
            size = rows // parts
            for i in range(part * size, (part + 1) * size):
                yield x[i], y[i]

    return reader


def strategy_for(name: str):
    if name == "config":
        config = fluid.DistributeTranspilerConfig()
        config.sync_mode = True
        return config
    if name == "geo":
        return DistributedStrategyFactory.create_geo_strategy(update_frequency=3)
    return getattr(DistributedStrategyFactory, f"create_{name}_strategy")()


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--strategy", default="config", choices=["config", "sync", "half_async", "async", "geo"])
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--compiled", action="store_true")
    args = p.parse_args()

    x, y, avg_cost = build()
    role = role_maker.PaddleCloudRoleMaker()
    fleet.init(role)
    strategy = strategy_for(args.strategy)
    optimizer = fluid.optimizer.SGD(learning_rate=0.05)
    optimizer = fleet.distributed_optimizer(optimizer, strategy)
    optimizer.minimize(avg_cost)

    place = fluid.CPUPlace()
    exe = fluid.Executor(place)
    if fleet.is_server():
        fleet.init_server()
        fleet.run_server()

    if fleet.is_worker():
        fleet.init_worker()
        feeder = fluid.DataFeeder(place=place, feed_list=[x, y])
        trainer_id, trainers = fleet.worker_index(), fleet.worker_num()
        reader = samples(args.steps, args.batch * trainers, trainer_id, trainers)
        exe.run(fleet.startup_program)
        program = fleet.main_program
        if args.compiled:
            program = fluid.compiler.CompiledProgram(fleet.main_program).with_data_parallel(
                loss_name=avg_cost.name,
                build_strategy=strategy.get_build_strategy(),
                exec_strategy=strategy.get_execute_strategy(),
            )
        losses = []
        for data in paddle.batch(reader, batch_size=args.batch)():
            (loss,) = exe.run(program, feed=feeder.feed(data), fetch_list=[avg_cost])
            losses.append(float(np.asarray(loss).reshape(-1)[0]))
        scope = fluid.global_scope()
        params = {v.name: np.array(scope.vars[v.name]) for v in fleet.main_program.all_parameters()}
        np.savez(os.path.join(args.out, f"trainer{trainer_id}.npz"), losses=np.array(losses), **params)
        fleet.stop_worker()
        replicas = f", {program.replicas} replicas" if args.compiled else ""
        print(f"trainer {trainer_id}: loss {losses[0]:.4f} -> {losses[-1]:.4f}{replicas}")


if __name__ == "__main__":
    main()
