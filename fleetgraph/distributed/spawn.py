"""`paddle.distributed.spawn(func, args, nprocs)`: run func in nprocs new processes, each a trainer of
one collective job on this host (its rank, the job's endpoints on 127.0.0.1), as Paddle 2.0's. Paddle's
CPU build refuses it (it counts GPUs); here each process trains on the CPU."""

from __future__ import annotations

import multiprocessing
import os
import traceback

from ..ir import FleetgraphError
from .launch import _free_ports

_OPTIONS = ("start_method", "ips", "cluster_node_ips", "gpus", "selected_gpus")


def _run(func, args, errors, returns, env) -> None:
    os.environ.update(env)
    try:
        returns.put(func(*args))
    except KeyboardInterrupt:
        pass
    except Exception:
        errors.put(traceback.format_exc())
        raise SystemExit(1) from None


class MultiprocessContext:
    """The spawned processes; join() waits for them and raises the first failure with its traceback."""

    def __init__(self, processes, error_queues, return_queues) -> None:
        self.processes, self.error_queues, self.return_queues = processes, error_queues, return_queues

    def join(self, timeout=None) -> bool:
        """True once every process has ended well; a failed one stops the others and raises."""
        for rank, process in enumerate(self.processes):
            process.join(timeout)
            if process.exitcode not in (None, 0):
                for other in self.processes:
                    if other.is_alive():
                        other.terminate()
                message = self.error_queues[rank].get() if not self.error_queues[rank].empty() else ""
                raise FleetgraphError(f"spawn: process {rank} ended with exit code {process.exitcode}\n{message}")
        return all(p.exitcode == 0 for p in self.processes)


def spawn(func, args=(), nprocs=-1, join=True, daemon=False, **options):
    """Start nprocs processes (-1: CPU_NUM, else 1) running func(*args) as ranks 0..nprocs-1."""
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise ValueError(f"The config option ({unknown[0]}) of `paddle.distributed.spawn` is not supported.")
    if options.get("gpus") or options.get("selected_gpus"):
        raise FleetgraphError("spawn: gpus; no GPU kernels run in this build: each process trains on the CPU")
    ips = options.get("ips") or options.get("cluster_node_ips") or "127.0.0.1"
    if ips != "127.0.0.1":
        raise NotImplementedError("spawn: ips; spawn starts the processes of this host only (use the launcher)")
    nprocs = int(os.environ.get("CPU_NUM", "1")) if nprocs == -1 else int(nprocs)
    if nprocs < 1:
        raise ValueError(f"spawn: nprocs; expected a positive int or -1, got {nprocs}")
    endpoints = [f"127.0.0.1:{port}" for port in _free_ports(nprocs)]
    mp = multiprocessing.get_context(options.get("start_method") or "spawn")
    processes, errors, returns = [], [], []
    for rank in range(nprocs):
        env = {
            "PADDLE_TRAINER_ID": str(rank),
            "PADDLE_TRAINERS_NUM": str(nprocs),
            "PADDLE_TRAINER_ENDPOINTS": ",".join(endpoints),
            "PADDLE_CURRENT_ENDPOINT": endpoints[rank],
        }
        error, returned = mp.SimpleQueue(), mp.SimpleQueue()
        process = mp.Process(target=_run, args=(func, args, error, returned, env), daemon=daemon)
        process.start()
        processes.append(process)
        errors.append(error)
        returns.append(returned)
    context = MultiprocessContext(processes, errors, returns)
    if join:
        context.join()
    return context
