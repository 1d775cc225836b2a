"""All-reduce between two processes on 127.0.0.1: fleetgraph's ring on both its transports (shared
memory, what ranks on one host use, and TCP, what ranks on several hosts use), and torch.distributed's
gloo side by side when an interpreter with torch is given. Prints figures; asserts nothing.

    python bench/comm.py                                            # the ring, and memcpy
    python bench/comm.py --torch-python PYTHON_WITH_TORCH             # and gloo, in the same run

Figures: the time of one all-reduce of 4 KB .. 64 MB of float32 (median of 5 samples, a sample
averaging enough back-to-back all-reduces to move about 8 MB) and its bandwidth, bytes / time, for
both; a NumPy memcpy of the same sizes for scale; the 161 gradients of ResNet-50 (25.6M float32)
all-reduced one by one, and in 32 MB buckets (one contiguous buffer per bucket, the gradients views
of it); then the parameter-server push + pull figures of bench/ps_push_pull.py. Both backends'
workers stay up for the whole run and take turns sample by sample, so that whatever else the machine
is doing falls on both alike.
"""

from __future__ import annotations

import argparse
import os
import selectors
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
KB, MB = 1024, 1024 * 1024
SIZES = [4 * KB, 64 * KB, 1 * MB, 4 * MB, 16 * MB, 64 * MB]
REPEATS = 5
BUCKET_BYTES = 32 * MB
SAMPLE_BYTES = 8 * MB  # a sample of a small size repeats the all-reduce until this much is reduced
WARMUP = 2
ANSWER_TIMEOUT_S = 300


def resnet50_param_shapes() -> list[list[int]]:
    """ResNet-50's trainable parameters in creation order (copied from tests/test_fuse_allreduce.py,
    which this script cannot import where only torch is installed)."""
    shapes: list[list[int]] = []

    def conv_bn(out_c: int, in_c: int, k: int) -> None:
        shapes.extend([[out_c, in_c, k, k], [out_c], [out_c]])

    conv_bn(64, 3, 7)
    in_c = 64
    for mid, blocks in ((64, 3), (128, 4), (256, 6), (512, 3)):
        for b in range(blocks):
            conv_bn(mid, in_c, 1)
            conv_bn(mid, mid, 3)
            conv_bn(mid * 4, mid, 1)
            if b == 0:
                conv_bn(mid * 4, in_c, 1)
            in_c = mid * 4
    return shapes + [[2048, 1000], [1000]]


def grad_sizes() -> list[int]:
    """Element counts of the gradients in the order backward produces them (last parameter first)."""
    sizes = []
    for shape in reversed(resnet50_param_shapes()):
        n = 1
        for d in shape:
            n *= d
        sizes.append(n)
    return sizes


def buckets(sizes: list[int], limit: int = BUCKET_BYTES, itemsize: int = 4) -> list[list[int]]:
    """Consecutive gradients grouped greedily up to `limit` bytes, as fuse_allreduce plans them."""
    groups: list[list[int]] = []
    used = 0
    for n in sizes:
        if groups and used + n * itemsize <= limit:
            groups[-1].append(n)
            used += n * itemsize
        else:
            groups.append([n])
            used = n * itemsize
    return groups


