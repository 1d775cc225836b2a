"""Control-flow layers, Paddle's spelling: `cond`, `case`, `switch_case`, `while_loop` and the 1.x
classes `ConditionalBlock`, `While`, `Switch`, with `select_input`/`select_output` and `Print`.

In a static program a branch or loop body is a sub-block: the layer opens it, the user's function
(or `with` body) appends ops to it, and closing it appends the `conditional_block` or `while` op
to the parent with the variables the body reads from outside (`Input`/`X`) and writes there
(`Out`). In dynamic mode they are Python's `if` and `while` on the tensors' values, as Paddle's.
"""

from __future__ import annotations

import sys
from functools import partial

from ..dygraph.tensor import Tensor
from ..ir.errors import FleetgraphError
from ..ir.framework import default_main_program
from ..ir.program import Block, Variable, VarType
from ..ops.control_flow import format_tensor
from .helper import LayerHelper
from .math import equal, logical_and, logical_not
from .tensor import assign, cast, fill_constant

# -- blocks ---------------------------------------------------------------------------------------


class BlockGuard:
    """A new sub-block of the current one, current while the `with` body runs."""

    def __init__(self, program=None) -> None:
        self.program = program or default_main_program()

    def __enter__(self) -> Block:
        return self.program._create_block()

    def __exit__(self, exc_type, exc, tb) -> bool:
        if exc_type is None:
            self.complete()
        self.program._rollback()
        return False

    def complete(self) -> None:
        """Called with the sub-block still current, before the guard returns to the parent."""


def _reads_and_writes(block: Block, written_first=()) -> tuple[list[str], list[str]]:
    """The outer variables `block`'s ops read before writing them, and those they write that the
    parent sees (in first-use order)."""
    inner = set(written_first)
    reads, writes = [], []
    for op in block.ops:
        for name in op.input_arg_names:
            if name not in inner and name not in reads:
                reads.append(name)
        for name in op.output_arg_names:
            inner.add(name)
            if name not in writes:
                writes.append(name)
    parent = block.parent
    outer_writes = [n for n in writes if parent._find_var_recursive(n) is not None]
    return [n for n in reads if parent._find_var_recursive(n) is not None], outer_writes


def _sub_block_op(block: Block, op_type: str, inputs: dict, outputs: dict, attrs: dict) -> None:
    parent = block.parent
    scope = parent.create_var(LayerHelper(op_type).name + ".scope", type=VarType.STEP_SCOPES, stop_gradient=True)
    parent.append_op(op_type, inputs, {**outputs, **{_SCOPE_SLOT[op_type]: [scope]}}, {"sub_block": block.idx, **attrs})


_SCOPE_SLOT = {"conditional_block": "Scope", "while": "StepScopes"}


def _static_bool_scalar(value, what: str) -> Variable:
    if not isinstance(value, Variable):
        raise TypeError(f"{what} must be a Variable, got {type(value).__name__}")
    if value.dtype != "bool":
        raise TypeError(f"{what} must be a bool variable, got {value.dtype}")
    if any(d > 1 for d in value.shape):
        raise TypeError(f"{what} must hold one element, got shape {list(value.shape)}")
    return value


class ConditionalBlock:
    """`with ConditionalBlock([cond], is_scalar_condition=True).block(): ...`: ops that run only
    when the condition holds (Paddle 1.x)."""

    def __init__(self, inputs, is_scalar_condition: bool = False, name: str | None = None) -> None:
        for each in inputs:
            if not isinstance(each, Variable):
                raise TypeError(f"ConditionalBlock: inputs must be Variables, got {type(each).__name__}")
        self.inputs = list(inputs)
        self.is_scalar_condition = bool(is_scalar_condition)
        self.helper = LayerHelper("conditional_block", name)

    def block(self) -> BlockGuard:
        guard = BlockGuard(self.helper.main_program)
        guard.complete = self.complete
        return guard

    def complete(self) -> None:
        block = self.helper.main_program.current_block()
        reads, writes = _reads_and_writes(block)
        _sub_block_op(
            block,
            "conditional_block",
            {"Cond": self.inputs, "Input": reads},
            {"Out": writes},
            {"is_scalar_condition": self.is_scalar_condition},
        )


