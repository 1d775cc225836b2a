"""A two-rank model-parallel job with paddle.distributed.split, the way Paddle 2.0's
collective_*_api.py scripts build theirs: fleet.init(is_collective=True), each rank's weight part
given by a NumpyArrayInitializer of its slice of one seeded full weight.

    model_parallel_split.py --out DIR [--steps N]

The model: ids -> parallel embedding (7 x 4, not divisible by 2) -> column-parallel linear 8 -> 6
(gather_out=False) -> tanh -> row-parallel linear 6 -> 5 (gather_out, with bias) -> column-parallel
linear 5 -> 4 (gather_out) -> tanh -> an ordinary linear 4 -> 1 -> mean squared error. Every rank
feeds the same batch and trains with Fleet's SGD; rank r writes DIR/rank<r>.npz (losses, its
parameters by role, the names of its programs' ops and broadcasts) and DIR/rank<r>.json (the
errors split gave for num_partitions other than the job's size).
"""

import argparse
import json
import os

import numpy as np

import fleetgraph as paddle
import fleetgraph.distributed.fleet as fleet

VOCAB, DIM, HIDDEN, ROWS, COLS, BATCH, LR = 7, 4, 6, 5, 4, 6, 0.1


def full_weights() -> dict[str, np.ndarray]:
    """The unsplit model's initial parameters (and the two ranks' padding rows)."""
    rng = np.random.default_rng(2020)
    shapes = {
        "emb": (VOCAB, DIM), "pad": (2, DIM), "col1_w": (2 * DIM, HIDDEN), "col1_b": (HIDDEN,),
        "row_w": (HIDDEN, ROWS), "row_b": (ROWS,), "col2_w": (ROWS, COLS), "col2_b": (COLS,),
        "fc_w": (COLS, 1), "fc_b": (1,),
    }  # fmt: skip
    return {k: rng.uniform(-0.5, 0.5, size=s).astype("float32") for k, s in shapes.items()}


def batches(steps: int):
    """The same feed on every rank: every id of the vocabulary appears in each batch."""
    rng = np.random.default_rng(7)
    for _ in range(steps):
        ids = np.concatenate([np.arange(VOCAB), rng.integers(0, VOCAB, size=2 * BATCH - VOCAB)])
        yield {
            "ids": rng.permutation(ids).reshape(BATCH, 2).astype("int64"),
            "y": rng.uniform(-1, 1, size=(BATCH, 1)).astype("float32"),
        }


def rank_parts(rank: int) -> dict[str, np.ndarray]:
    """Rank `rank`'s part of each split weight, as Paddle 2.0's split lays them out for 2 ranks."""
    w = full_weights()
    cols1, cols2, rows = slice(rank * 3, rank * 3 + 3), slice(rank * 2, rank * 2 + 2), slice(rank * 3, rank * 3 + 3)
    vocab = slice(0, 4) if rank == 0 else slice(4, VOCAB)  # ceil(7 / 2) = 4 rows, the last rank the rest
    return {
        "emb": np.concatenate([w["emb"][vocab], w["pad"][rank : rank + 1]]),  # its rows, then its padding row
        "col1_w": w["col1_w"][:, cols1], "col1_b": w["col1_b"][cols1],
        "row_w": w["row_w"][rows], "row_b": w["row_b"],
        "col2_w": w["col2_w"][:, cols2], "col2_b": w["col2_b"][cols2],
        "fc_w": w["fc_w"], "fc_b": w["fc_b"],
    }  # fmt: skip


def _attr(value):
    return paddle.ParamAttr(initializer=paddle.nn.initializer.Assign(value))


def build(rank: int):
    """The split model; returns (loss, {role: parameter name})."""
    part, split = rank_parts(rank), paddle.distributed.split
    ids = paddle.static.data("ids", [BATCH, 2], "int64")
    y = paddle.static.data("y", [BATCH, 1], "float32")
    emb = split(ids, (VOCAB, DIM), "embedding", num_partitions=2, weight_attr=_attr(part["emb"]))
    emb = paddle.reshape(emb, [BATCH, 2 * DIM])
    h = split(emb, (2 * DIM, HIDDEN), "linear", axis=1, num_partitions=2, gather_out=False,
              weight_attr=_attr(part["col1_w"]), bias_attr=_attr(part["col1_b"]))  # fmt: skip
    r = split(paddle.tanh(h), (HIDDEN, ROWS), "linear", axis=0, num_partitions=2,
              weight_attr=_attr(part["row_w"]), bias_attr=_attr(part["row_b"]))  # fmt: skip
    c = split(r, (ROWS, COLS), "linear", axis=1, num_partitions=2,
              weight_attr=_attr(part["col2_w"]), bias_attr=_attr(part["col2_b"]))  # fmt: skip
    fc = paddle.nn.Linear(COLS, 1, weight_attr=_attr(part["fc_w"]), bias_attr=_attr(part["fc_b"]))
    loss = paddle.mean(paddle.square(fc(paddle.tanh(c)) - y))
    params = paddle.static.default_main_program().all_parameters()
    roles = ["emb", "col1_w", "col1_b", "row_w", "row_b", "col2_w", "col2_b", "fc_w", "fc_b"]
    return loss, dict(zip(roles, [p.name for p in params]))


def refusals() -> dict[str, str]:
    """split's error for num_partitions other than this job's two ranks."""
    found = {}
    for n in (1, 3):
        with paddle.static.program_guard(paddle.static.Program(), paddle.static.Program()):
            x = paddle.static.data("x", [2, 4], "float32")
            try:
                paddle.distributed.split(x, (4, 6), "linear", axis=1, num_partitions=n)
            except ValueError as e:
                found[str(n)] = str(e)
    return found


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--steps", type=int, default=4)
    args = p.parse_args()

    paddle.enable_static()
    fleet.init(is_collective=True)
    rank = fleet.worker_index()
    loss, names = build(rank)
    fleet.distributed_optimizer(paddle.optimizer.SGD(LR)).minimize(loss)

    exe = paddle.static.Executor(paddle.CPUPlace())
    startup, main_program = paddle.static.default_startup_program(), paddle.static.default_main_program()
    exe.run(startup)
    losses = [float(exe.run(main_program, feed=f, fetch_list=[loss.name])[0]) for f in batches(args.steps)]
    fleet.barrier_worker()
    scope = paddle.static.global_scope()
    ops = [op.type for op in main_program.global_block().ops]
    broadcast = [op.input("X")[0] for op in startup.global_block().ops if op.type == "c_broadcast"]
    reduced = [op.input("X")[0] for op in main_program.global_block().ops if op.type == "c_allreduce_sum"]
    np.savez(
        os.path.join(args.out, f"rank{rank}.npz"),
        losses=np.array(losses),
        **{role: np.array(scope.vars[name]) for role, name in names.items()},
    )
    info = {"ops": ops, "broadcast": broadcast, "reduced": reduced, "names": names, "refusals": refusals()}
    with open(os.path.join(args.out, f"rank{rank}.json"), "w") as f:
        json.dump(info, f)
    print(f"rank {rank}: loss {losses[0]:.4f} -> {losses[-1]:.4f}")


if __name__ == "__main__":
    main()
