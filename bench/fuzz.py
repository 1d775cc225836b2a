"""Malformed messages against live processes: a pserver and a collective ring rank, then the real
job, compared with the same job unfuzzed. Prints figures; asserts nothing (tests/test_wire.py runs
the decoder under hypothesis, tests/test_ps_runtime.py the crash cases, in the suite).

    python bench/fuzz.py [--pserver 100000] [--ring 20000] [--seed 0]

pserver: fit_a_line, 2 pservers x 2 trainers, sync, no job secret (the unauthenticated path, the
widest one). Before the trainers start, pserver 0 gets --pserver messages from several sockets:
random frames; random headers (every field, shapes huge or negative, payloads that disagree);
valid messages with one byte changed; and well-formed requests the program must refuse (wrong
shapes and dtypes, unknown names, another trainer's copy, a send barrier before any gradient, bad
row ids, bad batches). Every message must be answered, and with an error (wire Kind.ERROR): a hang
is a message without an answer after 60 s, and any other answer is counted and the first few shown
with the message that drew it; its RSS is taken before and after; then the trainers train, and their
parameters must equal an unfuzzed run's bit for bit.

ring: 2 ranks all-reducing fit_a_line's gradients, over TCP with a job secret (what the launcher
sets) and over shared memory without one; --ring messages are pushed at rank 0's endpoint while
they train. The ranks must finish with an unfuzzed run's parameters; rank 0's RSS is shown.
"""

from __future__ import annotations

import argparse
import os
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np
from local_jobs import endpoints, rss_mb

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
SCRIPTS = os.path.join(REPO, "tests", "dist_scripts")
PS_TRAIN = os.path.join(SCRIPTS, "ps_train.py")
COLLECTIVE_TRAIN = os.path.join(SCRIPTS, "collective_train.py")
LIVE = (0, 1)
OUTSIDERS = (-1, 2, 7, 2**31 - 1)  # senders that are not training: nothing they send may count
SHOWN = 5  # answers that are not errors, shown with the message that drew them


def _env(**extra: str) -> dict:
    env = dict(os.environ, PYTHONPATH=REPO, FLEETGRAPH_RPC_TIMEOUT="600")
    env.update(extra)
    if "FLEETGRAPH_JOB_SECRET" not in extra:
        env.pop("FLEETGRAPH_JOB_SECRET", None)
    return env


# -- messages ---------------------------------------------------------------------------------------
class Fuzzer:
    def __init__(self, seed: int) -> None:
        from fleetgraph.executor.comm.wire import _FIXED, MAGIC, Kind, encode

        self.rng = np.random.default_rng(seed)
        self.fixed, self.magic, self.Kind, self.encode = _FIXED, MAGIC, Kind, encode
        self.names = ["fc_0.b_0", "fc_0.w_0", "fc_0.b_0@GRAD.trainer_7", "fc_0.b_0@GRAD", "x", "", "é\n"]
        self.bases = [
            [bytes(f) for f in encode(Kind.SEND, "fc_0.b_0@GRAD.trainer_7", np.ones(1, "float32"), sender=7)],
            [bytes(f) for f in encode(Kind.GET, "fc_0.b_0", sender=7, seq=3)],
            [bytes(f) for f in encode(Kind.SEND_BARRIER, sender=7, seq=4)],
            [bytes(f) for f in encode(Kind.PREFETCH, "fc_0.b_0", np.arange(3), sender=7, seq=5)],
        ]

    def message(self) -> list[bytes]:
        kind = self.rng.integers(4)
        return [self.random_frames, self.random_header, self.mutated, self.refused][kind]()

    def random_frames(self) -> list[bytes]:
        count = int(self.rng.integers(1, 5))
        return [self.rng.bytes(int(self.rng.integers(0, 300))) for _ in range(count)]

    def random_header(self) -> list[bytes]:
        rng = self.rng
        ndim = int(rng.choice([0, 1, 2, 3, 17, 255]))
        dims = [int(rng.choice([0, 1, 13, 2**31, 2**32, 2**62, -1])) for _ in range(min(ndim, 20))]
        name = str(rng.choice(self.names)).encode()
        head = self.fixed.pack(
            self.magic if rng.random() < 0.9 else rng.bytes(4),
            int(rng.integers(0, 20)),  # kind
            int(rng.integers(0, 12)),  # dtype
            ndim,
            int(rng.integers(0, 8)),  # flags
            int(rng.choice(OUTSIDERS)),
            int(rng.integers(0, 2**63)),
            int(rng.choice([0, 5, -1, 2**62])),  # height
            len(name) if rng.random() < 0.9 else int(rng.integers(0, 2**16)),
        )
        head += name + struct.pack(f"<{len(dims)}q", *dims)
        return [head] + [rng.bytes(int(rng.choice([0, 4, 52, 400]))) for _ in range(int(rng.integers(0, 4)))]

    def mutated(self) -> list[bytes]:
        frames = [bytearray(f) for f in self.bases[int(self.rng.integers(len(self.bases)))]]
        frame = frames[int(self.rng.integers(len(frames)))]
        if frame:
            frame[int(self.rng.integers(len(frame)))] = int(self.rng.integers(256))  # one byte
        return [bytes(f) for f in frames]

    def refused(self) -> list[bytes]:
        """Well-formed requests from the live trainers that the program refuses (pserver 0 holds
        fc_0.b_0, shape [1])."""
        Kind, encode, rng = self.Kind, self.encode, self.rng
        sender = int(rng.choice(LIVE))
        choices = [
            lambda: encode(Kind.SEND, f"fc_0.b_0@GRAD.trainer_{sender}", np.ones(2, "float32"), sender=sender),
            lambda: encode(Kind.SEND, f"fc_0.b_0@GRAD.trainer_{sender}", np.ones(1, "float64"), sender=sender),
            lambda: encode(Kind.SEND, f"fc_0.b_0@GRAD.trainer_{1 - sender}", np.ones(1, "float32"), sender=sender),
            lambda: encode(Kind.SEND, "fc_0.b_0", np.ones(1, "float32"), sender=sender),  # a parameter
            lambda: encode(Kind.GET, "no_such_var", sender=sender),
            lambda: encode(Kind.GET_BATCH, "fc_0.b_0\nnope", sender=sender),
            lambda: encode(Kind.SEND_BARRIER, sender=sender),  # before any gradient
            lambda: encode(Kind.PREFETCH, "fc_0.b_0", np.asarray([-1, 99]), sender=sender),
            lambda: encode(Kind.RING, "allreduce:0:0:0", np.ones(2, "float32"), sender=sender),
            lambda: encode(Kind.SEND_BATCH, value=np.asarray([5, 9]), sender=sender) + [b"x"],
            lambda: encode(Kind.WORKER_EXCHANGE, value=np.ones(3, "float32"), sender=sender),
        ]
        return [bytes(f) for f in choices[int(rng.integers(len(choices)))]()]


