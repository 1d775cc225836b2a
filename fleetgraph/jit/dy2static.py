"""Dygraph-to-static conversion of control flow (Paddle 2.0's dygraph_to_static): a function's
source rewritten so that its `if`, `while` and `for ... in range(...)` call the convert_* functions,
which build the static cond / while_loop when their test is a static Variable.

Steps of `convert_function(func)`:
  1. parse the function's source (inspect.getsource, dedented), its decorators dropped, and write
     its returns from inside ifs and loops (returns.py) and the break / continue of its loops
     (break_continue.py) as flags;
  2. rewrite it bottom-up (`_ControlFlow`): `if test: A else: B` becomes two functions of the names
     the branches assign and one `names = convert_ifelse(test, true_fn, false_fn, ...)`, returning
     the names the statement hands on (read after it, or read by it before it writes them);
     `while test: A` becomes `names = convert_while_loop(cond_fn, body_fn, ...)` over the names the
     body assigns and the test, a later statement or the body's next iteration reads; `for i in
     range(...)` becomes `convert_for_range`; `and` / `or` / `not` in those tests become
     convert_logical_*. A statement holding `return` or `yield` (or a `break` / `continue` step 1
     left, or a loop with `else`) stays Python, its test checked by `python_test`, which refuses a static Variable;
  3. compile it where the source lives (tracebacks and errors name its lines) into a function with
     the original globals, defaults and closure cells.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import types
import warnings
import weakref
from collections import Counter

from ..ir.errors import FleetgraphError
from . import convert_operators, logging_utils
from .break_continue import BreakContinue, is_range_loop
from .returns import rewrite_returns

_RUNTIME = "_fg_jst"  # the name the converted code reaches convert_operators by (a closure cell)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


class _Events(ast.NodeVisitor):
    """The names a subtree reads and writes, in evaluation order; a nested function's, lambda's or
    comprehension's reads count (it may run later), its writes do not (they are its own)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []  # ("load" | "store" | "maybe", name)
        self._depth = 0
        self._branches = 0  # stores under an if or a loop body may not happen ("maybe")

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self.events.append(("load", node.id))
        elif self._depth == 0:
            self.events.append(("maybe" if self._branches else "store", node.id))

    def _branching(self, node: ast.AST) -> None:
        self.visit(node.test if isinstance(node, (ast.If, ast.While)) else node.iter)
        self._branches += 1
        for child in ([node.target] if isinstance(node, ast.For) else []) + node.body + node.orelse:
            self.visit(child)
        self._branches -= 1

    visit_If = visit_While = visit_For = _branching

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            self.visit(target)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        if isinstance(node.target, ast.Name):
            self.events.append(("load", node.target.id))
        self.visit(node.target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
        self.visit(node.target)

    def _scope(self, node: ast.AST) -> None:
        if self._depth == 0 and not isinstance(node, ast.Lambda):
            self.events.append(("store", node.name))
        self._depth += 1
        self.generic_visit(node)
        self._depth -= 1

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = _scope

    def _comprehension(self, node: ast.AST) -> None:
        self._depth += 1
        self.generic_visit(node)
        self._depth -= 1

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension


def _events(nodes) -> list[tuple[str, str]]:
    visitor = _Events()
    for node in nodes if isinstance(nodes, list) else [nodes]:
        visitor.visit(node)
    return visitor.events


def _stored(events) -> list[str]:
    return list(dict.fromkeys(name for kind, name in events if kind != "load"))


def _read_first(events) -> set[str]:
    """Names whose first event is a read: their value from before the statement matters."""
    first: dict[str, str] = {}
    for kind, name in events:
        if kind != "maybe":
            first.setdefault(name, kind)
    return {name for name, kind in first.items() if kind == "load"}


def _blocker(nodes) -> ast.AST | None:
    """The first return / yield / await, or break / continue of the statement itself (not of a
    loop inside it), that keeps a statement from becoming functions."""
    for node in nodes:
        for stmt, depth in _walk_scope(node, loop_depth=0):
            if isinstance(stmt, (ast.Return, ast.Yield, ast.YieldFrom, ast.Await)):
                return stmt
            if isinstance(stmt, (ast.Break, ast.Continue)) and depth == 0:
                return stmt
    return None


def _walk_scope(node: ast.AST, loop_depth: int):
    """Nodes of `node`'s own scope with how many loops inside `node` enclose each."""
    yield node, loop_depth
    if isinstance(node, _SCOPES):
        return
    inner = loop_depth + isinstance(node, (ast.While, ast.For, ast.AsyncFor))
    for child in ast.iter_child_nodes(node):
        if isinstance(node, (ast.While, ast.For)) and child in node.orelse:
            yield from _walk_scope(child, loop_depth)
        else:
            yield from _walk_scope(child, inner)


def _parse(code: str) -> list[ast.stmt]:
    return ast.parse(textwrap.dedent(code)).body


class _Logical(ast.NodeTransformer):
    """`a and b`, `a or b`, `not a` in a test as convert_logical_*, operands evaluated lazily."""

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.expr:
        self.generic_visit(node)
        name = "convert_logical_and" if isinstance(node.op, ast.And) else "convert_logical_or"
        result = node.values[-1]
        for value in reversed(node.values[:-1]):
            result = _call(name, [_thunk(value), _thunk(result)])
        return ast.copy_location(result, node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.copy_location(_call("convert_logical_not", [node.operand]), node)
        return node

    def _keep(self, node: ast.AST) -> ast.AST:
        return node

    visit_Lambda = visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _keep


def _arguments(names) -> ast.arguments:
    return ast.arguments(
        posonlyargs=[], args=[ast.arg(arg=n) for n in names], kwonlyargs=[], kw_defaults=[], defaults=[]
    )


def _thunk(expr: ast.expr) -> ast.Lambda:
    return ast.Lambda(args=_arguments([]), body=expr)


def _call(name: str, args: list[ast.expr]) -> ast.Call:
    func = ast.Attribute(value=ast.Name(id=_RUNTIME, ctx=ast.Load()), attr=name, ctx=ast.Load())
    return ast.Call(func=func, args=args, keywords=[])


def _test(expr: ast.expr) -> ast.expr:
    return _Logical().visit(expr)


def _names_tuple(names) -> str:
    return "(" + "".join(f"{n}, " for n in names) + ")"


def _loads(names) -> str:
    return "(" + "".join(f"{_RUNTIME}.ld(locals(), {n!r}), " for n in names) + ")"


def _place(nodes: list[ast.stmt], at: ast.AST) -> list[ast.stmt]:
    for node in nodes:
        for sub in ast.walk(node):
            if "lineno" in sub._attributes:
                ast.copy_location(sub, at)
    return nodes


class _ControlFlow(ast.NodeTransformer):
    """Step 2 over one function body (nested functions and classes are left as they are)."""

    def __init__(self, loads: Counter, where) -> None:
        self.loads, self.where, self.count = loads, where, 0

    def _fresh(self, kind: str) -> str:
        self.count += 1
        return f"_fg_{kind}_{self.count}"

    def _live(self, node: ast.AST, paths: list[list[ast.AST]]) -> set[str]:
        """Names read outside `node` (after it, or again in an enclosing loop) or read first on one
        of its `paths` (a branch; a loop's test and body)."""
        inside = Counter(name for kind, name in _events(node) if kind == "load")
        first = set().union(*(_read_first(_events(path)) for path in paths))
        return {n for n in self.loads if self.loads[n] > inside[n]} | first

    def _keep_python(self, node, blocker: ast.AST) -> ast.AST:
        what = type(blocker).__name__.lower()
        if isinstance(node, (ast.While, ast.For)) and node.orelse and blocker is node:
            what = "else clause"
        reason = f"{self.where(node)} stays Python: it holds a {what} (line {self.where.line(blocker)})"
        if isinstance(node, (ast.If, ast.While)):
            node.test = _call("python_test", [_test(node.test), ast.Constant(reason)])
        else:
            node.iter.args = [_call("python_test", [arg, ast.Constant(reason)]) for arg in node.iter.args]
        return node

    def visit_If(self, node: ast.If) -> ast.AST:
        names = _stored(_events(node.body + node.orelse))
        blocker = _blocker(node.body + node.orelse)
        self.generic_visit(node)
        if blocker is not None:
            return self._keep_python(node, blocker)
        live = self._live(node, [[node.test, *node.body], [node.test, *node.orelse]])
        returned = [n for n in names if n in live]
        true_fn, false_fn = self._fresh("true_fn"), self._fresh("false_fn")
        code = _parse(f"""
            def {true_fn}({", ".join(names)}):
                return {_names_tuple(returned)}
            def {false_fn}({", ".join(names)}):
                return {_names_tuple(returned)}
            {_names_tuple(returned)} = {_RUNTIME}.convert_ifelse(
                None, {true_fn}, {false_fn}, {_loads(names)}, {tuple(names)!r}, {tuple(returned)!r},
                {self.where(node)!r})
        """)
        _place(code, node)
        code[0].body[:0] = node.body
        code[1].body[:0] = node.orelse
        code[2].value.args[0] = _test(node.test)
        return code

    def _loop_vars(self, node, body, extra=()) -> list[str]:
        events = _events(body)
        test_loads = {name for kind, name in _events(node.test if isinstance(node, ast.While) else node.iter)}
        head = [node.test] if isinstance(node, ast.While) else [node.iter, node.target]
        live = self._live(node, [head + node.body])
        return [n for n in _stored(events) if n not in extra and (n in test_loads or n in live)]

    def visit_While(self, node: ast.While) -> ast.AST:
        blocker = node if node.orelse else _blocker(node.body)
        loop_vars = self._loop_vars(node, node.body)
        self.generic_visit(node)
        if blocker is not None:
            return self._keep_python(node, blocker)
        cond_fn, body_fn = self._fresh("cond"), self._fresh("body")
        code = _parse(f"""
            def {cond_fn}({", ".join(loop_vars)}):
                return None
            def {body_fn}({", ".join(loop_vars)}):
                return {_names_tuple(loop_vars)}
            {_names_tuple(loop_vars)} = {_RUNTIME}.convert_while_loop(
                {cond_fn}, {body_fn}, {_loads(loop_vars)}, {tuple(loop_vars)!r}, {self.where(node)!r})
        """)
        _place(code, node)
        code[0].body[0].value = _test(node.test)
        code[1].body[:0] = node.body
        return code

    def visit_For(self, node: ast.For) -> ast.AST:
        if not is_range_loop(node):
            return self.generic_visit(node)
        blocker = node if node.orelse else _blocker(node.body)
        index, broke = node.target.id, getattr(node, "_fg_break", None)
        loop_vars = self._loop_vars(node, node.body, extra=(index, broke))
        if broke:
            self.loads[broke] += 1  # convert_for_range reads the flag after each iteration
            loop_vars.append(broke)
        self.generic_visit(node)
        if blocker is not None:
            return self._keep_python(node, blocker)
        body_fn = self._fresh("for_body")
        code = _parse(f"""
            def {body_fn}({", ".join([index, *loop_vars])}):
                return {_names_tuple(loop_vars)}
            {_names_tuple([index, *loop_vars])} = {_RUNTIME}.convert_for_range(
                None, {body_fn}, {_RUNTIME}.ld(locals(), {index!r}), {_loads(loop_vars)}, {tuple(loop_vars)!r},
                {self.where(node)!r}, {broke!r})
        """)
        _place(code, node)
        code[0].body[:0] = node.body
        code[1].value.args[0] = ast.Tuple(elts=list(node.iter.args), ctx=ast.Load())
        ast.copy_location(code[1].value.args[0], node)
        return code

    def visit_Call(self, node: ast.Call) -> ast.AST:
        """Zero-argument super() needs the class cell the compiler gives only a method in a class."""
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "super" and not node.args and self.where.self_name:
            node.args = [ast.Name(id="__class__", ctx=ast.Load()), ast.Name(id=self.where.self_name, ctx=ast.Load())]
            ast.fix_missing_locations(ast.copy_location(node, node))
        return node

    def _keep(self, node: ast.AST) -> ast.AST:
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = _keep


class _Where:
    """Source positions for errors: `file:line: the statement's first line`."""

    def __init__(self, func, source: str, first_line: int) -> None:
        self.file = inspect.getsourcefile(func) or "<unknown>"
        self.lines, self.offset = source.splitlines(), first_line - 1
        code = func.__code__
        uses_class = "__class__" in code.co_freevars
        self.self_name = code.co_varnames[0] if uses_class and code.co_argcount else None

    def line(self, node: ast.AST) -> int:
        return node.lineno + self.offset

    def __call__(self, node: ast.AST) -> str:
        return f"{self.file}:{self.line(node)}: `{self.lines[node.lineno - 1].strip()}`"


NOT_TO_STATIC = "_fg_not_to_static"  # the attribute paddle.jit.not_to_static sets


def not_to_static(func=None):
    """Mark `func` so that dy2static leaves it as written (Paddle 2.0's paddle.jit.not_to_static):
    called from converted code it runs its Python control flow as it is."""
    if func is None:
        return not_to_static
    setattr(getattr(func, "__func__", func), NOT_TO_STATIC, True)
    return func


_CONVERTED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _converted_ast(func) -> tuple[ast.Module, _Where]:
    """Steps 1 and 2: the function's definition, converted, alone in a module."""
    lines, first_line = inspect.getsourcelines(func)
    source = textwrap.dedent("".join(lines))
    tree = ast.parse(source)
    fdef = tree.body[0]
    if not isinstance(fdef, ast.FunctionDef) or fdef.name != func.__name__:
        raise TypeError(f"{func.__qualname__}: expected a function defined with def")
    fdef.decorator_list = []
    where = _Where(func, source, first_line)
    rewrite_returns(fdef, _RUNTIME)
    flags = BreakContinue()
    fdef.body = [out for stmt in fdef.body for out in _as_list(flags.visit(stmt))]
    loads = Counter(name for kind, name in _events(fdef.body) if kind == "load")
    transformer = _ControlFlow(loads, where)
    fdef.body = [out for stmt in fdef.body for out in _as_list(transformer.visit(stmt))]
    ast.fix_missing_locations(tree)
    return tree, where


def _as_list(result) -> list:
    return result if isinstance(result, list) else [result]


def convert_function(func):
    """`func` with its control flow converted (cached per function). A function without a
    `def` source (a lambda, a builtin, code made by exec) is returned as it is, with a warning for
    the last."""
    func = getattr(func, "__func__", func)
    if getattr(func, NOT_TO_STATIC, False):
        logging_utils.log(
            2, f"{func.__qualname__} is not converted when it is decorated by 'paddle.jit.not_to_static'."
        )
        return func
    if func in _CONVERTED:
        return _CONVERTED[func]
    try:
        tree, where = _converted_ast(func)
    except (OSError, TypeError) as exc:  # step 1 found no source to convert
        if func.__name__ != "<lambda>" and not isinstance(exc, TypeError):
            warnings.warn(f"dy2static: {func.__qualname__} runs unconverted: {exc}", stacklevel=2)
        _CONVERTED[func] = func
        return func
    logging_utils.log(1, f"Convert callable object: convert {func.__qualname__}.")
    logging_utils.log_transformed_code(ast.unparse(tree))
    converted = _compile(func, tree, where)
    _CONVERTED[func] = converted
    return converted


def _compile(func, tree: ast.Module, where: _Where):
    """Step 3: compiled inside a factory whose parameters are the original free variables and the
    runtime, so the converted code's free variables are cells we hand it: the original ones."""
    fdef = tree.body[0]
    ast.increment_lineno(tree, where.offset)
    factory = ast.FunctionDef(
        name="_fg_factory",
        args=_arguments([_RUNTIME, *func.__code__.co_freevars]),
        body=[fdef, ast.Return(value=ast.Name(id=fdef.name, ctx=ast.Load()))],
        decorator_list=[],
    )
    ast.copy_location(factory, fdef)
    module = ast.fix_missing_locations(ast.Module(body=[factory], type_ignores=[]))
    code = compile(module, where.file, "exec")
    factory_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    inner = next(c for c in factory_code.co_consts if isinstance(c, types.CodeType) and c.co_name == fdef.name)
    cells = dict(zip(func.__code__.co_freevars, func.__closure__ or ()))
    cells[_RUNTIME] = types.CellType(convert_operators)
    converted = types.FunctionType(
        inner, func.__globals__, func.__name__, func.__defaults__, tuple(cells[n] for n in inner.co_freevars)
    )
    converted.__kwdefaults__ = func.__kwdefaults__
    converted.__qualname__, converted.__doc__ = func.__qualname__, func.__doc__
    converted.__wrapped__ = func
    return converted


def converted_code(func) -> str:
    """The converted source of `func` (ProgramTranslator.get_code)."""
    return ast.unparse(_converted_ast(getattr(func, "__func__", func))[0])


class ProgramTranslator:
    """Paddle's switch of dygraph-to-static (one instance): `ProgramTranslator().enable(False)`
    makes to_static layers and functions run their dynamic code, and tracing take Python's control
    flow as it goes. The switch is this class's, so the translator of program_translator.py (the one
    that also builds and runs programs) flips the same one."""

    enable_to_static = True
    last_translated = None  # the api.Traced program translated last (what save_inference_model saves)

    def __new__(cls) -> ProgramTranslator:
        if "_instance" not in cls.__dict__:  # one per class: a subclass gets its own
            cls._instance = super().__new__(cls)
        return cls._instance

    @classmethod
    def get_instance(cls) -> ProgramTranslator:
        return cls()

    def enable(self, enable_to_static: bool) -> None:
        if not isinstance(enable_to_static, bool):
            raise TypeError(f"ProgramTranslator.enable: expected a bool, got {type(enable_to_static).__name__}")
        ProgramTranslator.enable_to_static = enable_to_static

    @staticmethod
    def remember(traced) -> None:
        """`traced` (an api.Traced) is the program translated last, for every translator."""
        ProgramTranslator.last_translated = traced

    def get_func(self, dygraph_func):
        """The function with its control flow converted (building programs when called on
        static Variables); the function itself while conversion is off."""
        return convert_function(dygraph_func) if self.enable_to_static else dygraph_func

    def get_code(self, dygraph_func) -> str:
        return converted_code(dygraph_func)


def refuse_unconvertible(func) -> None:
    """jit.to_static's check of a plain function: it must have a def to convert."""
    if getattr(func, "__name__", None) == "<lambda>" or not inspect.isfunction(getattr(func, "__func__", func)):
        raise FleetgraphError(f"jit.to_static: expected a paddle.nn.Layer or a function defined with def, got {func!r}")
