"""What job authentication costs a step: fit_a_line, 2 pservers x 2 trainers, sync, on 127.0.0.1,
without and with FLEETGRAPH_JOB_SECRET (CURVE handshakes, every message encrypted), side by side.

    python bench/auth_overhead.py [--reps 5] [--short 50] [--long 550]

A step's time is (job wall at --long steps - job wall at --short steps) / (long - short), so process
start-up and the handshakes fall out; the two settings take turns run by run, and the figures are
medians over --reps. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from local_jobs import endpoints

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PS_TRAIN = os.path.join(REPO, "tests", "dist_scripts", "ps_train.py")


def job_seconds(steps: int, secret: str | None) -> float:
    eps = endpoints(2)
    env = dict(os.environ, PYTHONPATH=REPO, FLEETGRAPH_RPC_TIMEOUT="60")
    env.pop("FLEETGRAPH_JOB_SECRET", None)
    if secret:
        env["FLEETGRAPH_JOB_SECRET"] = secret
    common = ["--pservers", ",".join(eps), "--trainers", "2", "--steps", str(steps)]
    started = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, PS_TRAIN, "pserver", ep, *common], env=env) for ep in eps]
    procs += [
        subprocess.Popen([sys.executable, PS_TRAIN, "trainer", str(t), *common], env=env, stdout=subprocess.DEVNULL)
        for t in (0, 1)
    ]
    codes = [p.wait(timeout=300) for p in procs]
    if any(codes):
        raise SystemExit(f"a role failed: exit codes {codes}")
    return time.perf_counter() - started


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--short", type=int, default=50)
    p.add_argument("--long", type=int, default=550)
    args = p.parse_args()
    per_step = {"no secret": [], "job secret": []}
    for _ in range(args.reps):
        for label, secret in (("no secret", None), ("job secret", "bench secret")):
            long_s = job_seconds(args.long, secret)
            short_s = job_seconds(args.short, secret)
            per_step[label].append((long_s - short_s) / (args.long - args.short))
    plain, secure = (statistics.median(v) * 1e3 for v in per_step.values())
    print(f"fit_a_line sync, 2 pservers x 2 trainers, {args.long - args.short} steps, median of {args.reps}")
    print(f"  no secret   {plain:7.3f} ms/step")
    print(f"  job secret  {secure:7.3f} ms/step   ({100 * (secure / plain - 1):+.1f}%)")


if __name__ == "__main__":
    main()
