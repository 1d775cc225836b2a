"""Data parallelism in one process (seed 004's ParallelExecutor and CompiledProgram): CPU_NUM
replicas, each on a shard of the batch, give the parameters one replica gives on the whole batch."""

from __future__ import annotations

import numpy as np
import pytest
from models import global_batches, mlp, sparse_ctr

import fleetgraph as paddle
import fleetgraph.fluid as fluid
from fleetgraph.ir import FleetgraphError

OPTIMIZERS = {
    "sgd": lambda: fluid.optimizer.SGD(0.05),
    "adam": lambda: paddle.optimizer.Adam(0.01),
    "decay_clip": lambda: paddle.optimizer.Momentum(
        fluid.layers.exponential_decay(0.05, 3, 0.7), momentum=0.9, grad_clip=paddle.nn.ClipGradByGlobalNorm(0.5)
    ),
}


def _train(build, model, steps, rows, parallel=None, fetch="loss"):
    main, startup, *rest = build()
    loss = rest[-1] if model == "sparse" else rest[2]
    scope = paddle.static.Scope()
    exe = fluid.Executor(fluid.CPUPlace())
    exe.run(startup, scope=scope)
    program = main if parallel is None else parallel(main, loss)
    fetched = []
    for feed in global_batches(model, steps, rows):
        fetched.append(exe.run(program, feed=feed, fetch_list=[loss], scope=scope)[0])
    params = {p.name: np.array(scope.vars[p.name]) for p in main.all_parameters()}
    return params, fetched


def _compiled(strategy=None):
    def wrap(main, loss):
        build = fluid.BuildStrategy()
        if strategy is not None:
            build.reduce_strategy = strategy
        exec_strategy = fluid.ExecutionStrategy()
        exec_strategy.num_threads = 2
        return fluid.compiler.CompiledProgram(main).with_data_parallel(
            loss_name=loss.name, build_strategy=build, exec_strategy=exec_strategy
        )

    return wrap


@pytest.mark.parametrize("optimizer", sorted(OPTIMIZERS))
@pytest.mark.parametrize("strategy", ["AllReduce", "Reduce"])
def test_two_replicas_equal_one_on_the_whole_batch(monkeypatch, optimizer, strategy):
    monkeypatch.setenv("CPU_NUM", "2")
    build = lambda: mlp(OPTIMIZERS[optimizer], hidden=(16,), seed=4)  # noqa: E731
    want, losses = _train(build, "mlp", 5, 16)
    got, fetched = _train(build, "mlp", 5, 16, _compiled(getattr(fluid.BuildStrategy.ReduceStrategy, strategy)))
    for name, value in want.items():
        np.testing.assert_allclose(got[name], value, rtol=1e-5, atol=1e-6, err_msg=name)
    assert fetched[0].shape == (2,)  # one loss per replica, concatenated as Paddle's merged fetch
    np.testing.assert_allclose(fetched[0].mean(), losses[0][0], rtol=1e-5)


def test_sparse_gradients_average_over_replicas(monkeypatch):
    monkeypatch.setenv("CPU_NUM", "2")
    build = lambda: sparse_ctr(lambda: fluid.optimizer.Adagrad(0.1), seed=2)  # noqa: E731
    want, _ = _train(build, "sparse", 4, 16)
    got, _ = _train(build, "sparse", 4, 16, _compiled())
    for name, value in want.items():
        np.testing.assert_allclose(got[name], value, rtol=1e-5, atol=1e-6, err_msg=name)


def test_parallel_executor_runs_seed_004s_passage(monkeypatch):
    monkeypatch.setenv("CPU_NUM", "2")
    main, startup, _, _, avg_cost, _ = mlp(lambda: fluid.optimizer.SGD(0.05), hidden=(16,), seed=4)
    exe = fluid.Executor(fluid.CPUPlace())
    scope = paddle.static.Scope()
    exe.run(startup, scope=scope)
    exec_strategy = fluid.ExecutionStrategy()
    exec_strategy.num_threads = 8
    build_strategy = fluid.BuildStrategy()
    build_strategy.reduce_strategy = fluid.BuildStrategy.ReduceStrategy.Reduce
    pe = fluid.ParallelExecutor(
        use_cuda=False,
        loss_name=avg_cost.name,
        main_program=main,
        build_strategy=build_strategy,
        exec_strategy=exec_strategy,
        scope=scope,
    )
    assert pe.device_count == 2
    losses = [float(pe.run(fetch_list=[avg_cost.name], feed=f)[0].mean()) for f in global_batches("mlp", 8, 16)]
    assert losses[-1] < losses[0]


