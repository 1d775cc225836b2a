"""Parameter-server training of sampled losses (nce, hsigmoid) and of an LSTM, as real processes on
127.0.0.1, against a single process on the whole batch as the oracle."""

from __future__ import annotations

import numpy as np
import pytest
from dist_scripts.ps_train import build
from models import global_batches
from test_ps_runtime import _table_from_pservers, run_cluster, single_process

from fleetgraph.ir.program import VarType
from fleetgraph.transpiler import DistributeTranspiler, DistributeTranspilerConfig

SAMPLED = [f"w2v_{loss}{sparse}" for loss in ("nce", "hsigmoid") for sparse in ("", "_sparse")]


@pytest.mark.parametrize("model", SAMPLED)
def test_sync_training_of_a_sampled_loss_equals_single_process_on_the_whole_batch(tmp_path, model):
    """2 pservers x 2 trainers x batch B == one process x 2B. Sparse: the embedding is a distributed
    table (the pservers hold it, a row created once an id touches it) and the loss's weight, which
    the trainers hold, takes SelectedRows gradients of the classes a batch reached."""
    steps, batch = 8, 16
    saves: dict = {}
    args = ["--model", model, "--optimizer", "adam", "--steps", str(steps), "--batch", str(batch)]
    trained, _ = run_cluster(tmp_path, 2, 2, args, pserver_saves=saves)
    want, losses = single_process(model, "adam", steps, 2 * batch)
    assert losses[-1] < losses[0]
    on_pservers = {"w2v_table"} if model.endswith("_sparse") else set()
    if on_pservers:
        table, created = _table_from_pservers(saves, "w2v_table")
        np.testing.assert_allclose(table, want["w2v_table"], atol=1e-5)
        touched = np.unique(np.concatenate([f["ids"] for f in global_batches(model, steps, 2 * batch)]))
        assert created == len(touched)  # a row exists only once an id touched it
    for t in (0, 1):
        for name, value in want.items():
            if name in on_pservers:
                assert name not in trained[t]  # the trainers never held it
                continue
            np.testing.assert_allclose(trained[t][name], value, atol=1e-5, err_msg=f"trainer {t} {name}")


UNSYNCED = [("geo", m) for m in SAMPLED] + [("async", m) for m in SAMPLED if m.endswith("_sparse")]


@pytest.mark.parametrize("mode, model", UNSYNCED, ids=[f"{mode}-{m}" for mode, m in UNSYNCED])
def test_geo_and_async_training_of_a_sampled_loss_lowers_the_loss(tmp_path, mode, model):
    """2 pservers x 2 trainers, GEO pushing every 3 steps, or async: each trainer's mean loss over
    its last 10 steps is below 0.7x its first 3 steps' (how far below varies from run to run: the
    trainers' pushes and pulls interleave as they happen)."""
    steps, batch = 40, 16
    args = ["--model", model, "--optimizer", "adam", "--mode", mode, "--k_steps", "3"]
    trained, _ = run_cluster(tmp_path, 2, 2, [*args, "--steps", str(steps), "--batch", str(batch)])
    for t in (0, 1):
        losses = trained[t]["losses"]
        assert losses[-10:].mean() < 0.7 * losses[:3].mean(), (t, losses)


def test_a_geo_pserver_takes_a_sparse_gradient_weights_change_dense_and_a_tables_as_rows():
    """GEO trainers push a parameter's change, not its gradient: nce's weight (SelectedRows
    gradients, held by the trainers) moves whole between pushes, so its pserver takes the change
    dense; only a table's change comes as the rows touched."""
    main, startup, _, _ = build("w2v_nce_sparse", "adam")
    config = DistributeTranspilerConfig()
    config.geo_sgd_mode, config.geo_sgd_need_push_nums = True, 3
    t = DistributeTranspiler(config)
    eps = ["127.0.0.1:6170", "127.0.0.1:6171"]
    t.transpile(0, program=main, pservers=",".join(eps), trainers=2, sync_mode=False, startup_program=startup)
    assert t.plan.param("nce_0.w_0").sparse and len(t.plan.param("nce_0.w_0").blocks) == 2
    types = {}
    for ep in eps:
        block = t.get_pserver_programs(ep)[0].global_block()
        types.update({name: v.type for name, v in block.vars.items() if name.endswith(".delta")})
    assert types == {
        **{f"nce_0.w_0.block{i}.delta": VarType.DENSE_TENSOR for i in (0, 1)},
        **{f"w2v_table.block{i}.delta": VarType.SELECTED_ROWS for i in (0, 1)},
        **{f"{p}.delta": VarType.DENSE_TENSOR for p in ("fc_0.w_0", "fc_0.b_0", "nce_0.b_0")},
    }
