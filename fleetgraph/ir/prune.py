"""Prune a program to what computing some targets from some feeds needs (for inference models).

Steps:
  1. clone the program (for inference: for test, forward ops only, is_test set);
  2. walk the ops backwards from the targets, keeping an op when it writes a needed variable, and
     stop at the feeds;
  3. drop the variables no kept op names, keeping the feeds.
"""

from __future__ import annotations

from .errors import FleetgraphError
from .program import Operator, OpRole, Program
from .verify import verify


def prune_with_input(program: Program, feeded_var_names, targets) -> Program:
    """Paddle's Program._prune_with_input: feeds as one name or a list, targets as Variables or names."""
    names = [feeded_var_names] if isinstance(feeded_var_names, str) else list(feeded_var_names)
    targets = targets if isinstance(targets, (list, tuple)) else [targets]
    return prune(program, names, [getattr(t, "name", t) for t in targets], for_test=False)


def keep_forward_for_test(program: Program) -> Program:
    """In place, on a fresh clone: drop backward, optimize and LR-schedule ops; ops with is_test get it True."""
    for block in program.blocks:
        block.ops = [op for op in block.ops if not _is_backward_or_optimize(op)]
        for op in block.ops:
            if "is_test" in op.attrs:
                op.attrs["is_test"] = True
    program._bump()
    return program


def _is_backward_or_optimize(op: Operator) -> bool:
    role = op.attrs.get("op_role", 0)
    return bool(role & (OpRole.Backward | OpRole.Optimize | OpRole.LRSched))


def prune_for_inference(program: Program, feed_names: list[str], target_names: list[str]) -> Program:
    return prune(program, feed_names, target_names, for_test=True)


def prune(program: Program, feed_names: list[str], target_names: list[str], *, for_test: bool) -> Program:
    """The ops the targets need from the feeds (`for_test`: forward ops only, in test mode)."""
    pruned = program.clone(for_test=for_test)  # step 1
    block = pruned.global_block()
    for name in list(feed_names) + list(target_names):
        if not block.has_var(name):
            raise FleetgraphError(f"prune: variable {name!r} is not in the program")
    needed, kept = set(target_names), []
    for op in reversed(block.ops):  # step 2
        if any(n in needed for n in op.output_arg_names):
            kept.append(op)
            needed |= {n for n in op.input_arg_names if n not in feed_names}
    block.ops = list(reversed(kept))
    used = set(feed_names) | {n for op in block.ops for n in op.input_arg_names + op.output_arg_names}
    for name in [n for n in block.vars if n not in used]:  # step 3
        del block.vars[name]
    for name in feed_names:
        block.var(name).is_data = True
    pruned._bump()
    return verify(pruned)
