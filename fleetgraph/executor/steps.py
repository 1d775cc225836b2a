"""Plan steps: each op of a block as a bound kernel with the variable names it reads and writes,
and the loop that runs a list of them over a run's variables (`run_steps`)."""

from __future__ import annotations

from typing import Any

from ..ir import EOFException, FleetgraphError, KernelError, get_op_def
from ..ops.bound import BoundKernel, describe
from ..ops.lod_tensor import LoDTensor
from . import trace


class Step(BoundKernel):
    """One op, resolved: its bound kernel, input names (a list for a duplicable slot, None for an
    absent optional one) and output names."""

    __slots__ = ("index", "op", "ins", "outs", "flat_ins")

    def __init__(self, index: int, op, lod_vars: frozenset[str]) -> None:
        opdef = get_op_def(op.type)
        if opdef.kernel is None:
            raise FleetgraphError(f"op {index} ({op.type}): has no kernel and cannot be executed")
        self.index, self.op = index, op
        self.ins = [_slot_names(op.inputs, s) for s in opdef.inputs]
        self.outs = [_slot_names(op.outputs, s) for s in opdef.outputs]
        need = frozenset(s.name for s, n in zip(opdef.outputs, self.outs) if n)
        super().__init__(opdef, op.attrs, need=need, rng_key=next(iter(op.output_arg_names), ""))
        if lod_vars and not opdef.takes_lod:
            self.kernel = _lod_adapter(self.kernel, self.ins, self.outs, lod_vars) or self.kernel
        self.flat_ins = all(isinstance(a, str) for a in self.ins)


def _slot_names(slots: dict, slot) -> Any:
    names = slots.get(slot.name)
    if not names:
        return None
    return list(names) if slot.duplicable else names[0]


def _as_list(names) -> list[str]:
    return [] if names is None else [names] if isinstance(names, str) else names


def _lod_adapter(kernel, ins: list, outs: list, lod_vars: frozenset[str]):
    """For a kernel that works on plain arrays (most of them), in an op that reads or writes LoD
    variables: LoD inputs are passed as their rows, and outputs declared with LoD get the LoD of
    the first LoD input, as Paddle's ShareLoD does. None when the op touches no LoD variable, so
    programs without sequences run their kernels directly."""
    in_slots = [i for i, names in enumerate(ins) if any(n in lod_vars for n in _as_list(names))]
    out_slots = [
        (i, isinstance(names, list), [n in lod_vars for n in _as_list(names)])
        for i, names in enumerate(outs)
        if any(n in lod_vars for n in _as_list(names))
    ]
    if not in_slots and not out_slots:
        return None
    single = len(outs) == 1

    def run(xp, *args, **kwargs):
        args, source = list(args), None
        for i in in_slots:
            values = args[i] if isinstance(args[i], list) else [args[i]]
            for v in values:
                if source is None and isinstance(v, LoDTensor) and v.levels:
                    source = v
            stripped = [v.data if isinstance(v, LoDTensor) else v for v in values]
            args[i] = stripped if isinstance(args[i], list) else stripped[0]
        result = kernel(xp, *args, **kwargs)
        if not out_slots:
            return result
        levels = source.levels if source is not None else ()
        results = [result] if single else list(result)
        for i, is_list, wanted in out_slots:
            if is_list:
                results[i] = [_with_lod(v, levels) if w else v for v, w in zip(results[i], wanted)]
            else:
                results[i] = _with_lod(results[i], levels)
        return results[0] if single else results

    return run


_RECV_LISTS = ("epmap", "recv_varnames")


def batched_recvs(steps: list[Step]) -> list[Step]:
    """Consecutive recv ops (a program has one per parameter, as Paddle's do) run as one step: every
    pserver is asked for all of them at once, one round trip instead of one per parameter. The
    program itself is unchanged."""
    out: list[Step] = []
    joined: set[int] = set()  # recvs of one parameter's blocks (runtime_split_send_recv): kept apart
    for step in steps:
        if step.op.type == "recv" and len(step.outs[0]) < len(step.kwargs["recv_varnames"]):
            step.kernel = _joined_blocks(step)
            joined.add(id(step))
            out.append(step)
            continue
        prev = out[-1] if out else None
        same = prev is not None and id(prev) not in joined and step.op.type == prev.op.type == "recv"
        if same and all(step.kwargs[k] == prev.kwargs[k] for k in step.kwargs if k not in _RECV_LISTS):
            prev.outs[0] += step.outs[0]
            for k in _RECV_LISTS:
                prev.kwargs[k] += step.kwargs[k]
            continue
        if step.op.type == "recv":  # its lists get longer: copies, so the program's stay as they are
            step.kwargs = {**step.kwargs, **{k: list(step.kwargs[k]) for k in _RECV_LISTS}}
        out.append(step)
    return out


def _joined_blocks(step: Step):
    """Paddle's runtime_split_send_recv form of recv: one output, the parameter, and the names of its
    blocks; they come back as one value, concatenated along rows."""
    if len(step.outs[0]) != 1:
        raise FleetgraphError(
            f"op {step.index} (recv): {len(step.outs[0])} outputs for {len(step.kwargs['recv_varnames'])} "
            "recv_varnames; expected one output per name, or one for all (runtime_split_send_recv)"
        )
    kernel = step.kernel

    def run(xp, *args, **kwargs):
        return [xp.concatenate(kernel(xp, *args, **kwargs), axis=0)]

    return run


def _with_lod(value, levels):
    if value is None or isinstance(value, LoDTensor):
        return value
    return LoDTensor(value, levels)


def run_steps(steps: list, env: dict, xp) -> None:
    """Run prepared steps in order on `env`; an error names the op, its block and its inputs."""
    if trace.ACTIVE is not None:  # a profiler runs: each kernel call becomes an event
        steps = [trace.TimedStep(s, trace.ACTIVE) for s in steps]
    step = None
    try:
        for step in steps:
            if step.flat_ins:
                args = [env[n] for n in step.ins]
            else:
                args = [_gather(env, n) for n in step.ins]
            result = step.kernel(xp, *args, **step.kwargs)
            if step.single_out:
                _store(env, step.outs[0], result)
            elif step.outs:
                for names, value in zip(step.outs, result):
                    if names is not None:
                        _store(env, names, value)
    except FleetgraphError as e:
        if step is None or isinstance(e, (KernelError, EOFException)):
            raise
        raise KernelError(f"{_where(step, env)}: {e}") from e
    except KeyError as e:
        if getattr(step, "originals", None):  # a fused step: the op that lacks the input says so
            run_steps(step.originals, env, xp)
        if step is None or e.args[0] not in step.op.input_arg_names:
            raise
        raise KernelError(
            f"{_where(step, env)}: input {e.args[0]!r} has no value; feed it, or run the startup "
            "program first if it is a parameter"
        ) from None
    except Exception as e:
        raise KernelError(f"{_where(step, env)}: {type(e).__name__}: {e}") from e


def _gather(env, names):
    if names is None:
        return None
    if isinstance(names, str):
        return env[names]
    return [env[n] for n in names]


def _store(env, names, value) -> None:
    if names is None:
        return
    if isinstance(names, str):
        env[names] = value
    else:
        for n, v in zip(names, value):
            env[n] = v


def _where(step: Step, env: dict) -> str:
    def named(name):
        value = env.get(name)
        return f"{name!r} (no value)" if value is None else f"{name!r} {describe(value)}"

    ins = ", ".join(f"{slot}=" + ", ".join(named(n) for n in names) for slot, names in step.op.inputs.items())
    return f"op {step.index} ({step.op.type}) in block {step.op.block.idx} with inputs {ins or 'none'}"
