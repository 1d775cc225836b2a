"""What job authentication costs a step: fit_a_line, 2 pservers x 2 trainers, sync, on 127.0.0.1,
without FLEETGRAPH_JOB_SECRET and with it (the loopback handshake, then unsigned messages), and with
`--baseline DIR` the same job with a secret in another checkout (an earlier commit: its loopback
authentication, PLAIN before 2026-11-26), side by side in one run.

    git worktree add /tmp/plain 0228ff9   # the last commit with PLAIN on loopback
    python bench/auth_overhead.py [--reps 5] [--short 50] [--long 550] [--baseline /tmp/plain]

A step's time is (job wall at --long steps - job wall at --short steps) / (long - short), so process
start-up and the handshakes fall out; the settings take turns run by run, and the figures are
medians over --reps with the lowest and highest. Prints figures; asserts nothing.
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
PS_TRAIN = os.path.join("tests", "dist_scripts", "ps_train.py")


def job_seconds(steps: int, secret: str | None, repo: str) -> float:
    eps = endpoints(2)
    env = dict(os.environ, PYTHONPATH=repo, FLEETGRAPH_RPC_TIMEOUT="60")
    env.pop("FLEETGRAPH_JOB_SECRET", None)
    if secret:
        env["FLEETGRAPH_JOB_SECRET"] = secret
    script = os.path.join(repo, PS_TRAIN)
    common = ["--pservers", ",".join(eps), "--trainers", "2", "--steps", str(steps)]
    started = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, script, "pserver", ep, *common], env=env, cwd=repo) for ep in eps]
    procs += [
        subprocess.Popen(
            [sys.executable, script, "trainer", str(t), *common], env=env, cwd=repo, stdout=subprocess.DEVNULL
        )
        for t in (0, 1)
    ]
    codes = [p.wait(timeout=300) for p in procs]
    if any(codes):
        raise SystemExit(f"a role failed in {repo}: exit codes {codes}")
    return time.perf_counter() - started


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--short", type=int, default=50)
    p.add_argument("--long", type=int, default=550)
    p.add_argument("--baseline", help="another fleetgraph checkout whose authenticated job runs beside this one's")
    args = p.parse_args()
    settings = [("no secret", None, REPO), ("job secret", "bench secret", REPO)]
    if args.baseline:
        settings.append(("job secret, baseline", "bench secret", os.path.abspath(args.baseline)))
    per_step: dict[str, list[float]] = {label: [] for label, _, _ in settings}
    for _ in range(args.reps):
        for label, secret, repo in settings:
            long_s = job_seconds(args.long, secret, repo)
            short_s = job_seconds(args.short, secret, repo)
            per_step[label].append((long_s - short_s) / (args.long - args.short) * 1e3)
    reference = statistics.median(per_step["no secret"])
    print(f"fit_a_line sync, 2 pservers x 2 trainers, {args.long - args.short} steps, median of {args.reps} (min-max)")
    for label, values in per_step.items():
        median = statistics.median(values)
        spread = f"({min(values):.3f}-{max(values):.3f})"
        print(f"  {label:22s} {median:7.3f} ms/step {spread:17s} {100 * (median / reference - 1):+6.1f}% vs no secret")


if __name__ == "__main__":
    main()
