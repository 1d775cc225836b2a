"""dy2static's first pass over `return` (Paddle 2.0's return_transformer): a function that returns
from inside an `if` or a loop rewritten to return once, at its end, so those statements can become
a static cond / while.

When a `return` sits inside an `if`, `while` or `for` of the function (only there and in the
function's own statement list; a `return` in a `with` or `try` leaves the function as it is):
  1. `return value` becomes `<value name> = value; <flag> = True`, followed by `break` in a loop;
     the statements after it in its list are dropped (never reached);
  2. the statements after a statement that may set the flag run under `if not <flag>:`, and after
     a loop inside a loop `if <flag>: break` ends the outer one too;
  3. the function starts with the flag False and the value NO_RETURN, and ends with
     `return returned(<value name>)`.
A static `if` merges NO_RETURN with the other branch's value (the value is read only once the flag
holds), so `if x > 0: return a` ... `return b` gives select(b, a).
"""

from __future__ import annotations

import ast

from .break_continue import set_name
from .convert_operators import RETURN_VALUE as _VALUE

_FLAG = "_fg_return_flag"
_LOOPS = (ast.While, ast.For)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _returns(node: ast.AST) -> list[ast.Return]:
    """The returns of `node`'s own scope."""
    if isinstance(node, ast.Return):
        return [node]
    if isinstance(node, _SCOPES):
        return []
    return [r for child in ast.iter_child_nodes(node) for r in _returns(child)]


def _convertible(stmts: list[ast.stmt]) -> bool:
    """Every return under `stmts` sits in statement lists of ifs and loops only."""
    for stmt in stmts:
        if isinstance(stmt, ast.If):
            if not _convertible(stmt.body + stmt.orelse):
                return False
        elif isinstance(stmt, _LOOPS):
            if not _convertible(stmt.body + stmt.orelse):
                return False
        elif not isinstance(stmt, ast.Return) and _returns(stmt):
            return False
    return True


def _flag(negated: bool = False) -> ast.expr:
    flag = ast.Name(id=_FLAG, ctx=ast.Load())
    return ast.UnaryOp(op=ast.Not(), operand=flag) if negated else flag


def _guarded(test: ast.expr, body: list[ast.stmt], at: ast.AST) -> ast.If:
    return ast.fix_missing_locations(ast.copy_location(ast.If(test=test, body=body, orelse=[]), at))


def _rewrite(stmts: list[ast.stmt], in_loop: bool) -> list[ast.stmt]:
    """Steps 1 and 2 over one statement list."""
    out: list[ast.stmt] = []
    for i, stmt in enumerate(stmts):
        if isinstance(stmt, ast.Return):
            value = ast.Assign(targets=[ast.Name(id=_VALUE, ctx=ast.Store())], value=stmt.value or ast.Constant(None))
            ast.copy_location(value, stmt)
            out += [ast.fix_missing_locations(value), set_name(_FLAG, True, stmt)]
            if in_loop:
                out.append(ast.copy_location(ast.Break(), stmt))
            return out
        if not _returns(stmt):
            out.append(stmt)
            continue
        if isinstance(stmt, ast.If):
            stmt.body = _rewrite(stmt.body, in_loop) or [ast.copy_location(ast.Pass(), stmt)]
            stmt.orelse = _rewrite(stmt.orelse, in_loop)
            out.append(stmt)
        else:
            stmt.body = _rewrite(stmt.body, in_loop=True)
            stmt.orelse = _rewrite(stmt.orelse, in_loop)
            out.append(stmt)
            if in_loop:
                out.append(_guarded(_flag(), [ast.copy_location(ast.Break(), stmt)], stmt))
        rest = _rewrite(stmts[i + 1 :], in_loop)
        if rest:
            out.append(_guarded(_flag(negated=True), rest, stmts[i + 1]))
        return out
    return out


def rewrite_returns(fdef: ast.FunctionDef, runtime: str) -> None:
    """Steps 1-3 on `fdef` in place, when a return of it sits inside an if or a loop that allows it."""
    nested = [r for stmt in fdef.body if not isinstance(stmt, ast.Return) for r in _returns(stmt)]
    generator = any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in ast.walk(fdef))
    if not nested or generator or not _convertible(fdef.body):
        return
    at = fdef.body[0]
    no_return = ast.Attribute(value=ast.Name(id=runtime, ctx=ast.Load()), attr="NO_RETURN", ctx=ast.Load())
    start = ast.Assign(targets=[ast.Name(id=_VALUE, ctx=ast.Store())], value=no_return)
    returned = ast.Call(
        func=ast.Attribute(value=ast.Name(id=runtime, ctx=ast.Load()), attr="returned", ctx=ast.Load()),
        args=[ast.Name(id=_VALUE, ctx=ast.Load())],
        keywords=[],
    )
    end = ast.copy_location(ast.Return(value=returned), fdef.body[-1])
    body = _rewrite(fdef.body, in_loop=False)
    fdef.body = [set_name(_FLAG, False, at), ast.copy_location(start, at), *body, end]
    ast.fix_missing_locations(fdef)
