"""The run-time half of dy2static (Paddle's `convert_operators.py`): every converted `if`, `while`,
`for ... in range(...)`, `and`, `or` and `not` calls one of these. A test that is a static Variable
builds the program's cond / while_loop; any other test runs Python's own statement, so conditions on
Python values (`self.training`, a shape, a flag) keep their meaning.

A converted statement's branches and body are functions of the names it assigns: they take those
names' values and return the new ones, so in a static program both branches run (each into its
sub-block) from the same values.
"""

from __future__ import annotations

from ..dygraph.tensor import Tensor
from ..ir import unique_name
from ..ir.errors import FleetgraphError
from ..ir.framework import default_main_program
from ..ir.program import Variable
from ..layers.control_flow import ConditionalBlock, select_input, while_loop
from ..layers.math import logical_and, logical_not, logical_or
from ..layers.tensor import assign, cast, fill_constant, increment, reshape


class UndefinedVar:
    """The value of a name a converted statement assigns but that was not bound before it
    (Paddle's UndefinedVar): a branch or loop that never assigns it hands this back."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"UndefinedVar({self.name!r})"


class _NoReturn:
    """The return value of a converted function before a `return` of it ran (returns.py)."""

    def __repr__(self) -> str:
        return "NO_RETURN"


NO_RETURN = _NoReturn()
RETURN_VALUE = "_fg_return_value"  # the name returns.py gives a converted function's return value


def _shown(name: str) -> str:
    return "the returned value" if name == RETURN_VALUE else repr(name)


def returned(value):
    """What a converted function returns: None where it fell off its end."""
    return None if value is NO_RETURN else value


def is_static(value) -> bool:
    """Whether `value` is a Variable of a program being built (an eager Tensor is a Variable too)."""
    return isinstance(value, Variable) and not isinstance(value, Tensor)


def ld(scope: dict, name: str):
    """`name`'s value in `scope` (the converted function's locals()), or an UndefinedVar for it."""
    return scope[name] if name in scope else UndefinedVar(name)


def python_test(test, where: str):
    """The test of a statement dy2static left as Python (`where` says why): a static Variable there
    would always be true, so it is refused."""
    if is_static(test):
        raise FleetgraphError(f"dy2static {where}; its test is a static Variable")
    return test


def _static_pred(pred, where: str) -> Variable:
    if any(d > 1 for d in pred.shape):
        raise FleetgraphError(f"dy2static {where}: expected a condition of one element, got shape {list(pred.shape)}")
    if list(pred.shape) != [1]:  # a batch-sized [-1] test: its one element is checked as it runs
        pred = reshape(pred, [1])
    return pred if pred.dtype == "bool" else cast(pred, "bool")


def _constant_like(value, like: Variable) -> Variable:
    return fill_constant([1], like.dtype, value)


def _to_static(value, name: str, where: str) -> Variable:
    """A loop-carried value as a static Variable (Python numbers become constants, as Paddle's
    to_static_variable)."""
    if is_static(value):
        return value
    if isinstance(value, bool):
        return fill_constant([1], "bool", value)
    if isinstance(value, int):
        return fill_constant([1], "int64", value)
    if isinstance(value, float):
        return fill_constant([1], "float32", value)
    if value is NO_RETURN:
        raise FleetgraphError(
            f"dy2static {where}: a return inside a loop over a static test; expected the value assigned to a "
            "name, and returned after the loop"
        )
    if isinstance(value, UndefinedVar):
        raise FleetgraphError(
            f"dy2static {where}: {name!r} is first assigned inside the loop and used after it; expected a value "
            "before the loop, to carry it through a static while"
        )
    raise FleetgraphError(
        f"dy2static {where}: the loop carries {name!r}; expected a Variable or a Python number, "
        f"got {type(value).__name__}"
    )


# -- if / else ------------------------------------------------------------------------------------


def convert_ifelse(pred, true_fn, false_fn, args: tuple, arg_names: tuple, names: tuple, where: str):
    """`names` after `if pred: true_fn else: false_fn`, each branch called with `args` (the values
    of `arg_names`) and returning the values of `names`."""
    if not is_static(pred):
        return true_fn(*args) if pred else false_fn(*args)
    pred = _static_pred(pred, where)
    before = dict(zip(arg_names, args))
    outs = []
    for holds, fn in ((pred, true_fn), (logical_not(pred), false_fn)):
        with ConditionalBlock([holds], is_scalar_condition=True).block():
            values = fn(*args)
            outs.append([v if v is before.get(n) else _to_parent(v) for n, v in zip(names, values)])
    mask = cast(pred, "int32")
    return tuple(_merge(n, t, f, mask, where) for n, t, f in zip(names, *outs))


def _to_parent(value):
    """A branch's new Variables copied into variables of the block around the branch."""
    if isinstance(value, (list, tuple)):
        return type(value)(_to_parent(v) for v in value)
    if not is_static(value):
        return value
    parent = default_main_program().current_block().parent
    out = parent.create_var(
        unique_name.generate("dy2static_ifelse") + ".out", value.shape, value.dtype, type=value.type
    )
    assign(value, out)
    return out


