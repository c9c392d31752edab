"""The call facts' flags: what an event's `if` tests, a call's arguments and a
function's bindings spell, for program.unset_flags (is a test false before publish?).

A value is spelled as far as one file tells: `=` a falsy literal (`False`,
`None`, `0`, an empty string or display), `n:x` a parameter or local `x` of the
function, `a:x` the attribute `self.x`, `g:pkg.mod.X` a module-level name (as
imports resolve it), `!accessor:member` a bag read (`get_exec().comm...`), `c:pkg.mod.f` the
result of a call of a module-level name (`resolved_view(self)`: what a view
function returns, program.view_handed), `^` the value a parameter is handed,
`?` anything else. A mixin of the call facts'
visitor (program.call_facts), which owns the function stack and the suites.

An event's `when` also carries BRANCH where it runs on some paths through its
function only: in a branch (an `if`/`else`, a loop, an `except` or `else` of a
`try`, a `case`, a conditional expression or a short-circuit operand), or after
a `return` taken on some paths. A publish there is no publish "on every path"
(program/ordered_reach.py: it stops no walk; CTX102's hint names no line below
it). Its test may be one no spelling keeps (`if not self.is_draft_worker:`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import MODULE_SCOPE, dotted
from ctxlint.program.binding_values import VALUE_KINDS, Bound
from ctxlint.program.call_model import BRANCH, Flags

UNKNOWN = "?"
FALSY = "="
HANDED = "^"
# the spellings a test or an argument keeps (the others tell nothing)
KEPT = ("n:", "a:", "g:", "!", FALSY)


def kept(spelling: str) -> bool:
    return spelling.startswith(KEPT)


def split_arg(arg: str) -> tuple[str | None, str]:
    """(keyword, value) of a spelled argument: keyword None for a positional,
    "*" for a star (value "")."""
    if arg == "*":
        return "*", ""
    if arg.startswith("p:"):
        return None, arg[2:]
    key, _, value = arg.partition("=")
    return key, value


def falsy_literal(expr: cst.BaseExpression) -> bool:
    kind = type(expr)
    if kind is cst.Name:
        return expr.value in ("False", "None")  # type: ignore[attr-defined]
    if kind is cst.Integer:
        return expr.value == "0"  # type: ignore[attr-defined]
    if kind is cst.SimpleString:
        return expr.evaluated_value in ("", b"")  # type: ignore[attr-defined]
    if kind in (cst.Tuple, cst.List, cst.Dict):
        return not expr.elements  # type: ignore[attr-defined]
    return False


def conjuncts(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands an `and` chain needs true (a test that is no `and`: itself)."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return conjuncts(test.left) + conjuncts(test.right)
    return [test]


@dataclass
class FuncFlags:
    """One function's side of the flags, gathered during the walk."""

    defaults: list[str] = field(default_factory=list)  # params with a falsy literal default
    spelled: set[str] = field(default_factory=set)  # local names its tests/arguments spell
    globals: dict[str, list[str]] = field(default_factory=dict)  # qualified -> values
    rebound: set[str] = field(default_factory=set)  # `self.attr += ...`: attributes unknown
    cut: bool = False  # a `return` on some paths has been passed: the rest is a branch


