"""What job authentication costs a step: fit_a_line, 2 pservers x 2 trainers, sync, on 127.0.0.1,
without FLEETGRAPH_JOB_SECRET and with it (the loopback handshake, then unsigned messages), and with
`--baseline DIR` the same job with a secret in another checkout (an earlier commit: its loopback
authentication, PLAIN before 2026-11-26), side by side in one run.

    git worktree add /tmp/plain 0228ff9   # the last commit with PLAIN on loopback
    python bench/auth_overhead.py [--reps 5] [--short 50] [--long 550] [--baseline /tmp/plain]
    python bench/auth_overhead.py --ctr 50000 --baseline /tmp/plain [--reps 3]

A step's time is (job wall at --long steps - job wall at --short steps) / (long - short), so process
start-up and the handshakes fall out; the settings take turns run by run, and the figures are
medians over --reps with the lowest and highest. With `--ctr N`, the job is bench/ctr.py's CTR-DNN
(seed 000) in sync mode on N samples, 2 pservers x 2 trainers started by the launcher (which always
sets a secret on one host), this checkout's beside the baseline's: samples/s over the job's wall
time, every process with one BLAS thread. Prints figures; asserts nothing.
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


def ctr_samples_per_s(repo: str, data: str, samples: int) -> float:
    """One sync CTR job of `repo` on `data` under its launcher: samples/s over the job's wall time."""
    import tempfile

    log_dir = tempfile.mkdtemp(prefix="auth-ctr-")
    env = dict(os.environ, PYTHONPATH=repo, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env.pop("FLEETGRAPH_JOB_SECRET", None)
    job = os.path.join(repo, "bench", "ctr_job.py")
    cmd = [sys.executable, "-m", "fleetgraph.distributed.launch_ps", "--server_num", "2", "--worker_num", "2"]
    cmd += ["--log_dir", log_dir, job, "--framework", "fleetgraph", "--how", "ps", "--data", data]
    cmd += ["--strategy", "sync", "--threads", "2"]
    started = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=log_dir, capture_output=True, text=True, timeout=900)
    if done.returncode:
        raise SystemExit(f"the CTR job of {repo} failed (logs: {log_dir}):\n{done.stderr[-2000:]}")
    return samples / (time.perf_counter() - started)


def ctr_main(args) -> None:
    import tempfile

    from ctr import write_data

    data = tempfile.mkdtemp(prefix="auth-ctr-data-")
    write_data(data, args.ctr)
    settings = [("handshake (this checkout)", REPO)]
    if args.baseline:
        settings.append(("baseline", os.path.abspath(args.baseline)))
    rates: dict[str, list[float]] = {label: [] for label, _ in settings}
    for _ in range(args.reps):
        for label, repo in settings:
            rates[label].append(ctr_samples_per_s(repo, data, args.ctr))
    print(f"CTR-DNN sync, 2 pservers x 2 trainers, {args.ctr} samples, median of {args.reps} (min-max)")
    reference = statistics.median(rates[settings[-1][0]])
    for label, values in rates.items():
        median = statistics.median(values)
        spread = f"({min(values):,.0f}-{max(values):,.0f})"
        versus = f"{100 * (median / reference - 1):+6.1f}% vs {settings[-1][0]}"
        print(f"  {label:26s} {median:9,.0f} samples/s {spread:19s} {versus}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--short", type=int, default=50)
    p.add_argument("--long", type=int, default=550)
    p.add_argument("--baseline", help="another fleetgraph checkout whose authenticated job runs beside this one's")
    p.add_argument("--ctr", type=int, metavar="SAMPLES", help="time the sync CTR-DNN job on this many samples instead")
    args = p.parse_args()
    if args.ctr:
        ctr_main(args)
        return
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
