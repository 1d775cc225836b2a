"""The distributed demo (`make demo`): build seed 001's model, transpile it for 2 pservers and 2
trainers and print the rewritten programs, then train it for real: the launcher starts 2 pservers
and 2 trainers on this machine, and worker 0's loss is shown falling."""

import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", ".."))

from model import build  # noqa: E402

import fleetgraph as paddle  # noqa: E402
from fleetgraph.ir import Program, op_summary, program_guard, unique_name  # noqa: E402

PSERVERS = "127.0.0.1:6174,127.0.0.1:6175"


def show_transpiled() -> None:
    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        _, _, loss = build()
        paddle.optimizer.SGD(learning_rate=0.001).minimize(loss)
    print("== the training program (one process):")
    print(op_summary(main))
    t = paddle.fluid.DistributeTranspiler()
    t.transpile(0, program=main, pservers=PSERVERS, trainers=2, startup_program=startup)
    print("\n== trainer 0, main and startup:")
    print(op_summary(t.get_trainer_program()))
    print(op_summary(t.get_trainer_startup_program()))
    for ep in PSERVERS.split(","):
        ps_main, ps_startup = t.get_pserver_programs(ep)
        print(f"\n== pserver {ep}, main and startup:")
        print(op_summary(ps_main))
        print(op_summary(ps_startup))
    print(f"\n{t.plan}\n")


def train() -> int:
    print("== training: 2 pservers and 2 trainers started by the launcher (worker 0's output follows)\n", flush=True)
    log_dir = tempfile.mkdtemp(prefix="fleetgraph-demo-")
    command = [
        sys.executable,
        "-m",
        "fleetgraph.distributed.launch_ps",
        "--server_num",
        "2",
        "--worker_num",
        "2",
        "--log_dir",
        log_dir,
        os.path.join(HERE, "train.py"),
    ]
    env = dict(os.environ, PYTHONPATH=os.path.join(HERE, "..", "..") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    code = subprocess.call(command, env=env)
    print(f"\nlogs of every process: {log_dir}")
    return code


if __name__ == "__main__":
    show_transpiled()
    sys.exit(train())