def fuzz_pserver(ep: str, count: int, fuzzer: Fuzzer) -> dict:
    """Sends `count` messages, 50 in flight over 4 sockets, and awaits every answer: {"sent",
    "answers", "errors" (answers that are wire ERROR replies), "other_count" (the rest), "others"
    (the first SHOWN of them, as (what was sent, what came back)), "seconds"}."""
    import zmq

    context = zmq.Context()
    socks = []
    for _ in range(4):
        sock = context.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(f"tcp://{ep}")
        socks.append(sock)
    out = {"sent": 0, "answers": 0, "errors": 0, "other_count": 0, "others": []}
    started = time.perf_counter()
    try:
        while out["sent"] < count and out["sent"] == out["answers"]:  # until done or a hang
            batch = [fuzzer.message() for _ in range(min(50, count - out["sent"]))]
            for i, frames in enumerate(batch):
                socks[i % len(socks)].send_multipart(frames)
            out["sent"] += len(batch)
            for i, frames in enumerate(batch):
                sock = socks[i % len(socks)]
                if not sock.poll(60_000):
                    break
                _tally(out, frames, sock.recv_multipart())  # a socket's answers come in its sending order
    finally:
        for sock in socks:
            sock.close()
        context.term()
    out["seconds"] = time.perf_counter() - started
    return out


def _tally(out: dict, sent: list[bytes], answer: list[bytes]) -> None:
    from fleetgraph.executor.comm.wire import Kind, WireError, decode

    out["answers"] += 1
    try:
        reply = decode(answer)
    except WireError as e:
        reply = None
        shown = f"a malformed answer ({e})"
    if reply is not None and reply.kind == Kind.ERROR:
        out["errors"] += 1
        return
    out["other_count"] += 1
    if len(out["others"]) < SHOWN:
        out["others"].append((_shown(sent), shown if reply is None else reply.describe()))


def _shown(frames: list[bytes]) -> str:
    from fleetgraph.executor.comm.wire import WireError, decode

    try:
        return decode(frames).describe()
    except WireError:
        return f"{len(frames)} frame(s), the first {frames[0][:40]!r}" if frames else "no frames"


def ps_job(folder: str, tag: str, fuzz: int, fuzzer: Fuzzer | None) -> dict:
    eps = endpoints(2)
    common = ["--pservers", ",".join(eps), "--trainers", "2", "--steps", "50"]
    servers = [subprocess.Popen([sys.executable, PS_TRAIN, "pserver", ep, *common], env=_env()) for ep in eps]
    out = {"rc": None}
    try:
        time.sleep(3)  # serving
        if fuzzer is not None:
            out["rss_before"] = rss_mb(servers[0].pid)
            out.update(fuzz_pserver(eps[0], fuzz, fuzzer))
            out["alive"] = servers[0].poll() is None
            out["rss_after"] = rss_mb(servers[0].pid) if out["alive"] else float("nan")
        trainers = [
            subprocess.Popen(
                [sys.executable, PS_TRAIN, "trainer", str(t), "--out", f"{folder}/{tag}{t}.npz", *common],
                env=_env(FLEETGRAPH_RPC_TIMEOUT="60"),  # a crashed pserver fails them in a minute
                stdout=subprocess.DEVNULL,
            )
            for t in LIVE
        ]
        out["rc"] = [p.wait(timeout=600) for p in trainers + servers]
    finally:
        for p in servers:
            if p.poll() is None:
                p.kill()
    out["params"] = [dict(np.load(f"{folder}/{tag}{t}.npz")) for t in LIVE] if not any(out["rc"]) else None
    return out


