"""Collective communication between the trainers of a job in dynamic mode (`paddle.distributed.
all_reduce`, `broadcast`, `all_gather`, `reduce`, `scatter`, `barrier`), as Paddle 2.0's, over the
process's ring (init_parallel_env starts it; TCP between hosts, shared memory on one).

The ring sums; MAX, MIN and PROD gather every rank's tensor (each writes its slot of a zero buffer,
which one sum fills) and reduce locally, as exact as a reducing ring at n times its bytes. In a static
program all_reduce(SUM), broadcast and all_gather append c_allreduce_sum, c_broadcast and c_allgather
(then split) as Paddle's do; the other operations are refused there, by name. Only the default group
(0) exists.
"""

from __future__ import annotations

import numpy as np

from ..dygraph.dispatch import bind
from ..dygraph.parallel import RING_ID, ParallelEnv
from ..dygraph.tensor import Tensor
from ..ir import FleetgraphError
from ..ir.program import Variable
from ..ops.model_parallel import gathered_by_sum
from ..tensor_api import split


class ReduceOp:
    SUM = 0
    MAX = 1
    MIN = 2
    PROD = 3


_REDUCE = {ReduceOp.MAX: np.max, ReduceOp.MIN: np.min, ReduceOp.PROD: np.prod}


def _check_group(what: str, group) -> None:
    if isinstance(group, bool) or not isinstance(group, int):
        raise ValueError(f"The type of 'group' for {what} should be int.")
    if group != RING_ID:
        raise NotImplementedError(f"paddle.distributed.{what}: group {group}; only the default group 0 exists here")


def _ring(what: str, group):
    """The ring of this process (None for a job of one), after checking the group."""
    _check_group(what, group)
    if ParallelEnv().world_size <= 1:
        return None
    from ..executor.comm import process_comm

    rings = process_comm()._rings
    if RING_ID not in rings:
        raise FleetgraphError(f"paddle.distributed.{what}: call paddle.distributed.init_parallel_env() first")
    return rings[RING_ID]


def _static(what: str, tensor) -> bool:
    if isinstance(tensor, Variable) and not isinstance(tensor, Tensor):
        return True
    if not isinstance(tensor, Tensor):
        raise TypeError(f"paddle.distributed.{what}: expected a Tensor, got {type(tensor).__name__}")
    return False


def all_reduce(tensor, op=ReduceOp.SUM, group=0):
    """Every rank's tensor becomes the reduction (SUM, MAX, MIN, PROD) of all ranks' tensors."""
    if op not in (ReduceOp.SUM, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PROD):
        raise ValueError(
            "The op for all_reduce must be one of ReduceOp.SUM, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PROD."
        )
    if _static("all_reduce", tensor):
        if op != ReduceOp.SUM:
            raise NotImplementedError("paddle.distributed.all_reduce: only ReduceOp.SUM in a static program here")
        _check_group("all_reduce", group)  # the op runs where the program does, on the ring its startup makes
        attrs = {"ring_id": group, "use_calc_stream": True}
        return bind("c_allreduce_sum", {"X": [tensor]}, attrs, outputs={"Out": [tensor]})
    ring = _ring("all_reduce", group)
    if ring is None:
        return None
    value = np.ascontiguousarray(tensor.numpy())
    if op == ReduceOp.SUM:
        tensor.set_value(ring.allreduce(value, "all_reduce"))
    else:
        tensor.set_value(_REDUCE[op](gathered_by_sum(ring, value, "all_reduce"), axis=0).astype(value.dtype))
    return None


def broadcast(tensor, src, group=0):
    """Every rank's tensor becomes rank `src`'s."""
    if _static("broadcast", tensor):
        _check_group("broadcast", group)
        return bind("c_broadcast", {"X": [tensor]}, {"ring_id": group, "root": src}, outputs={"Out": [tensor]})
    ring = _ring("broadcast", group)
    if ring is not None:
        tensor.set_value(ring.broadcast(np.ascontiguousarray(tensor.numpy()), root=src, name="broadcast"))
    return None


def all_gather(tensor_list, tensor, group=0):
    """Append every rank's tensor, in rank order, to tensor_list."""
    if _static("all_gather", tensor):
        if not isinstance(tensor_list, list):
            raise ValueError("The type of 'tensor_list' for all_gather should be list.")
        _check_group("all_gather", group)
        nranks = ParallelEnv().world_size
        attrs = {"ring_id": group, "use_calc_stream": True, "nranks": nranks}
        tensor_list.extend(split(bind("c_allgather", {"X": [tensor]}, attrs), nranks, 0))
        return None
    ring = _ring("all_gather", group)
    value = tensor.numpy()
    parts = [value] if ring is None else list(gathered_by_sum(ring, np.ascontiguousarray(value), "all_gather"))
    tensor_list.extend(Tensor(np.array(part)) for part in parts)
    return None


def reduce(tensor, dst, op=ReduceOp.SUM, group=0):  # noqa: A001 - Paddle's name
    """Rank `dst`'s tensor becomes the reduction of all ranks' tensors; the others keep theirs."""
    if _static("reduce", tensor):
        raise NotImplementedError("paddle.distributed.reduce: not in a static program here (dynamic mode only)")
    ring = _ring("reduce", group)
    if ring is None:
        return None
    kept = tensor.numpy().copy()
    all_reduce(tensor, op, group)
    if ParallelEnv().rank != dst:
        tensor.set_value(kept)
    return None


def scatter(tensor, tensor_list=None, src=0, group=0):
    """Rank i's tensor becomes tensor_list[i] of rank `src` (the other ranks pass None)."""
    if _static("scatter", tensor):
        raise NotImplementedError("paddle.distributed.scatter: not in a static program here (dynamic mode only)")
    ring, env = _ring("scatter", group), ParallelEnv()
    if env.rank == src and (tensor_list is None or len(tensor_list) != env.world_size):
        raise ValueError(f"paddle.distributed.scatter: rank {src} expected tensor_list of {env.world_size} tensors")
    if ring is None:
        tensor.set_value(tensor_list[0].numpy())
        return None
    buffer = np.zeros((env.world_size, *tensor.shape), dtype=tensor.numpy().dtype)
    if env.rank == src:
        buffer[:] = np.stack([t.numpy() for t in tensor_list])
    tensor.set_value(ring.broadcast(buffer, root=src, name="scatter")[env.rank].copy())
    return None


def barrier(group=0):
    """Return once every rank has called barrier()."""
    ring = _ring("barrier", group)
    if ring is not None:
        ring.barrier()