def _copy_to_parent(var, program):
    """A variable of the parent block holding `var`'s value, assigned at the end of the branch."""
    if var is None:
        return None
    if not isinstance(var, Variable):
        raise TypeError(f"a branch of cond must return Variables, got {type(var).__name__}")
    parent = program.current_block().parent
    out = parent.create_var(LayerHelper("cond").name + ".out", var.shape, var.dtype, type=var.type)
    assign(var, out)
    return out


def _map(fn, *structures):
    first = structures[0]
    if isinstance(first, (list, tuple)):
        for s in structures[1:]:
            if not isinstance(s, (list, tuple)) or len(s) != len(first):
                raise ValueError(f"cond: the branches return different structures: {structures}")
        return type(first)(_map(fn, *parts) for parts in zip(*structures))
    return fn(*structures)


def cond(pred, true_fn=None, false_fn=None, name=None):
    """true_fn() if pred else false_fn(); both must return the same structure of Variables (or None)."""
    for fn, what in ((true_fn, "true_fn"), (false_fn, "false_fn")):
        if fn is not None and not callable(fn):
            raise TypeError(f"The {what} in cond must be callable, but received {type(fn).__name__}")
    if isinstance(pred, Tensor):
        if pred.size != 1:
            raise TypeError(f"cond: pred must hold one element, got shape {list(pred.shape)}")
        fn = true_fn if bool(pred.numpy().reshape(())) else false_fn
        return None if fn is None else fn()
    _static_bool_scalar(pred, "cond: pred")
    program = default_main_program()
    outputs = []
    for condition, fn in ((pred, true_fn), (None, false_fn)):
        if fn is None:
            outputs.append(None)
            continue
        block = ConditionalBlock([pred if condition is not None else logical_not(pred)], is_scalar_condition=True)
        with block.block():
            result = fn()
            outputs.append(None if result is None else _map(partial(_copy_to_parent, program=program), result))
    true_out, false_out = outputs
    if true_out is None and false_out is None:
        return None
    if true_out is None or false_out is None:
        which = "true_fn returns None while false_fn returns non-None"
        if false_out is None:
            which = "true_fn returns non-None while false_fn returns None"
        raise ValueError(f"Incompatible return values of true_fn and false_fn in cond: {which}")
    mask = cast(pred, "int32")
    return _map(lambda f, t: select_input([f, t], mask), false_out, true_out)


def select_input(inputs, mask):
    """inputs[mask]: the variable of the list that the int32 `mask` picks."""
    helper = LayerHelper("select_input", inputs=list(inputs))
    first = inputs[0]
    out = helper.create_variable_for_type_inference(first.dtype)
    helper.append_op("select_input", {"X": list(inputs), "Mask": [mask]}, {"Out": [out]})
    return out


def select_output(input, outputs, mask):
    """`input` copied into outputs[mask]; the other outputs are left as they are."""
    LayerHelper("select_output", inputs=input).append_op(
        "select_output", {"X": [input], "Mask": [mask]}, {"Out": list(outputs)}
    )
    return outputs


def _check_pairs(pred_fn_pairs, default, what: str):
    if not isinstance(pred_fn_pairs, (list, tuple)):
        raise TypeError(f"The type of 'pred_fn_pairs' in {what} must be list or tuple, got {type(pred_fn_pairs)}")
    for pair in pred_fn_pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"The elements of 'pred_fn_pairs' in {what} must be 2-tuples, got {pair!r}")
        if not callable(pair[1]):
            raise TypeError(f"The function of a pair in {what} must be callable, got {type(pair[1]).__name__}")
    if default is None:
        if not pred_fn_pairs:
            raise ValueError(f"{what}: no pairs and no default")
        return list(pred_fn_pairs[:-1]), pred_fn_pairs[-1][1]
    if not callable(default):
        raise TypeError(f"The default in {what} must be callable, got {type(default).__name__}")
    return list(pred_fn_pairs), default


