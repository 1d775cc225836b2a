"""dy2static's first pass (Paddle 2.0's break_continue_transformer): `break` and `continue` of a
`while` or `for ... in range(...)` loop written as flags, so the loop can become a static while.

For each such loop whose break / continue statements sit in its body or in `if`s there:
  1. `break` becomes `<break flag> = True` and `continue` `<continue flag> = True`; the statements
     after one in its list are dropped (never reached);
  2. the statements after an `if` that may set a flag run under `if not (<flags>):`;
  3. the continue flag is set False at the start of each iteration; the break flag False before
     the loop, and a `while` tests `not <break flag> and <test>` (a range loop hands the flag's
     name to convert_for_range, through the `_fg_break` attribute of its node).
The flags are Python bools until a static `if` sets them, when the if's merge makes them static
Variables. A loop whose break or continue sits elsewhere (a `with`, a `try`) is left as it is.
"""

from __future__ import annotations

import ast
import itertools

_ESCAPES = (ast.Break, ast.Continue)
_LOOPS = (ast.While, ast.For, ast.AsyncFor)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def is_range_loop(node: ast.AST) -> bool:
    """`for <name> in range(<1 to 3 positional arguments>):`."""
    it = getattr(node, "iter", None)
    return (
        isinstance(node, ast.For)
        and isinstance(node.target, ast.Name)
        and isinstance(it, ast.Call)
        and isinstance(it.func, ast.Name)
        and it.func.id == "range"
        and 1 <= len(it.args) <= 3
        and not it.keywords
    )


def _escapes(nodes) -> list[ast.stmt]:
    """The loop's own break / continue statements under `nodes` (not those of loops inside)."""
    found = []
    for node in nodes:
        if isinstance(node, _ESCAPES):
            found.append(node)
        elif not isinstance(node, _LOOPS + _SCOPES):
            found.extend(_escapes(ast.iter_child_nodes(node)))
    return found


def _only_in_ifs(nodes) -> bool:
    for node in nodes:
        if isinstance(node, ast.If):
            if not _only_in_ifs(node.body + node.orelse):
                return False
        elif not isinstance(node, _ESCAPES) and not isinstance(node, _LOOPS + _SCOPES) and _escapes([node]):
            return False
    return True


def _name(name: str, store: bool = False) -> ast.Name:
    return ast.Name(id=name, ctx=ast.Store() if store else ast.Load())


def set_name(name: str, value: bool, at: ast.AST) -> ast.Assign:
    """`name = value`, placed at `at` (the flags' assignments)."""
    node = ast.Assign(targets=[_name(name, store=True)], value=ast.Constant(value))
    return ast.fix_missing_locations(ast.copy_location(node, at))


class BreakContinue(ast.NodeTransformer):
    """Steps 1-3 over one function body (nested functions and classes are their own)."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)

    def _keep(self, node: ast.AST) -> ast.AST:
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = _keep

    def visit_While(self, node: ast.While) -> ast.AST:
        return self._loop(node)

    def visit_For(self, node: ast.For) -> ast.AST:
        return self._loop(node) if is_range_loop(node) else self.generic_visit(node)

    def _loop(self, node: ast.While | ast.For):
        self.generic_visit(node)
        escapes = _escapes(node.body)
        if not escapes or node.orelse or not _only_in_ifs(node.body):
            return node
        n = next(self._ids)
        flags = {ast.Break: f"_fg_break_{n}", ast.Continue: f"_fg_continue_{n}"}
        used = [flags[kind] for kind in flags if any(isinstance(e, kind) for e in escapes)]
        body = _rewrite(node.body, flags, used)
        before = []
        if flags[ast.Continue] in used:  # step 3
            body.insert(0, set_name(flags[ast.Continue], False, node))
        if flags[ast.Break] in used:
            before.append(set_name(flags[ast.Break], False, node))
            if isinstance(node, ast.While):
                not_broken = ast.UnaryOp(op=ast.Not(), operand=_name(flags[ast.Break]))
                node.test = ast.BoolOp(op=ast.And(), values=[not_broken, node.test])
            else:
                node._fg_break = flags[ast.Break]
        node.body = body
        return [*before, ast.fix_missing_locations(node)]


def _rewrite(stmts: list[ast.stmt], flags: dict, used: list[str]) -> list[ast.stmt]:
    """Steps 1 and 2 over one statement list."""
    out: list[ast.stmt] = []
    for i, stmt in enumerate(stmts):
        if isinstance(stmt, _ESCAPES):
            out.append(set_name(flags[type(stmt)], True, stmt))
            return out
        if isinstance(stmt, ast.If) and _escapes([stmt]):
            stmt.body = _rewrite(stmt.body, flags, used) or [ast.Pass()]
            stmt.orelse = _rewrite(stmt.orelse, flags, used)
            out.append(stmt)
            rest = _rewrite(stmts[i + 1 :], flags, used)
            if rest:
                any_set = ast.BoolOp(op=ast.Or(), values=[_name(f) for f in used]) if len(used) > 1 else _name(used[0])
                guard = ast.If(test=ast.UnaryOp(op=ast.Not(), operand=any_set), body=rest, orelse=[])
                out.append(ast.fix_missing_locations(ast.copy_location(guard, stmts[i + 1])))
            return out
        out.append(stmt)
    return out
