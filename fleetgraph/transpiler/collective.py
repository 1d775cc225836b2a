"""Paddle's collective transpiler as pure functions: all-reduce each gradient across ranks, and start
every rank from the same parameters.

Steps of `insert_allreduce(program, nranks=...)`:
  1. check the arguments and clone the program (nranks == 1 needs no communication: the clone is
     returned as it is);
  2. find the (param, grad) pairs from the backward ops' op_role_var, and the backward op that
     writes each gradient last;
  3. right after that op, insert `c_sync_calc_stream` (the gradient must be computed before it is
     sent) and `c_allreduce_sum`, which runs on the communication stream (use_calc_stream false:
     the executor's communication thread), so communication of a gradient overlaps the rest of
     backward; the gradient of an `is_distributed` parameter (a shard that differs by rank, as
     paddle.distributed.split makes) is not all-reduced, only scaled by 1/nranks right there;
  4. before the first optimize op (or at the end when there is none), insert one
     `c_sync_comm_stream` over all all-reduced gradients: the optimizer must read reduced values;
  5. right after it, `scale(1/nranks)` each all-reduced gradient, as Paddle's ops read an
     asynchronous all-reduce's result only after the sync (a gradient some op reads before the
     sync is scaled right before that op instead);
  6. verify.

Every gradient is scaled by 1/nranks: Paddle scales the loss's gradient instead, which is the same
for every gradient, the shards' included (their model-parallel all-reduces sum the ranks' terms).

Steps of `collective_startup(startup, nranks=..., rank=..., endpoints=...)`:
  1. check the arguments and clone the startup program (unchanged for nranks == 1);
  2. put `c_comm_init` first: every later op may communicate;
  3. after the init ops, `c_broadcast` each parameter the startup initializes from rank 0, so
     every rank starts from the same values whatever its random seed (not an `is_distributed`
     shard: each rank keeps its own);
  4. then one `c_sync_comm_stream` over the broadcast parameters;
  5. verify.
"""

from __future__ import annotations

from ..ir import FleetgraphError, OpRole, Program, VarType, verify
from ..ir.program import Block

_BACKWARD = int(OpRole.Backward)


def insert_allreduce(program: Program, *, nranks: int, ring_id: int = 0) -> Program:
    """A copy of `program` whose gradients are summed over `nranks` ranks and scaled by 1/nranks."""
    _check_nranks("insert_allreduce", nranks)  # step 1
    _check_ring_id("insert_allreduce", ring_id)
    result = program.clone()
    block = result.global_block()
    pairs, producers = _param_grad_pairs(block)  # step 2
    if nranks == 1:
        return verify(result)
    shards = {p.name for p in block.all_parameters() if p.is_distributed}
    for index in sorted({producers[g] for _, g in pairs}, reverse=True):  # step 3; from the end, so indices hold
        at = index + 1
        for param, grad in pairs:
            if producers[grad] == index:
                at = _insert_grad_allreduce(block, at, param, grad, ring_id, nranks, param in shards)
    reduced = [(p, g) for p, g in pairs if p not in shards]
    if not reduced:
        return verify(result)
    grads = [g for _, g in reduced]  # step 4
    sync = _first_optimize_index(block)
    block._insert_op(
        sync, "c_sync_comm_stream", {"X": grads}, {"Out": grads}, {"ring_id": ring_id, "op_role": _BACKWARD}
    )
    _insert_scales(block, reduced, sync, nranks)  # step 5
    return verify(result)  # step 6


def _param_grad_pairs(block: Block) -> tuple[list[tuple[str, str]], dict[str, int]]:
    """(param, grad) pairs in program order, and the index of the last backward op writing each grad."""
    pairs: list[tuple[str, str]] = []
    for op in block.ops:
        role_var = op.attrs.get("op_role_var", [])
        if op.attrs.get("op_role", 0) & OpRole.Backward and not op.attrs.get("op_role", 0) & OpRole.Optimize:
            pairs += [(p, g) for p, g in zip(role_var[0::2], role_var[1::2]) if (p, g) not in pairs]
    if not pairs:
        raise FleetgraphError(
            "insert_allreduce: program has no (param, grad) pairs; call optimizer.minimize(loss) first"
        )
    grads = {g for _, g in pairs}
    for op in block.ops:  # model parallelism's all-reduces of activations and their gradients stay
        if op.type == "c_allreduce_sum" and grads & set(op.input("X")):
            raise FleetgraphError(
                f"insert_allreduce: block 0 already all-reduces gradient {op.input('X')}; expected a program "
                "without gradient all-reduces (transpile the program optimizer.minimize built, once)"
            )
    producers = {}
    for index, op in enumerate(block.ops):
        if op.attrs.get("op_role", 0) & OpRole.Backward:
            for grad in op.output_arg_names:
                producers[grad] = index
    for param, grad in pairs:
        var = block.var(grad)
        if var.type == VarType.SELECTED_ROWS:
            raise FleetgraphError(
                f"insert_allreduce: gradient {grad!r} of {param!r} is sparse; expected a dense gradient, got "
                "SelectedRows; hint: build the embedding with is_sparse=False for collective training"
            )
    return pairs, producers