def case(pred_fn_pairs, default=None, name=None):
    """The function of the first pair whose pred holds, else `default` (else the last pair's)."""
    pairs, default = _check_pairs(pred_fn_pairs, default, "case")
    fn = default
    for pred, true_fn in reversed(pairs):
        fn = partial(cond, pred, true_fn, fn)
    return fn()


def switch_case(branch_index, branch_fns, default=None, name=None):
    """branch_fns[branch_index](): `branch_fns` a dict or list of (int, fn) pairs, or a list of fns
    indexed by position; `default` (else the largest key's fn) when no key matches."""
    if branch_index.dtype not in ("uint8", "int32", "int64"):
        raise TypeError(f"switch_case: branch_index must be uint8, int32 or int64, got {branch_index.dtype}")
    if branch_index.dtype != "int64":
        branch_index = cast(branch_index, "int64")
    if not isinstance(branch_fns, (list, tuple, dict)):
        raise TypeError(f"switch_case: branch_fns must be a list, tuple or dict, got {type(branch_fns).__name__}")
    fns = list(branch_fns.items()) if isinstance(branch_fns, dict) else list(branch_fns)
    if all(callable(fn) for fn in fns):
        fns = list(enumerate(fns))
    keys = set()
    for pair in fns:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"switch_case: the elements of branch_fns must be (int, fn) pairs, got {pair!r}")
        key, fn = pair
        if not isinstance(key, int):
            raise TypeError(f"switch_case: a key of branch_fns must be an int, got {type(key).__name__}")
        if key in keys:
            raise ValueError(f"The key in 'branch_fns' must be unique, but '{key}' appears more than once.")
        keys.add(key)
        if not callable(fn):
            raise TypeError(f"switch_case: the function for key {key} must be callable")
    fns.sort(key=lambda pair: pair[0])
    if default is None:
        fns, default = fns[:-1], fns[-1][1]
    elif not callable(default):
        raise TypeError("The default in switch_case must be callable.")
    return case([(equal(branch_index, fill_constant([1], "int64", key)), fn) for key, fn in fns], default)


class Switch:
    """Paddle 1.x's `with Switch() as s: with s.case(c1): ... with s.default(): ...`: the first case
    whose condition holds runs, else the default."""

    def __init__(self, name: str | None = None) -> None:
        self.helper = LayerHelper("switch", name)
        self.inside = False
        self.not_before: Variable | None = None  # none of the cases so far held

    def __enter__(self):
        self.inside = True
        return self

    def __exit__(self, exc_type, exc, tb) -> bool:
        self.inside = False
        return False

    def case(self, condition):
        if not self.inside:
            raise FleetgraphError("Switch.case must be used inside `with Switch() as switch:`")
        if self.not_before is None:
            holds = condition
            self.not_before = logical_not(condition)
        else:
            holds = logical_and(self.not_before, condition)
            self.not_before = logical_and(self.not_before, logical_not(condition))
        return ConditionalBlock([holds], is_scalar_condition=True).block()

    def default(self):
        if self.not_before is None:
            raise ValueError("there should be at least one condition")
        return ConditionalBlock([self.not_before], is_scalar_condition=True).block()


# -- loops ----------------------------------------------------------------------------------------


