"""Parameter-server push + pull: one trainer and one pserver on 127.0.0.1, sync SGD on one dense
parameter of N float32. A step pushes the gradient (N*4 bytes) and pulls the parameter back; the
figure is 2 * N * 4 bytes over the whole step (its local compute included, shown beside it).

    python bench/ps_push_pull.py      (bench/comm.py prints the same table after the all-reduces)
"""

import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
SIZES = [64 << 10, 1 << 20, 16 << 20, 64 << 20]


def _program(numel: int):
    import fleetgraph as paddle
    from fleetgraph.ir import Program, program_guard, unique_name

    main, startup = Program(), Program()
    with program_guard(main, startup), unique_name.guard():
        x = paddle.static.data(name="x", shape=[1], dtype="float32")
        w = paddle.fluid.layers.create_parameter([numel], "float32", name="w")
        loss = paddle.mean(paddle.multiply(w, x))
        paddle.optimizer.SGD(0.01).minimize(loss)
    return main, startup, loss


def ps_push_pull(sizes, steps=20):
    """{bytes: (step s, local compute s, push+pull GB/s)}; each size in a fresh trainer process."""
    import json

    results = {}
    for nbytes in sizes:
        out = subprocess.run(
            [sys.executable, __file__, "--measure", str(nbytes), str(steps)],
            check=True,
            capture_output=True,
            text=True,
            env=dict(os.environ, PYTHONPATH=REPO),
        ).stdout
        results[nbytes] = tuple(json.loads(out.strip().splitlines()[-1]))
    return results


def _measure(nbytes: int, steps: int) -> tuple[float, float, float]:
    """One size: this process is the trainer, a child process the pserver."""
    import fleetgraph as paddle
    from fleetgraph.ir import save_program
    from fleetgraph.transpiler import DistributeTranspiler, DistributeTranspilerConfig

    main, startup, _ = _program(nbytes // 4)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        endpoint = f"127.0.0.1:{s.getsockname()[1]}"
    config = DistributeTranspilerConfig()
    config.slice_var_up = False
    t = DistributeTranspiler(config)
    t.transpile(0, program=main, pservers=endpoint, trainers=1, startup_program=startup)
    folder = tempfile.mkdtemp()
    for name, program in zip(("main", "startup"), t.get_pserver_programs(endpoint)):
        save_program(program, f"{folder}/{name}.json")
    server = subprocess.Popen([sys.executable, __file__, "--serve", folder], env=dict(os.environ, PYTHONPATH=REPO))
    feed = {"x": np.ones([1], "float32")}
    try:
        exe = paddle.static.Executor()
        step = _median_step(exe, startup, t.get_trainer_program(), feed, steps)
        exe.close()
        server.wait(60)
    finally:
        if server.poll() is None:
            server.kill()
    local_main, local_startup, _ = _program(nbytes // 4)  # the transpile rewrote `startup`
    compute = _median_step(paddle.static.Executor(), local_startup, local_main, feed, steps)
    return step, compute, 2 * nbytes / step / 1e9  # conservative: the step includes its compute


def _median_step(exe, startup, program, feed, steps: int) -> float:
    import fleetgraph as paddle

    scope = paddle.static.Scope()
    exe.run(startup, scope=scope)
    for _ in range(2):
        exe.run(program, feed=feed, scope=scope)
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        exe.run(program, feed=feed, scope=scope)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def report() -> None:
    print("parameter-server push + pull, 1 trainer + 1 pserver on 127.0.0.1, median of 20 steps")
    print(f"{'size':>8}  {'step':>10}  {'local compute':>13}  {'push+pull':>10}")
    for nbytes, (step, comp, gbps) in ps_push_pull(SIZES).items():
        print(f"{nbytes >> 10:>5} KB  {step * 1e3:7.2f} ms  {comp * 1e3:10.2f} ms  {gbps:6.2f} GB/s")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--measure"]:
        import json

        print(json.dumps(_measure(int(sys.argv[2]), int(sys.argv[3]))))
        sys.exit(0)
    if sys.argv[1:2] == ["--serve"]:
        import fleetgraph as paddle
        from fleetgraph.ir import load_program

        exe = paddle.static.Executor()
        exe.run(load_program(sys.argv[2] + "/startup.json"))
        exe.run(load_program(sys.argv[2] + "/main.json"))
        sys.exit(0)
    report()
