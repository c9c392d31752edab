"""What a function returns: the calls its value comes from, and the dict it builds.

Per function, `ret` lists the called names whose results the return value is
(or wraps: a call's first argument, a conditional, `await`, a local bound to
one); `shape` is the returned dict's shape: its literal keys, with the names
called in each value (and, where a value is a literal constant or a call of
a function of the same module, which: `own`), and its spreads (`**x`,
`d.update(x)`: the calls the
value comes from with the resolved targets of plain-name calls, or opaque
text). A local's dict is followed through the binding model as the function
builds it (`d["k"] = ...`, `d.update(...)`); several returns report the union.

Shallow on purpose: it runs on every return and assignment of every parsed
file. A rule's visitor inherits `ReturnedValuesVisitor` (CTX502 reads the
readback surfaces off it) and keeps `returns`, its ReturnFacts by function.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, string_value
from ctxlint.facts.typed import Span
from ctxlint.facts.visitor import FileVisitor
from ctxlint.program.binding_values import Bound
from ctxlint.program.bindings import KEY as BINDINGS

# Methods that read a dict without adding to it (`d.get("k")` is no readback).
NOT_CALLS = frozenset(("get", "items", "keys", "values", "copy", "pop", "setdefault"))


class LazyText:
    """A spread's text (60 characters of its snippet), generated only if asked:
    compared, or encoded with the facts (as its str). Most spreads are a local's
    call result that no return reports, and a codegen of each cost more than
    the rest of this question."""

    __slots__ = ("ctx", "node", "value")

    def __init__(self, ctx: FileContext, node: cst.CSTNode) -> None:
        self.ctx: FileContext | None = ctx
        self.node: cst.CSTNode | None = node
        self.value = ""

    def __str__(self) -> str:
        if self.ctx is not None:
            self.value = self.ctx.snippet(self.node)[:60]  # type: ignore[arg-type]
            self.ctx = self.node = None
        return self.value

    def __eq__(self, other: object) -> bool:
        return str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))


@dataclass(frozen=True, slots=True)
class Spread:
    """A `**spread` or `update(...)` argument: the calls its value comes from
    (none: opaque) and the resolved targets of the plain-name ones."""

    text: str  # how the code spells it (60 characters)
    calls: list[str] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class DictShape:
    """A dict's literal keys (-> the names called in each value) and spreads;
    the walk adds to both as the function builds the dict."""

    keys: dict[str, list[str]]
    spreads: list[Spread]
    # key -> what its value is, where that can make it the surface's own
    # description rather than a field: `=<literal>` for a constant,
    # `call <module.function>` for a call of a function this module defines
    own: dict[str, str] = field(default_factory=dict)

    def put(self, key: str, calls: list[str], own: str | None) -> None:
        """Set a key (as the walk builds the dict), with what its value is."""
        self.keys[key] = calls
        if own is None:
            self.own.pop(key, None)
        else:
            self.own[key] = own


@dataclass(frozen=True, slots=True)
class ReturnFacts:
    name: str
    ret: list[str]  # the called names the return value is the result of
    shape: DictShape | None = None  # the dict it returns (a surface or a part)
    span: Span | None = None  # its name's, where it returns a dict


@dataclass(frozen=True, slots=True)
class LocalValue:
    """What a function's local holds: a call's result, a dict, or both."""

    calls: list[str]
    shape: DictShape | None


@dataclass(slots=True)
class Frame:
    """The function being walked."""

    params: list[str]  # positional parameters; "*" for any other kind
    scope: str  # where the binding model keeps its locals
    ret: set[str] = field(default_factory=set)
    shape: DictShape | None = None
    keep: bool = False  # a subclass keeps its ReturnFacts though it returns nothing known


def called(expr: cst.BaseExpression) -> str | None:
    """The called name of a call (`a.b.resolved_dict()` -> `resolved_dict`)."""
    if not isinstance(expr, cst.Call):
        return None
    if isinstance(expr.func, cst.Attribute):
        return expr.func.attr.value
    return expr.func.value if isinstance(expr.func, cst.Name) else None


def strip(expr: cst.BaseExpression) -> cst.BaseExpression:
    while isinstance(expr, cst.Await):
        expr = expr.expression
    return expr


class ReturnedValuesVisitor(FileVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.returns: dict[str, ReturnFacts] = {}  # function qualname -> what it returns
        self.stack: list[Frame] = []
        # a function's local -> the LocalValue it holds, asked of the binding model
        self.locals = ctx.parts[BINDINGS].track(self._holds_value)

    # -- functions ----------------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        ps = node.params
        params = [p.name.value for p in (*ps.posonly_params, *ps.params)]
        if ps.kwonly_params or isinstance(ps.star_arg, cst.Param) or ps.star_kwarg is not None:
            params.append("*")  # not a plain `(self, name)` lookup
        self.stack.append(Frame(params, self.ctx.qualname))

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        fn = self.stack.pop()
        if not (fn.ret or fn.shape or fn.keep):
            return
        span = self.ctx.anchor(node.name) if fn.shape is not None else None
        self.returns[self.ctx.qualname] = ReturnFacts(
            node.name.value, sorted(fn.ret), fn.shape, span
        )  # type: ignore[arg-type]

    # -- expressions ---------------------------------------------------------------
    def calls_in(self, expr: cst.BaseExpression) -> set[str]:
        """Names of the calls whose result `expr` is, through wrappers (a call's
        first argument), conditionals and `await`, plus what a local it names was
        bound to. Not through a subscript: `info["internal_states"]` reads one
        field out of a readback, it does not report it."""
        out: set[str] = set()
        todo: list[cst.BaseExpression] = [expr]
        scope = self.stack[-1].scope
        while todo:
            node = todo.pop()
            if isinstance(node, cst.Call):
                name = called(node)
                if name and name not in NOT_CALLS:
                    out.add(name)
                if node.args and node.args[0].keyword is None:
                    todo.append(node.args[0].value)
            elif isinstance(node, cst.Name):
                known = self.locals.get(scope, node.value)
                if known is not None:
                    out.update(known.calls)
            elif isinstance(node, cst.IfExp):
                todo += [node.body, node.orelse]
            elif isinstance(node, cst.BooleanOperation):
                todo += [node.left, node.right]
            elif isinstance(node, cst.Await):
                todo.append(node.expression)
        return out

    def shape(self, expr: cst.BaseExpression, depth: int = 0) -> DictShape | None:
        """The dict `expr` builds (a local's is the one the walk adds to)."""
        expr = strip(expr)
        if depth > 4:
            return None
        if isinstance(expr, cst.Dict):
            keys: dict[str, list[str]] = {}
            spreads: list[Spread] = []
            own: dict[str, str] = {}
            for el in expr.elements:
                if isinstance(el, cst.StarredDictElement):
                    spreads.append(self.spread(el.value))
                elif (key := string_value(el.key)) is None:
                    spreads.append(Spread(self._text(el.key)))
                else:
                    keys[key] = sorted(self.calls_in(el.value))
                    if (what := self.own_value(el.value)) is not None:
                        own[key] = what
            return DictShape(keys, spreads, own)
        if isinstance(expr, cst.DictComp):
            comp = expr.for_in
            iterable = comp.iter
            if (
                isinstance(expr.key, cst.Name)
                and isinstance(comp.target, cst.Name)
                and comp.target.value == expr.key.value
                and isinstance(iterable, (cst.Tuple, cst.List))
            ):
                names = [string_value(e.value) for e in iterable.elements]
                if all(n is not None for n in names):
                    calls = sorted(self.calls_in(expr.value))
                    return DictShape({n: calls for n in names}, [])  # type: ignore[misc]
            return None
        if isinstance(expr, cst.Name):
            known = self.locals.get(self.stack[-1].scope, expr.value)
            return known.shape if known is not None else None
        if isinstance(expr, cst.Call):
            args = [a.value for a in expr.args if a.keyword is None and not a.star]
            if args:  # a wrapper: `json.dumps({...})`, `redact(d)` -> look inside
                inner = self.shape(args[0], depth + 1)
                if inner is not None:
                    return inner
            if called(expr) not in (None, *NOT_CALLS):
                return DictShape({}, [self.spread(expr)])
        return None

    def own_value(self, expr: cst.BaseExpression) -> str | None:
        """`=<text>` for a literal constant (`"python"`, `1`, `True`), `call
        <module.f>` for a call of a plain name this module binds (resolved to it;
        whether a function is behind the name is the model's question), else None."""
        text = string_value(expr)
        if text is not None:
            return f"={text!r}"
        if isinstance(expr, (cst.Integer, cst.Float)):
            return f"={expr.value}"
        if isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"):
            return f"={expr.value}"
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name):
            target = self.ctx.resolve(expr.func)
            if target and target == f"{self.ctx.module}.{expr.func.value}":
                return f"call {target}"
        return None

    def _builds_dict(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        """`expr` is a dict display or comprehension, a local dict, or a wrapper
        of one (not just any call: that is `ret`'s business)."""
        expr = strip(expr)
        if isinstance(expr, (cst.Dict, cst.DictComp)):
            return True
        if isinstance(expr, cst.Name):
            known = self.locals.get(self.stack[-1].scope, expr.value)
            return known is not None and known.shape is not None
        if isinstance(expr, cst.Call) and expr.args and expr.args[0].keyword is None and depth < 4:
            return self._builds_dict(expr.args[0].value, depth + 1)
        return False

    def spread(self, expr: cst.BaseExpression) -> Spread:
        """A `**spread` or `update(...)` argument (through wrappers such as
        `redact(build_server_info(...))`)."""
        text = self._text(strip(expr))
        calls = sorted(self.calls_in(expr))
        if not calls:
            return Spread(text)
        targets: list[str] = []
        node = strip(expr)
        while isinstance(node, cst.Call):
            if isinstance(node.func, cst.Name):
                target = self.ctx.resolve(node.func)
                if target:
                    targets.append(target)
            if not node.args or node.args[0].keyword is not None:
                break
            node = strip(node.args[0].value)
        return Spread(text, calls, targets)

    def _text(self, node: cst.CSTNode) -> str:
        return LazyText(self.ctx, node)  # type: ignore[return-value]  # a str once encoded

    # -- statements --------------------------------------------------------------------
    def visit_Return(self, node: cst.Return) -> None:
        if not self.stack or node.value is None:
            return
        fn = self.stack[-1]
        value = strip(node.value)
        fn.ret |= self.calls_in(value)
        shape = self.shape(value) if self._builds_dict(value) else None
        if shape is not None and (shape.keys or len(shape.spreads) > 1):
            if fn.shape is None:
                fn.shape = shape
            else:  # several returns: the union of what they report
                fn.shape.keys.update(shape.keys)
                fn.shape.own.update(shape.own)
                fn.shape.spreads.extend([s for s in shape.spreads if s not in fn.shape.spreads])

    def visit_Assign(self, node: cst.Assign) -> None:
        if not self.stack:
            return
        scope = self.stack[-1].scope
        for t in node.targets:
            target = t.target
            if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
                local = self.locals.get(scope, target.value.value)
                key = target.slice[0].slice
                if local is not None and local.shape is not None and isinstance(key, cst.Index):
                    name = string_value(key.value)
                    if name is not None:
                        local.shape.put(
                            name, sorted(self.calls_in(node.value)), self.own_value(node.value)
                        )

    def _holds_value(self, bound: Bound, before: Any) -> LocalValue | None:
        """What a local assigned a call's result or a dict holds, in a function;
        None for any other binding."""
        value = bound.value
        if not self.stack or bound.kind != "assignment" or value is None:
            return None
        calls = self.calls_in(value)
        shape = self.shape(value) if self._builds_dict(value) or calls else None
        if not calls and shape is None:
            return None
        if shape is not None:  # its own dict: what it adds is not the value's
            shape = DictShape(dict(shape.keys), list(shape.spreads), dict(shape.own))
        return LocalValue(sorted(calls), shape)

    def visit_Call(self, node: cst.Call) -> None:
        if not self.stack or not isinstance(node.func, cst.Attribute):
            return
        recv = node.func.value
        if node.func.attr.value != "update" or not isinstance(recv, cst.Name):
            return
        local = self.locals.get(self.stack[-1].scope, recv.value)
        if local is None or local.shape is None:
            return
        spreads = local.shape.spreads
        for arg in node.args:
            if arg.keyword is not None:
                local.shape.put(
                    arg.keyword.value, sorted(self.calls_in(arg.value)), self.own_value(arg.value)
                )
            elif (shape := self.shape(arg.value)) is not None and (shape.keys or not shape.spreads):
                for key in shape.keys:
                    local.shape.put(key, shape.keys[key], shape.own.get(key))
                spreads.extend(shape.spreads)
            else:
                spreads.append(self.spread(arg.value))