class While:
    """Paddle 1.x's `with While(cond).block(): ...`: the body runs while `cond` holds; the body
    updates `cond` itself (e.g. less_than(i, n, cond=cond))."""

    def __init__(self, cond, is_test: bool = False, name: str | None = None) -> None:
        self.cond_var = _static_bool_scalar(cond, "While: cond")
        self.is_test = bool(is_test)
        self.helper = LayerHelper("while", name)

    def block(self) -> BlockGuard:
        guard = BlockGuard(self.helper.main_program)
        guard.complete = self._complete
        return guard

    def _complete(self) -> None:
        block = self.helper.main_program.current_block()
        reads, writes = _reads_and_writes(block, written_first=[self.cond_var.name])
        if self.cond_var.name not in writes:
            raise FleetgraphError(
                f"While: the body never writes the condition {self.cond_var.name!r}, so the loop would not "
                "end; update it in the body, e.g. less_than(i, n, cond=cond)"
            )
        _sub_block_op(
            block, "while", {"X": reads, "Condition": [self.cond_var]}, {"Out": writes}, {"is_test": self.is_test}
        )


def while_loop(cond, body, loop_vars, is_test=False, name=None):
    """loop_vars = body(*loop_vars) while cond(*loop_vars); returns the final loop_vars."""
    if not callable(cond):
        raise TypeError("cond in while_loop should be callable")
    if not callable(body):
        raise TypeError("body in while_loop should be callable")
    if not isinstance(loop_vars, (list, tuple)):
        raise TypeError("loop_vars in while_loop should be a list or tuple")
    if not loop_vars:
        raise ValueError("loop_vars in while_loop should not be empty")
    pre_cond = cond(*loop_vars)
    if not isinstance(pre_cond, (Variable, Tensor)):
        raise TypeError(f"cond in while_loop should return a variable, got {type(pre_cond).__name__}")
    if pre_cond.dtype != "bool" or any(d > 1 for d in pre_cond.shape):
        raise TypeError("cond in while_loop should return a bool variable with one element")
    if isinstance(pre_cond, Tensor):
        while bool(pre_cond.numpy().reshape(())):
            loop_vars = _as_list(body(*loop_vars), loop_vars)
            pre_cond = cond(*loop_vars)
        return loop_vars
    loop = While(pre_cond, is_test, name)
    with loop.block():
        outputs = _as_list(body(*loop_vars), loop_vars)
        now = cond(*outputs)
        for new, old in zip(outputs, loop_vars):
            if new is not old:
                assign(new, old)
        assign(now, pre_cond)
    return loop_vars


def _as_list(outputs, loop_vars) -> list:
    outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    if len(outputs) != len(loop_vars):
        raise ValueError("body in while_loop should return the same arity (length and structure) as loop_vars")
    return outputs


# -- Print ----------------------------------------------------------------------------------------


def Print(  # noqa: N802 (Paddle's name)
    input,
    first_n=-1,
    message=None,
    summarize=20,
    print_tensor_name=True,
    print_tensor_type=True,
    print_tensor_shape=True,
    print_tensor_lod=True,
    print_phase="both",
    print_tensor_layout=True,
):
    """A copy of `input` that prints it each time the program computes it (and, with print_phase
    'both' or 'backward', its gradient in the backward pass), as Paddle's print op; dynamic mode
    prints at once."""
    if print_phase.upper() not in ("FORWARD", "BACKWARD", "BOTH"):
        raise ValueError(f"Print: print_phase {print_phase!r}; expected 'forward', 'backward' or 'both'")
    attrs = {
        "first_n": int(first_n),
        "message": message or "",
        "summarize": int(summarize),
        "print_tensor_name": bool(print_tensor_name),
        "print_tensor_type": bool(print_tensor_type),
        "print_tensor_shape": bool(print_tensor_shape),
        "print_tensor_layout": bool(print_tensor_layout),
        "print_tensor_lod": bool(print_tensor_lod),
        "print_phase": print_phase.upper(),
    }
    if isinstance(input, Tensor):
        if attrs["print_phase"] != "BACKWARD":
            name = input.name if print_tensor_name else ""
            sys.stdout.write(format_tensor(input.numpy(), name, attrs["message"], attrs))
        return input
    helper = LayerHelper("print_" + input.name, inputs=input)
    out = helper.create_variable_for_type_inference(input.dtype)
    helper.append_op("print", {"In": [input]}, {"Out": [out]}, attrs)
    return out
