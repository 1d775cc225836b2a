"""One CTR-DNN job of bench/ctr.py, on fleetgraph or on PaddlePaddle: the same code, since the APIs are
the same; only the import differs. Prints one JSON line of figures; asserts nothing.

    ctr_job.py --framework fleetgraph|paddle --how dataset|feed --data DIR [--threads N]
    ctr_job.py --framework ... --how ps --data DIR --strategy sync|async|geo   (a role, under a launcher)

The model is seed 000's CTR-DNN: 26 sparse slots embedded (is_sparse) in one table of
`--dim` rows and sum-pooled, 13 dense features, three ReLU layers of 400, a softmax, cross entropy
(averaged: Paddle 3.3.1's paddle.sum cannot build in its legacy static graph) and auc, SGD. Its inputs
are declared with the batch dimension ([-1, 13], [-1, 1]).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import sys
import time

import numpy as np


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--framework", choices=["fleetgraph", "paddle"], required=True)
    p.add_argument("--how", choices=["dataset", "feed", "ps"], required=True)
    p.add_argument("--data", default="")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--strategy", choices=["sync", "async", "geo"], default="async")
    p.add_argument("--k_steps", type=int, default=100)
    p.add_argument("--dim", type=int, default=10_000_001)
    p.add_argument("--batches", type=int, default=200, help="--how feed: batches of ready feeds")
    return p.parse_args()


def framework(name: str):
    if name == "fleetgraph":
        import fleetgraph as paddle
        import fleetgraph.distributed.fleet as fleet
    else:
        os.environ.setdefault("FLAGS_enable_pir_api", "0")  # the legacy static graph, where is_sparse holds
        import paddle
        import paddle.distributed.fleet as fleet
    paddle.enable_static()
    return paddle, fleet


def build(paddle, dim: int):
    dense = paddle.static.data(name="dense_input", shape=[-1, 13], dtype="float32")
    slots = [paddle.static.data(name=f"C{i}", shape=[-1, 1], lod_level=1, dtype="int64") for i in range(1, 27)]
    label = paddle.static.data(name="label", shape=[-1, 1], dtype="int64")

    def embedding(ids):
        attr = paddle.ParamAttr(name="SparseFeatFactors", initializer=paddle.nn.initializer.Uniform())
        emb = paddle.static.nn.embedding(input=ids, is_sparse=True, size=[dim, 10], param_attr=attr)
        return paddle.reshape(paddle.static.nn.sequence_pool(input=emb, pool_type="sum"), [-1, 10])

    hidden = paddle.concat([embedding(s) for s in slots] + [dense], axis=1)
    for size, act in ((400, "relu"), (400, "relu"), (400, "relu"), (2, "softmax")):
        init = paddle.nn.initializer.Normal(std=1 / math.sqrt(hidden.shape[1]))
        hidden = paddle.static.nn.fc(hidden, size=size, activation=act, weight_attr=paddle.ParamAttr(initializer=init))
    cost = paddle.nn.functional.cross_entropy(input=hidden, label=label, reduction="none", use_softmax=False)
    loss = paddle.mean(cost)
    auc, _, _ = paddle.static.auc(input=hidden, label=label, num_thresholds=2**12, slide_steps=20)
    return [dense] + slots + [label], loss, auc


def dataset(paddle, use_var, files, threads):
    ds = paddle.distributed.QueueDataset()
    ds.init(batch_size=100, thread_num=threads, pipe_command="cat", use_var=use_var)
    ds.set_filelist(files)
    return ds


def lines(files) -> int:
    return sum(1 for f in files for _ in open(f))


def data_files(directory: str) -> list[str]:
    return sorted(os.path.join(directory, f) for f in os.listdir(directory) if f.startswith("part-"))


def local(args, paddle) -> dict:
    use_var, loss, _ = build(paddle, args.dim)
    paddle.optimizer.SGD(learning_rate=1e-4).minimize(loss)
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(paddle.static.default_startup_program())
    main = paddle.static.default_main_program()
    if args.how == "feed":
        feeds = ready_feeds(paddle, args.framework, args.dim)
        for feed in feeds[:5]:
            exe.run(main, feed=feed, fetch_list=[loss])
        started, cpu = time.perf_counter(), time.process_time()
        for i in range(args.batches):
            exe.run(main, feed=feeds[i % len(feeds)], fetch_list=[loss])
        return {"samples": args.batches * 100, **_spent(started, cpu)}
    files = data_files(args.data)
    started, cpu = time.perf_counter(), time.process_time()
    for _ in range(args.epochs):
        exe.train_from_dataset(
            main, dataset(paddle, use_var, files, args.threads), thread=args.threads, print_period=10**9
        )
    return {"samples": lines(files) * args.epochs, **_spent(started, cpu)}


def _spent(started: float, cpu: float) -> dict:
    """Wall and CPU seconds (all the process's threads) since perf_counter read `started`, process_time `cpu`."""
    return {"seconds": time.perf_counter() - started, "cpu_s": time.process_time() - cpu}


def ready_feeds(paddle, name: str, dim: int, count: int = 20) -> list[dict]:
    """Batches of 100 with one id per slot and sample, as LoD tensors of each framework."""
    rng = np.random.default_rng(0)
    feeds = []
    for _ in range(count):
        feed = {"dense_input": rng.random((100, 13)).astype("float32"), "label": rng.integers(0, 2, (100, 1))}
        for i in range(1, 27):
            ids = rng.integers(0, dim, (100, 1)).astype("int64")
            if name == "fleetgraph":
                feed[f"C{i}"] = paddle.fluid.create_lod_tensor(ids, [[1] * 100])
            else:
                t = paddle.base.core.LoDTensor()
                t.set(ids, paddle.CPUPlace())
                t.set_recursive_sequence_lengths([[1] * 100])
                feed[f"C{i}"] = t
        feeds.append(feed)
    return feeds


def parameter_server(args, paddle, fleet) -> dict:
    fleet.init(fleet.PaddleCloudRoleMaker())
    use_var, loss, _ = build(paddle, args.dim)
    strategy = fleet.DistributedStrategy()
    strategy.a_sync = args.strategy != "sync"
    if args.strategy == "geo":
        strategy.a_sync_configs = {"k_steps": args.k_steps}
    optimizer = fleet.distributed_optimizer(paddle.optimizer.SGD(learning_rate=1e-4), strategy)
    optimizer.minimize(loss)
    if fleet.is_server():
        fleet.init_server()
        fleet.run_server()
        return {"role": "server"}
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(paddle.static.default_startup_program())
    fleet.init_worker()  # after the startup program: Paddle 2.6.2 reads the parameters it created
    files = fleet.util.get_file_shard(data_files(args.data))
    started = time.perf_counter()
    for _ in range(args.epochs):
        ds = dataset(paddle, use_var, files, args.threads)
        exe.train_from_dataset(paddle.static.default_main_program(), ds, thread=args.threads, print_period=10**9)
    seconds = time.perf_counter() - started
    fleet.stop_worker()
    return {"role": "worker", "samples": lines(files) * args.epochs, "seconds": seconds}


def main() -> None:
    args = parse_args()
    paddle, fleet = framework(args.framework)
    result = parameter_server(args, paddle, fleet) if args.how == "ps" else local(args, paddle)
    result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result["thread_vars"] = {k: v for k, v in os.environ.items() if k.endswith("_NUM_THREADS")}  # as it ran
    print("CTR_JOB " + json.dumps(result), flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