def iterations(nbytes: int) -> int:
    return max(1, min(200, SAMPLE_BYTES // max(nbytes, 1)))


# -- workers: one process per rank, answering one sample per command on stdin -------------------


class Workload:
    """The arrays of one rank, and one timed sample of each measurement."""

    def __init__(self, zeros, allreduce, barrier) -> None:
        self.zeros, self.allreduce, self.barrier = zeros, allreduce, barrier
        self.arrays: dict[int, object] = {}
        self.grads = [zeros(n) for n in grad_sizes()]
        self.fused = []
        for group in buckets(grad_sizes()):
            buffer = zeros(sum(group))
            offsets = [sum(group[:i]) for i in range(len(group))]
            views = [buffer[a : a + n] for a, n in zip(offsets, group)]  # the gradients, living in the buffer
            self.fused.append((buffer, views))

    def step(self, what: str):
        """A function doing the measured work once, and how many times a sample repeats it."""
        if what == "unfused":
            return lambda: [self.allreduce(g) for g in self.grads], 1
        if what == "fused":
            return lambda: [self.allreduce(buffer) for buffer, _ in self.fused], 1
        nbytes = int(what)
        if nbytes not in self.arrays:
            self.arrays[nbytes] = self.zeros(nbytes // 4)
        array = self.arrays[nbytes]
        return lambda: self.allreduce(array), iterations(nbytes)

    def sample(self, what: str) -> float:
        work, count = self.step(what)
        for _ in range(WARMUP):
            work()
        self.barrier()
        start = time.perf_counter()
        for _ in range(count):
            work()
        return (time.perf_counter() - start) / count


def serve(workload: Workload, describe: str) -> None:
    print(f"ready {describe}", flush=True)
    for line in sys.stdin:
        what = line.strip()
        if what == "quit":
            break
        print(f"{workload.sample(what):.9f}", flush=True)


def ring_worker(rank: int, endpoints: list[str], transport: str) -> None:
    sys.path.insert(0, REPO)
    import numpy as np
    import zmq

    from fleetgraph.executor.comm import ring as ring_module

    os.environ["FLEETGRAPH_RING_TRANSPORT"] = "auto" if transport == "shm" else "tcp"
    transport = "tcp" if transport == "tcp+secret" else transport
    context = zmq.Context()
    ring = ring_module.Ring(context, len(endpoints), rank, endpoints, 0)
    try:
        if ring.transport != transport:
            raise RuntimeError(f"the ring came up on {ring.transport}, not {transport}")
        workload = Workload(lambda n: np.zeros(n, np.float32), ring.allreduce, ring.barrier)
        if ring.transport == "shm":
            from fleetgraph.executor.comm import shm

            describe = f"pieces of {shm.SEGMENT_BYTES // MB} MB, POSIX semaphores"
        else:
            from fleetgraph.executor.comm import chunks

            pieces = f"{chunks.MIN_PIECE_BYTES // MB}-{chunks.PIECE_BYTES // MB} MB"
            describe = f"up to {chunks.PIECES_PER_CHUNK} pieces of {pieces} per chunk"
        serve(workload, describe)
        ring.barrier()
    finally:
        ring.close()
        context.term()


def gloo_worker(rank: int, endpoints: list[str]) -> None:
    import torch
    import torch.distributed as dist

    port = endpoints[0].rpartition(":")[2]
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=len(endpoints))
    try:
        workload = Workload(lambda n: torch.zeros(n, dtype=torch.float32), dist.all_reduce, dist.barrier)
        serve(workload, f"torch {torch.__version__}, {torch.get_num_threads()} threads")
        dist.barrier()
    finally:
        dist.destroy_process_group()


# -- the driver ----------------------------------------------------------------------------------


def _free_ports(n: int) -> list[int]:
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


class Pair:
    """The two worker processes of one backend, asked for samples in lockstep."""

    def __init__(self, python: str, backend: str) -> None:
        self.backend = backend
        endpoints = ",".join(f"127.0.0.1:{p}" for p in _free_ports(2))
        env = {k: v for k, v in os.environ.items() if k != "FLEETGRAPH_JOB_SECRET"}
        if backend == "tcp+secret":  # PLAIN on loopback (CURVE, encrypting every byte, between hosts)
            env["FLEETGRAPH_JOB_SECRET"] = "bench secret"
        self.errs = [tempfile.TemporaryFile(mode="w+") for _ in range(2)]  # warnings stay out of the answers
        self.procs = [
            subprocess.Popen(
                [python, os.path.abspath(__file__), "--worker", backend, "--rank", str(r), "--endpoints", endpoints],
                env=dict(env, PYTHONUNBUFFERED="1"),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self.errs[r],
                text=True,
                start_new_session=True,
            )
            for r in range(2)
        ]
        try:
            self.describe = self._answers()[0].removeprefix("ready ")
        except BaseException:
            self.close(kill=True)
            raise

    def ask(self, what: str) -> float:
        for proc in self.procs:
            proc.stdin.write(what + "\n")
            proc.stdin.flush()
        return float(self._answers()[0])

    def _answers(self) -> list[str]:
        """One line from each worker (rank 0's first), or an error showing what they printed."""
        answers = []
        for r, proc in enumerate(self.procs):
            with selectors.DefaultSelector() as selector:
                selector.register(proc.stdout, selectors.EVENT_READ)
                ready = selector.select(ANSWER_TIMEOUT_S)
            line = proc.stdout.readline() if ready else ""
            if not line or not (line.startswith("ready") or line[0].isdigit()):
                rest = "" if proc.poll() is None else proc.stdout.read()
                self.errs[r].seek(0)
                rest += self.errs[r].read()
                raise RuntimeError(f"{self.backend} rank {r}: expected a figure, got:\n{line}{rest[-3000:]}")
            answers.append(line.strip())
        return answers

    def close(self, kill: bool = False) -> None:
        """Ask the workers to finish (or kill them right away), and reap them."""
        for proc in self.procs:
            if proc.poll() is None and kill:
                os.killpg(proc.pid, signal.SIGKILL)
            elif proc.poll() is None:
                try:
                    proc.stdin.write("quit\n")
                    proc.stdin.close()
                except OSError:
                    pass
        deadline = time.monotonic() + 30
        for proc in self.procs:
            try:
                proc.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def measure(pairs: dict[str, Pair]) -> dict[str, dict[str, float]]:
    """{backend: {measurement: median seconds}}, the backends taking turns sample by sample."""
    samples: dict[str, dict[str, list[float]]] = {name: {} for name in pairs}
    order = list(pairs)
    for what in [str(n) for n in SIZES] + ["unfused", "fused"]:
        for repeat in range(REPEATS):
            for name in order[repeat % len(order) :] + order[: repeat % len(order)]:
                samples[name].setdefault(what, []).append(pairs[name].ask(what))
    return {name: {what: statistics.median(s) for what, s in per.items()} for name, per in samples.items()}


def memcpy_figures() -> dict[str, float]:
    import numpy as np

    figures = {}
    for nbytes in SIZES:
        src, dst = np.ones(nbytes // 4, np.float32), np.zeros(nbytes // 4, np.float32)
        np.copyto(dst, src)
        count, times = iterations(nbytes), []
        for _ in range(REPEATS):
            start = time.perf_counter()
            for _ in range(count):
                np.copyto(dst, src)
            times.append((time.perf_counter() - start) / count)
        figures[str(nbytes)] = statistics.median(times)
    return figures


def _size(nbytes: int) -> str:
    return f"{nbytes // MB} MB" if nbytes >= MB else f"{nbytes // KB} KB"


def _cell(nbytes: int, seconds: float | None) -> str:
    if seconds is None:
        return f"{'-':>20}"
    return f"{seconds * 1e3:8.3f} ms {nbytes / seconds / 1e9:6.2f} GB/s"


LABELS = {"shm": "ring, shared memory", "tcp": "ring, TCP", "tcp+secret": "TCP, job secret", "gloo": "gloo"}


def report(figures: dict, describe: dict, memcpy: dict) -> None:
    names = list(figures)
    gloo = figures.get("gloo")
    print(f"all-reduce of float32, 2 ranks on 127.0.0.1, median of {REPEATS}; bandwidth = bytes / time")
    for name, text in describe.items():
        print(f"  {LABELS[name]}: {text}")
    ratios = [n for n in names if n != "gloo"] if gloo else []
    header = f"{'size':>6}" + "".join(f"  {LABELS[n]:>20}" for n in names)
    header += "".join(f"  {'gloo / ' + n:>10}" for n in ratios) + f"  {'numpy memcpy':>20}"
    print(header)
    for nbytes in SIZES:
        key = str(nbytes)
        line = f"{_size(nbytes):>6}" + "".join(f"  {_cell(nbytes, figures[n][key])}" for n in names)
        line += "".join(f"  {gloo[key] / figures[n][key]:9.2f}x" for n in ratios)
        print(f"{line}  {_cell(nbytes, memcpy[key])}")
    sizes = grad_sizes()
    print(
        f"\nResNet-50 gradients: {len(sizes)} arrays, {sum(sizes) / 1e6:.1f}M float32 = {sum(sizes) * 4 / MB:.1f} MiB"
    )
    for what, label in (("unfused", "one by one"), ("fused", f"{len(buckets(sizes))} buckets of <= 32 MB")):
        print(f"  {label:<24}" + "".join(f"  {LABELS[n]} {figures[n][what] * 1e3:7.1f} ms" for n in names))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--torch-python", help="an interpreter with torch: also measure gloo")
    parser.add_argument("--worker", choices=list(LABELS), help=argparse.SUPPRESS)
    parser.add_argument("--rank", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--endpoints", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker == "gloo":
        gloo_worker(args.rank, args.endpoints.split(","))
        return
    if args.worker:
        ring_worker(args.rank, args.endpoints.split(","), args.worker)
        return
    memcpy = memcpy_figures()
    pairs: dict[str, Pair] = {}
    try:
        sys.path.insert(0, REPO)
        from fleetgraph.executor.comm import shm

        if shm.available():  # else the ring is TCP only here
            pairs["shm"] = Pair(sys.executable, "shm")
        pairs["tcp"] = Pair(sys.executable, "tcp")
        pairs["tcp+secret"] = Pair(sys.executable, "tcp+secret")
        if args.torch_python:
            pairs["gloo"] = Pair(args.torch_python, "gloo")
        figures = measure(pairs)
    except BaseException:
        for pair in pairs.values():
            pair.close(kill=True)
        raise
    for pair in pairs.values():
        pair.close()
    report(figures, {name: pair.describe for name, pair in pairs.items()}, memcpy)
    print()
    sys.path.insert(0, HERE)
    import ps_push_pull

    ps_push_pull.report()


if __name__ == "__main__":
    main()