def _insert_grad_allreduce(block: Block, at: int, param: str, grad: str, ring_id: int, nranks: int, shard: bool) -> int:
    """sync_calc and allreduce for one gradient at `at` (a shard's: its scale); returns the index after them."""
    role = {"op_role": _BACKWARD, "op_role_var": [param, grad]}
    if shard:
        block._insert_op(at, "scale", {"X": [grad]}, {"Out": [grad]}, {**role, "scale": 1.0 / nranks})
        return at + 1
    block._insert_op(at, "c_sync_calc_stream", {"X": [grad]}, {"Out": [grad]}, role)
    block._insert_op(at + 1, "c_allreduce_sum", {"X": [grad]}, {"Out": [grad]}, {"ring_id": ring_id, **role})
    return at + 2


def _insert_scales(block: Block, pairs: list[tuple[str, str]], sync: int, nranks: int) -> None:
    """scale(1/nranks) of each gradient right after the comm sync at `sync`, or right before the
    first op between its all-reduce and the sync that reads it."""
    at: dict[int, list[tuple[str, str]]] = {}
    for param, grad in pairs:
        ops = block.ops
        reduced = max(i for i in range(sync) if ops[i].type == "c_allreduce_sum" and ops[i].input("X") == [grad])
        reader = next((i for i in range(reduced + 1, sync) if grad in block.ops[i].input_arg_names), sync + 1)
        at.setdefault(reader, []).append((param, grad))
    for index in sorted(at, reverse=True):  # from the end, so indices hold
        for offset, (param, grad) in enumerate(at[index]):
            role = {"op_role": _BACKWARD, "op_role_var": [param, grad], "scale": 1.0 / nranks}
            block._insert_op(index + offset, "scale", {"X": [grad]}, {"Out": [grad]}, role)


def _first_optimize_index(block: Block) -> int:
    for index, op in enumerate(block.ops):
        if op.attrs.get("op_role", 0) & OpRole.Optimize:
            return index
    return len(block.ops)


def collective_startup(startup: Program, *, nranks: int, rank: int, endpoints: list[str], ring_id: int = 0) -> Program:
    """A copy of `startup` that initializes the communicator and broadcasts rank 0's parameters."""
    _check_nranks("collective_startup", nranks)  # step 1
    _check_ring_id("collective_startup", ring_id)
    if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < nranks:
        raise FleetgraphError(f"collective_startup: rank; expected an int in [0, {nranks}), got {rank!r}")
    endpoints = _checked_endpoints(endpoints, nranks)
    result = startup.clone()
    if nranks == 1:
        return verify(result)
    block = result.global_block()
    written = {n for op in block.ops for n in op.output_arg_names}
    params = [p.name for p in block.all_parameters() if p.name in written and not p.is_distributed]
    comm_init = {"nranks": nranks, "rank": rank, "ring_id": ring_id, "endpoints": endpoints}
    block._prepend_op("c_comm_init", {}, {}, comm_init)  # step 2
    for name in params:  # step 3
        block.append_op("c_broadcast", {"X": [name]}, {"Out": [name]}, {"root": 0, "ring_id": ring_id})
    if params:  # step 4
        block.append_op("c_sync_comm_stream", {"X": params}, {"Out": params}, {"ring_id": ring_id})
    return verify(result)  # step 5


def _check_nranks(where: str, nranks) -> None:
    if isinstance(nranks, bool) or not isinstance(nranks, int) or nranks < 1:
        raise FleetgraphError(f"{where}: nranks; expected an int >= 1, got {nranks!r}")


def _check_ring_id(where: str, ring_id) -> None:
    if isinstance(ring_id, bool) or not isinstance(ring_id, int) or ring_id < 0:
        raise FleetgraphError(f"{where}: ring_id; expected an int >= 0, got {ring_id!r}")


def _checked_endpoints(endpoints, nranks: int) -> list[str]:
    if isinstance(endpoints, str):
        endpoints = endpoints.split(",")
    endpoints = list(endpoints)
    if len(endpoints) != nranks:
        raise FleetgraphError(
            f"collective_startup: endpoints; expected one 'ip:port' per rank ({nranks}), "
            f"got {len(endpoints)}: {endpoints}"
        )
    for ep in endpoints:
        host, _, port = str(ep).rpartition(":")
        if not host or not port.isdigit() or not 0 < int(port) < 65536:
            raise FleetgraphError(f"collective_startup: endpoint; expected 'ip:port', got {ep!r}")
    if len(set(endpoints)) != len(endpoints):
        raise FleetgraphError(f"collective_startup: endpoints; expected distinct endpoints, got {endpoints}")
    return [str(ep) for ep in endpoints]