def _merge(name: str, true_value, false_value, mask: Variable, where: str):
    """One name after a static `if`: the branch's value that `mask` picks."""
    if true_value is false_value or false_value is NO_RETURN:  # a value is read once its return ran
        return true_value
    if true_value is NO_RETURN:
        return false_value
    if isinstance(true_value, UndefinedVar) or isinstance(false_value, UndefinedVar):
        raise FleetgraphError(
            f"dy2static {where}: {name!r} is assigned in only one branch and used after the if; expected it "
            "assigned before the if or in both branches"
        )
    sequences = isinstance(true_value, (list, tuple)), isinstance(false_value, (list, tuple))
    if any(sequences):
        if not all(sequences) or len(true_value) != len(false_value):
            raise FleetgraphError(
                f"dy2static {where}: the branches give {_shown(name)} different structures; expected the same, "
                f"got {_structure(true_value)} and {_structure(false_value)}"
            )
        return type(true_value)(_merge(name, t, f, mask, where) for t, f in zip(true_value, false_value))
    if not all(is_static(v) or isinstance(v, (bool, int, float)) for v in (true_value, false_value)):
        raise FleetgraphError(
            f"dy2static {where}: the branches give {_shown(name)} different values ({true_value!r} and "
            f"{false_value!r}); expected Variables or numbers, which a static if can choose between"
        )
    if not (is_static(true_value) or is_static(false_value)):  # e.g. a break flag set in one branch
        true_value = _to_static(true_value, name, where)
    if not is_static(true_value):
        true_value = _constant_like(true_value, false_value)
    if not is_static(false_value):
        false_value = _constant_like(false_value, true_value)
    return select_input([false_value, true_value], mask)


def _structure(value) -> str:
    if isinstance(value, (list, tuple)):
        return f"{type(value).__name__} of {len(value)}"
    return type(value).__name__


# -- while and for range --------------------------------------------------------------------------


def convert_while_loop(cond_fn, body_fn, loop_vars: tuple, names: tuple, where: str):
    """`names` after `while cond_fn(*loop_vars): loop_vars = body_fn(*loop_vars)`."""
    pred = cond_fn(*loop_vars)
    if not is_static(pred):
        while pred:
            loop_vars = body_fn(*loop_vars)
            pred = python_test(cond_fn(*loop_vars), f"{where}: a Python loop whose test became static inside it")
        return loop_vars
    if not names:
        raise FleetgraphError(f"dy2static {where}: the loop assigns no name used after it or by its test")
    first = [_static_pred(pred, where)]  # the test built above is the loop's first condition

    def cond(*values):
        return first.pop() if first else _static_pred(cond_fn(*values), where)

    def body(*values):
        outs = body_fn(*values)
        return [v if is_static(v) else _constant_like(v, old) for v, old in zip(outs, values)]

    static_vars = [_to_static(v, n, where) for v, n in zip(loop_vars, names)]
    return tuple(while_loop(cond, body, static_vars))


def convert_for_range(range_args: tuple, body_fn, index, loop_vars, names: tuple, where: str, broke=None):
    """`(index, *names)` after `for index in range(*range_args): loop_vars = body_fn(index, *loop_vars)`,
    ending early once the loop variable named `broke` (the break flag) holds. With a static bound it
    is a while over the index (after the loop the index is one step past its last value, as Paddle's
    converted loop; a Variable step is taken as positive)."""
    flag = names.index(broke) if broke else None
    if not any(is_static(a) for a in range_args):
        for index in range(*range_args):
            loop_vars = body_fn(index, *loop_vars)
            if flag is not None and python_test(loop_vars[flag], f"{where}: a break under a static if"):
                break
        return (index, *loop_vars)
    start, stop, step = (0, *range_args, 1) if len(range_args) == 1 else (*range_args, 1)[:3]
    if not is_static(step) and step == 0:
        raise FleetgraphError(f"dy2static {where}: range() arg 3 must not be zero")
    bound = stop if is_static(stop) else start
    start = start if is_static(start) else _constant_like(start, bound)
    stop = stop if is_static(stop) else _constant_like(stop, bound)
    descending = not is_static(step) and step < 0

    def cond(i, *values):
        in_range = i > stop if descending else i < stop
        if flag is None:
            return in_range
        return convert_logical_and(lambda: in_range, lambda: convert_logical_not(values[flag]))

    def body(i, *values):
        outs = body_fn(i, *values)
        return (increment(i, float(step), in_place=False) if not is_static(step) else i + step, *outs)

    return convert_while_loop(cond, body, (start, *loop_vars), ("range index", *names), where)


# -- and, or, not ---------------------------------------------------------------------------------


def _as_bool(x: Variable) -> Variable:
    return x if x.dtype == "bool" else cast(x, "bool")


def convert_logical_and(x_fn, y_fn):
    """`x_fn() and y_fn()`: logical_and when both are static, else Python's `and` (y_fn() runs
    only when Python's would)."""
    x = x_fn()
    if not is_static(x):
        return x and y_fn()
    y = y_fn()
    return logical_and(_as_bool(x), _as_bool(y)) if is_static(y) else (y and x)


def convert_logical_or(x_fn, y_fn):
    """`x_fn() or y_fn()`, as convert_logical_and."""
    x = x_fn()
    if not is_static(x):
        return x or y_fn()
    y = y_fn()
    return logical_or(_as_bool(x), _as_bool(y)) if is_static(y) else (y or x)


def convert_logical_not(x):
    """`not x`: logical_not of a static Variable, else Python's `not`."""
    return logical_not(_as_bool(x)) if is_static(x) else not x