def test_a_list_of_feeds_gives_each_replica_its_own(monkeypatch):
    monkeypatch.setenv("CPU_NUM", "2")
    build = lambda: mlp(OPTIMIZERS["sgd"], hidden=(16,), seed=4)  # noqa: E731
    main, startup, _, _, loss, _ = build()
    scope = paddle.static.Scope()
    exe = fluid.Executor()
    exe.run(startup, scope=scope)
    feed = next(global_batches("mlp", 1, 16))
    halves = [{k: v[:8] for k, v in feed.items()}, {k: v[8:] for k, v in feed.items()}]
    got = exe.run(_compiled()(main, loss), feed=halves, fetch_list=[loss], scope=scope)[0]
    assert got.shape == (2,)


def test_a_batch_smaller_than_the_replicas_is_one_clear_error(monkeypatch):
    monkeypatch.setenv("CPU_NUM", "4")
    main, startup, _, _, loss, _ = mlp(OPTIMIZERS["sgd"], hidden=(16,), seed=4)
    exe = fluid.Executor()
    scope = paddle.static.Scope()
    exe.run(startup, scope=scope)
    feed = {k: v[:3] for k, v in next(global_batches("mlp", 1, 16)).items()}
    with pytest.raises(FleetgraphError, match="feed 'image' holds 3 rows, fewer than the 4 replicas"):
        exe.run(_compiled()(main, loss), feed=feed, fetch_list=[loss], scope=scope)


def test_cpu_num_must_be_a_positive_count(monkeypatch):
    from fleetgraph.executor.parallel import cpu_num

    monkeypatch.setenv("CPU_NUM", "zero")
    with pytest.raises(FleetgraphError, match="CPU_NUM='zero': expected a positive number of replicas"):
        cpu_num()


def test_use_cuda_is_one_clear_error():
    with pytest.raises(FleetgraphError, match="use_cuda=True"):
        fluid.ParallelExecutor(use_cuda=True, loss_name="loss")


def test_compiled_program_of_something_else_is_a_type_error():
    with pytest.raises(TypeError, match="CompiledProgram: expected a Program, got str"):
        fluid.compiler.CompiledProgram("main")


def test_a_strategy_carries_paddles_five_configs(monkeypatch):
    monkeypatch.setenv("CPU_NUM", "3")
    from fleetgraph.fluid.incubate.fleet.parameter_server.distribute_transpiler import (
        ServerRuntimeConfig,
        TrainerRuntimeConfig,
    )
    from fleetgraph.fluid.incubate.fleet.parameter_server.distribute_transpiler.distributed_strategy_factory import (
        DistributedStrategyFactory,
    )

    strategy = DistributedStrategyFactory.create_async_strategy()
    assert isinstance(strategy.get_build_strategy(), fluid.BuildStrategy)
    assert strategy.get_execute_strategy().num_threads == 3
    assert isinstance(strategy.get_trainer_runtime_config(), TrainerRuntimeConfig)
    assert strategy.get_trainer_runtime_config().runtime_configs["communicator_send_queue_size"] == "3"
    assert isinstance(strategy.get_server_runtime_config(), ServerRuntimeConfig)
    strategy.set_build_strategy({"reduce_strategy": fluid.BuildStrategy.ReduceStrategy.Reduce})
    assert strategy.get_build_strategy().reduce_strategy == fluid.BuildStrategy.ReduceStrategy.Reduce
    strategy.set_trainer_runtime_config({"communicator_send_queue_size": "20"})
    assert strategy.get_trainer_runtime_config().get_communicator_flags()["communicator_send_queue_size"] == "20"
    with pytest.raises(FleetgraphError, match="BuildStrategy has no 'reduce_stratgy'; did you mean 'reduce_strategy'"):
        strategy.set_build_strategy({"reduce_stratgy": 1})