def ring_job(folder: str, tag: str, fuzz: int, fuzzer: Fuzzer | None, env: dict, steps: int) -> dict:
    import zmq

    eps = endpoints(2)
    args = ["--endpoints", ",".join(eps), "--steps", str(steps)]
    ranks = [
        subprocess.Popen([sys.executable, COLLECTIVE_TRAIN, str(r), *args, "--out", f"{folder}/{tag}{r}.npz"], env=env)
        for r in (0, 1)
    ]
    out = {}
    try:
        if fuzzer is not None:
            time.sleep(2)  # the ring is up and training
            out["rss_before"] = rss_mb(ranks[0].pid)
            context = zmq.Context()
            queued = 0
            for start in range(0, fuzz, 500):  # a fresh connection per 500: new handshakes too
                sock = context.socket(zmq.DEALER)
                sock.setsockopt(zmq.LINGER, 0)
                sock.connect(f"tcp://{eps[0]}")
                for _ in range(min(500, fuzz - start)):
                    try:
                        sock.send_multipart(fuzzer.message(), zmq.NOBLOCK)
                        queued += 1
                    except zmq.Again:
                        pass  # no connection to queue on (authentication refused it) or a full queue
                time.sleep(0.05)
                sock.close()
            out["queued"] = queued
            time.sleep(1)
            out["rss_after"] = rss_mb(ranks[0].pid) if ranks[0].poll() is None else float("nan")
            context.term()
        out["rc"] = [p.wait(timeout=600) for p in ranks]
    finally:
        for p in ranks:
            if p.poll() is None:
                p.kill()
    out["params"] = [dict(np.load(f"{folder}/{tag}{r}.npz")) for r in (0, 1)] if not any(out["rc"]) else None
    return out


def _same(a, b) -> bool:
    return (
        a is not None
        and b is not None
        and all(x.keys() == y.keys() and all(np.array_equal(x[k], y[k]) for k in x) for x, y in zip(a, b))
    )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pserver", type=int, default=100_000)
    p.add_argument("--ring", type=int, default=20_000)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        plain = ps_job(folder, "plain", 0, None)
        fuzzed = ps_job(folder, "fuzzed", args.pserver, Fuzzer(args.seed))
        print(
            f"pserver: {fuzzed['sent']:,} malformed messages in {fuzzed['seconds']:.1f} s, "
            f"{fuzzed['answers']:,} answered ({fuzzed['sent'] - fuzzed['answers']} hangs), "
            f"{fuzzed['errors']:,} with an error, {fuzzed['other_count']:,} with something else; "
            f"alive afterwards: {fuzzed['alive']}"
        )
        for sent, answer in fuzzed["others"]:
            print(f"  not an error: {sent} was answered with {answer}")
        print(
            f"  RSS {fuzzed['rss_before']:.1f} -> {fuzzed['rss_after']:.1f} MB "
            f"({fuzzed['rss_after'] - fuzzed['rss_before']:+.1f} MB)"
        )
        print(
            f"  then the job: exit codes {fuzzed['rc']}; trainers' parameters and losses equal to an "
            f"unfuzzed run's: {_same(plain['params'], fuzzed['params'])}"
        )
        for label, extra, steps in (
            (
                "ring over TCP with a job secret",
                {"FLEETGRAPH_RING_TRANSPORT": "tcp", "FLEETGRAPH_JOB_SECRET": "f"},
                12000,
            ),
            ("ring over shared memory, no secret", {}, 40000),
        ):
            env = _env(**extra)
            plain = ring_job(folder, "rplain", 0, None, env, steps)
            fuzzed = ring_job(folder, "rfuzzed", args.ring, Fuzzer(args.seed + 1), env, steps)
            print(
                f"{label}: {args.ring:,} malformed messages offered to rank 0 while training "
                f"({fuzzed['queued']:,} found a connection to queue on); exit codes "
                f"{fuzzed['rc']}; RSS {fuzzed['rss_before']:.1f} -> {fuzzed['rss_after']:.1f} MB "
                f"({fuzzed['rss_after'] - fuzzed['rss_before']:+.1f} MB); parameters equal to an unfuzzed "
                f"run's: {_same(plain['params'], fuzzed['params'])}"
            )


if __name__ == "__main__":
    main()
