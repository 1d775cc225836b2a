"""fluid.dygraph's data parallelism (Paddle 1.8): two trainer processes that scale the loss and apply
the collective gradients end equal to one process training on the whole batch; alone, the steps
change nothing. Run as a script, this file is one trainer: argv = out.npz steps."""

from __future__ import annotations

import os
import sys

import numpy as np

STEPS = 4


def _batches(steps, size=8):
    rng = np.random.default_rng(5)
    for _ in range(steps):
        yield rng.normal(size=(size, 4)).astype("float32"), rng.normal(size=(size, 1)).astype("float32")


def train(steps, rank=0, nranks=1):
    """Paddle 1.8's recipe; every trainer starts from one seed. The parameters at the end."""
    import fleetgraph.fluid as fluid

    dygraph = fluid.dygraph
    with dygraph.guard():
        fluid.default_startup_program().random_seed = 7
        strategy = dygraph.prepare_context()
        model = dygraph.Sequential(dygraph.Linear(4, 8, act="tanh"), dygraph.Linear(8, 1))
        model = dygraph.DataParallel(model, strategy) if strategy is not None else model
        sgd = fluid.optimizer.SGD(0.1, parameter_list=model.parameters())
        for x, y in _batches(steps):
            part = slice(rank * len(x) // nranks, (rank + 1) * len(x) // nranks)
            out = model(dygraph.to_variable(x[part]))
            loss = fluid.layers.reduce_mean(fluid.layers.square(out - dygraph.to_variable(y[part])))
            if strategy is not None:
                loss = model.scale_loss(loss)
                loss.backward()
                model.apply_collective_grads()
            else:
                loss.backward()
            sgd.minimize(loss)
            model.clear_gradients()
        return {f"p{i}": p.numpy() for i, p in enumerate(model.parameters())}


def test_two_trainers_end_equal_to_one_process_on_the_whole_batch(tmp_path):
    from dist_helpers import ProcessGroup, assert_all_exit_zero, endpoints
    from dygraph_helpers import fresh_mode_and_names  # noqa: F401

    eps = endpoints(2)
    with ProcessGroup(timeout=60) as group:
        for rank in range(2):
            env = {
                "PADDLE_TRAINER_ID": str(rank),
                "PADDLE_TRAINERS_NUM": "2",
                "PADDLE_TRAINER_ENDPOINTS": ",".join(eps),
                "PADDLE_CURRENT_ENDPOINT": eps[rank],
            }
            group.start(f"rank{rank}", [os.path.abspath(__file__), str(tmp_path / f"r{rank}.npz"), str(STEPS)], env=env)
        assert_all_exit_zero(group.wait())
    ranks = [dict(np.load(tmp_path / f"r{rank}.npz")) for rank in range(2)]
    oracle = train(STEPS)
    for name, want in oracle.items():
        np.testing.assert_array_equal(ranks[0][name], ranks[1][name], err_msg=name)
        np.testing.assert_allclose(ranks[0][name], want, rtol=1e-5, atol=1e-6, err_msg=name)


def test_alone_prepare_context_gives_none_and_the_wrapper_changes_nothing():
    import fleetgraph.fluid as fluid

    dygraph = fluid.dygraph
    with dygraph.guard():
        assert dygraph.prepare_context() is None
        env = dygraph.ParallelEnv()
        assert (env.nranks, env.local_rank, env.dev_id) == (1, 0, 0)
        inner = dygraph.Linear(2, 1)
        model = dygraph.DataParallel(inner)
        x = dygraph.to_variable(np.ones([1, 2], "float32"))
        loss = model.scale_loss(fluid.layers.reduce_sum(model(x)))
        loss.backward()
        model.apply_collective_grads()
        np.testing.assert_allclose(inner.weight.gradient(), np.ones([2, 1]))
        assert list(model.state_dict()) == ["weight", "bias"]


if __name__ == "__main__":
    from fleetgraph.dygraph.parallel import ParallelEnv

    env = ParallelEnv()
    np.savez(sys.argv[1], **train(int(sys.argv[2]), env.rank, env.world_size))