class FlagFacts:
    """Mixin: the spellings of tests, arguments and bindings (see the module doc)."""

    ctx: Any
    stack: list[Any]  # the call facts' _Func stack (each has .flags, .params, .self_name, .qual)
    accessors: dict[str, str]
    module_names: set[str]

    def _init_flags(self, bindings: Any) -> None:
        self.flag_values = bindings.track(self._flag_name, self._flag_attr)
        self.binding_model = bindings
        self.tests: dict[int, tuple[str, ...]] = {}  # if bodies -> the tests' kept conjuncts
        self.whens: list[tuple[Any, tuple[str, ...]]] = []  # (function, conjuncts) being walked
        self.branching: set[int] = set()  # suites that run on some paths only
        self.branches: list[Any] = []  # the function of each such suite (or expression) walked
        self.comprehensions = 0  # inside one: its targets are names the scopes do not know

    def _enter_comprehension(self, node: Any) -> None:
        self.comprehensions += 1

    def _leave_comprehension(self, node: Any) -> None:
        self.comprehensions -= 1

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _enter_comprehension
    leave_ListComp = leave_SetComp = leave_DictComp = leave_GeneratorExp = _leave_comprehension

    # -- spelling -------------------------------------------------------------
    def spell(self, expr: cst.BaseExpression) -> str:
        if falsy_literal(expr):
            return FALSY
        fn = self.stack[-1] if self.stack else None
        kind = type(expr)
        if kind is cst.Name:
            name = expr.value  # type: ignore[attr-defined]
            if self.comprehensions:
                return UNKNOWN  # a comprehension's own names may shadow the function's
            if fn is not None and (name in fn.params or self.binding_model.local_here(name)):
                return f"n:{name}"
            return self._global(expr, name)
        if kind is cst.Attribute:
            head = expr.value  # type: ignore[attr-defined]
            if fn is not None and isinstance(head, cst.Name) and head.value == fn.self_name:
                return f"a:{expr.attr.value}"  # type: ignore[attr-defined]
            read = self._read(expr)
            if read:
                return read
            name = dotted(expr)
            return self._global(expr, name) if name else UNKNOWN
        if kind is cst.Call:
            return self._call(expr)  # type: ignore[arg-type]
        return UNKNOWN

    def _call(self, expr: cst.Call) -> str:
        """`c:qualified` for a call of a name imports or the module bind (not a
        parameter, a local or a method of the receiver)."""
        func = expr.func
        name = dotted(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        if name is None or self.comprehensions:
            return UNKNOWN
        fn = self.stack[-1] if self.stack else None
        head = name.partition(".")[0]
        if fn is not None and (
            head in fn.params or head == fn.self_name or self.binding_model.local_here(head)
        ):
            return UNKNOWN
        spelled = self._global(func, name)
        return f"c:{spelled[2:]}" if spelled.startswith("g:") else UNKNOWN

    def _global(self, expr: cst.BaseExpression, name: str) -> str:
        head = name.partition(".")[0]
        bound = head in self.ctx.imports or head in self.module_names
        bound = bound or any(head in sc.imports for sc in self.ctx.scopes[1:])
        resolved = self.ctx.resolve(expr) if bound else None
        return f"g:{resolved}" if resolved else UNKNOWN

    def _read(self, expr: cst.BaseExpression) -> str | None:
        """`!accessor:member` for `accessor().member...` (a bag read's value)."""
        member = None
        while isinstance(expr, cst.Attribute):
            member, expr = expr.attr.value, expr.value
        if isinstance(expr, cst.Call) and member is not None:
            qual = self.ctx.resolve(expr.func)
            if qual in self.accessors:
                return f"!{self.accessors[qual]}:{member}"
        return None

    # -- bindings (classifiers of the binding model) --------------------------
    def _flag_value(self, bound: Bound) -> str:
        if bound.kind == "parameter":
            return HANDED
        if bound.kind in VALUE_KINDS and bound.value is not None:
            return self.spell(bound.value)
        return UNKNOWN

    def _flag_name(self, bound: Bound, before: tuple[str, ...] | None) -> Any:
        value = self._flag_value(bound)
        target = bound.target
        if self.stack and target is not None and self.binding_model.declared_global(target.value):
            qual = f"{self.ctx.module}.{target.value}"
            self.stack[-1].flags.globals.setdefault(qual, []).append(value)
            return before  # a function's write: kept apart from import time's
        return (*(before or ()), value)

    def _flag_attr(self, bound: Bound, before: tuple[str, ...] | None) -> Any:
        if not self.stack:
            return before
        return (*(before or ()), f"{self.stack[-1].qual}|{self._flag_value(bound)}")

    def write_elsewhere(self, target: cst.BaseExpression, augmented: bool = False) -> None:
        """`mod.FLAG = ...` (another module's flag) and `self.attr += ...`: writes
        the binding model does not classify, kept as unknown values."""
        if not self.stack or not isinstance(target, cst.Attribute):
            return
        fn = self.stack[-1]
        head = target.value
        if isinstance(head, cst.Name) and head.value == fn.self_name:
            if augmented:
                fn.flags.rebound.add(target.attr.value)
            return
        name = dotted(target)
        spelled = self._global(target, name) if name else UNKNOWN
        if spelled.startswith("g:"):
            fn.flags.globals.setdefault(spelled[2:], []).append(UNKNOWN)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self.write_elsewhere(node.target, augmented=True)

    # -- tests and arguments --------------------------------------------------
    def visit_If(self, node: cst.If) -> None:
        spelled = tuple(s for s in map(self.spell, conjuncts(node.test)) if kept(s))
        if spelled:
            self.tests[id(node.body)] = spelled
        self._branch(node.body, node.orelse)

    def _branch(self, *suites: Any) -> None:
        """Mark suites (an `Else`'s body; an `elif` marks its own) as branches."""
        for suite in suites:
            if isinstance(suite, (cst.Else, cst.ExceptHandler, cst.ExceptStarHandler)):
                suite = suite.body
            if isinstance(suite, (cst.IndentedBlock, cst.SimpleStatementSuite)):
                self.branching.add(id(suite))

    def visit_For(self, node: cst.For) -> None:
        self._branch(node.body, node.orelse)

    def visit_While(self, node: cst.While) -> None:
        self._branch(node.body, node.orelse)

    def visit_Try(self, node: cst.Try) -> None:
        self._branch(*node.handlers, node.orelse)

    def visit_TryStar(self, node: cst.TryStar) -> None:
        self._branch(*node.handlers, node.orelse)

    def visit_Match(self, node: cst.Match) -> None:
        self._branch(*(case.body for case in node.cases))

    def _enter_branch(self, node: Any) -> None:
        self.branches.append(self.stack[-1] if self.stack else None)

    def _leave_branch(self, node: Any) -> None:
        self.branches.pop()

    # the whole expression: its first operand runs always, marked too (fewer stops)
    visit_IfExp = visit_BooleanOperation = _enter_branch
    leave_IfExp = leave_BooleanOperation = _leave_branch

    def visit_Return(self, node: cst.Return) -> None:
        fn = self.stack[-1] if self.stack else None
        if fn is not None and self._in_branch(fn):
            fn.flags.cut = True

    def _in_branch(self, fn: Any) -> bool:
        return fn.flags.cut or any(f is fn for f in self.branches)

    def _enter_test(self, node: cst.BaseSuite) -> None:
        spelled = self.tests.get(id(node))
        if spelled:
            self.whens.append((self.stack[-1] if self.stack else None, spelled))
        if id(node) in self.branching:
            self._enter_branch(node)

    def _leave_test(self, node: cst.BaseSuite) -> None:
        if id(node) in self.tests:
            self.whens.pop()
        if id(node) in self.branching:
            self._leave_branch(node)

    def when(self, fn: Any) -> tuple[str, ...]:
        """The kept conjuncts of the `if` tests around this point of `fn`, and
        BRANCH where it runs on some paths only."""
        branch = (BRANCH,) if fn is not None and self._in_branch(fn) else ()
        if not self.whens:
            return branch
        found = tuple(sorted({s for f, sp in self.whens if f is fn for s in sp}))
        self._note(fn, found)
        return found + branch

    def call_args(self, fn: Any, node: cst.Call) -> tuple[str, ...]:
        """The call's arguments spelled (none: it passes none). A call of a call
        (`partial(f, flag=True)()`) hands what the inner call bound too: `*`."""
        if isinstance(node.func, cst.Call):
            return ("*",)
        out: list[str] = []
        for arg in node.args:
            if arg.star:
                out.append("*")
            elif arg.keyword is not None:
                out.append(f"{arg.keyword.value}={self.spell(arg.value)}")
            else:
                out.append(f"p:{self.spell(arg.value)}")
        self._note(fn, [split_arg(a)[1] for a in out])
        return tuple(out)

    @staticmethod
    def _note(fn: Any, values: Any) -> None:
        for value in values:
            if value.startswith("n:"):
                fn.flags.spelled.add(value[2:])

    # -- output ---------------------------------------------------------------
    def func_flags(self, fn: Any, attrs: dict[str, tuple[str, ...]]) -> Flags | None:
        f: FuncFlags = fn.flags
        attrs = {**attrs, **{a: (*attrs.get(a, ()), UNKNOWN) for a in f.rebound}}
        bound = [v for vs in (*attrs.values(), *f.globals.values()) for v in vs]
        self._note(fn, bound)  # the names an attribute or a global is bound to
        names = {n: self.flag_values.get(fn.scope, n) or (UNKNOWN,) for n in sorted(f.spelled)}
        if not (f.defaults or names or attrs or f.globals):
            return None
        globals_ = {q: tuple(v) for q, v in f.globals.items()}
        return Flags(tuple(f.defaults), names, attrs, globals_)

    def attr_flags(self) -> dict[str, dict[str, tuple[str, ...]]]:
        """function -> attribute -> the values its `self.attr = ...` bind."""
        out: dict[str, dict[str, list[str]]] = {}
        for table in self.flag_values.attrs.values():
            for attr, values in table.items():
                for v in values:
                    q, _, value = v.partition("|")
                    out.setdefault(q, {}).setdefault(attr, []).append(value)
        return {q: {a: tuple(v) for a, v in t.items()} for q, t in out.items()}

    def falsy_globals(self) -> tuple[str, ...]:
        """Module-level names import-time code binds to falsy literals only."""
        table = self.flag_values.names.get(MODULE_SCOPE, {})
        m = self.ctx.module
        return tuple(
            sorted(f"{m}.{n}" for n, v in table.items() if v and all(x == FALSY for x in v))
        )
