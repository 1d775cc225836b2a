"""One role of seed 000's CTR-DNN under parameter servers, for the bytes-on-the-wire test.

    ctr_traffic.py pserver ENDPOINT --pservers EPS --dim D
    ctr_traffic.py trainer 0 --pservers EPS --dim D --distinct K1,K2,... --out TRAFFIC.npz

The network is examples/ctr_dnn/network_conf.py's, its table `sparse_feature_dim` = D rows, one
trainer in sync mode. Step s feeds a batch of 100 samples whose 26 slots draw their ids from Ks
distinct ids (all below 1000, so the same ids whatever D); the trainer saves the bytes it sent and
received during each step, the distinct ids of each batch, and what the DistPlan expects.
"""

import argparse
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples", "ctr_dnn"))

from network_conf import ctr_dnn_model_dataset  # noqa: E402

import fleetgraph as paddle  # noqa: E402
import fleetgraph.fluid as fluid  # noqa: E402
from fleetgraph.executor.comm import process_comm  # noqa: E402
from fleetgraph.transpiler import DistributeTranspiler  # noqa: E402

BATCH, SLOTS = 100, 26


def build(dim: int):
    main, startup = paddle.static.Program(), paddle.static.Program()
    main.random_seed = startup.random_seed = 3
    with paddle.static.program_guard(main, startup):
        dense = paddle.static.data(name="dense_input", shape=[-1, 13], dtype="float32")
        slots = [paddle.static.data(name=f"C{i}", shape=[-1, 1], lod_level=1, dtype="int64") for i in range(1, 27)]
        label = paddle.static.data(name="label", shape=[-1, 1], dtype="int64")
        loss, _, _ = ctr_dnn_model_dataset(dense, slots, label, 10, dim)
        paddle.optimizer.SGD(learning_rate=1e-4).minimize(loss)
    return main, startup, loss


def batch(rng: np.random.Generator, distinct: int) -> dict:
    pool = rng.choice(1000, size=distinct, replace=False)
    ids = np.concatenate([pool, rng.choice(pool, size=BATCH * SLOTS - distinct)])  # every pool id appears
    ids = rng.permutation(ids).reshape(SLOTS, BATCH, 1).astype("int64")
    feed = {f"C{i + 1}": fluid.create_lod_tensor(ids[i], [[1] * BATCH], fluid.CPUPlace()) for i in range(SLOTS)}
    feed["dense_input"] = rng.random((BATCH, 13)).astype("float32")
    feed["label"] = rng.integers(0, 2, size=(BATCH, 1)).astype("int64")
    return feed


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("role", choices=["pserver", "trainer"])
    p.add_argument("who")
    p.add_argument("--pservers", required=True)
    p.add_argument("--dim", type=int, required=True)
    p.add_argument("--distinct", default="50")
    p.add_argument("--out", default="")
    args = p.parse_args()

    main_prog, startup, loss = build(args.dim)
    t = DistributeTranspiler()
    t.transpile(0, program=main_prog, pservers=args.pservers, trainers=1, sync_mode=True, startup_program=startup)
    exe = paddle.static.Executor(paddle.CPUPlace())
    if args.role == "pserver":
        ps_main, ps_startup = t.get_pserver_programs(args.who)
        exe.run(ps_startup)
        exe.run(ps_main)
        return
    exe.run(startup)
    trainer_prog = t.get_trainer_program()
    traffic = process_comm().ps_client().traffic
    rng = np.random.default_rng(0)
    per_step, distinct = [], []
    for k in (int(v) for v in args.distinct.split(",")):
        feed = batch(rng, k)
        distinct.append(len(np.unique(np.concatenate([np.asarray(feed[f"C{i + 1}"]) for i in range(SLOTS)]))))
        sent, received, _ = traffic.snapshot()
        exe.run(trainer_prog, feed=feed, fetch_list=[loss])
        now_sent, now_received, _ = traffic.snapshot()
        per_step.append((now_sent - sent, now_received - received))
    exe.close()
    eps = args.pservers.split(",")
    np.savez(
        args.out,
        bytes=np.array(per_step),
        distinct=np.array(distinct),
        plan_per_id=np.array(t.plan.bytes_per_id(eps[0])),  # the ids all fall in the first block
        plan_per_step=np.sum([t.plan.bytes_per_step(ep) for ep in eps], axis=0),
    )


if __name__ == "__main__":
    main()
