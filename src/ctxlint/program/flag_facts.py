"""The call facts' flags: what an event's `if` tests, a call's arguments and a
function's bindings spell, for program.unset_flags (is a test false before publish?).

A value is spelled as far as one file tells: `=` a falsy literal (`False`,
`None`, `0`, an empty string or display), `n:x` a parameter or local `x` of the
function, `a:x` the attribute `self.x`, `g:pkg.mod.X` a module-level name (as
imports resolve it), `!accessor:member` a bag read (`get_exec().comm...`), `c:pkg.mod.f` the
result of a call of a module-level name (`resolved_view(self)`: what a view
function returns, program.view_handed), `+` a truthy literal (`True`, a nonzero
number, a non-empty string), `~x` the negation of a kept spelling `x` (`not
self.is_draft_worker`), `d:k=v,...` a dict built with literal keys only
(`dict(a=x)`, `{"a": x}`: a `**` argument of it binds those keywords), `^` the
value a parameter is handed, `?` anything else. A mixin of the call facts'
visitor (program.call_facts), which owns the function stack and the suites.

An event's `when` also carries BRANCH where it runs on some paths through its
function only: in a branch (an `if`/`else`, a loop, an `except` or `else` of a
`try`, a `case`, a conditional expression or a short-circuit operand), or after
a `return` taken on some paths. A publish there is no publish "on every path"
(program/ordered_reach.py: it stops no walk; CTX102's hint names no line below
it). Where the only thing that makes it a branch is the `if` tests around it
(no `elif`/`else`, loop, handler or early return), and every conjunct of
those tests is spelled, it carries GUARD instead: it runs exactly when they all
hold, so a call whose arguments settle them takes it or not
(program.unset_flags.takes).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import MODULE_SCOPE, dotted
from ctxlint.program.binding_values import VALUE_KINDS, Bound
from ctxlint.program.call_model import BRANCH, GUARD, Flags

UNKNOWN = "?"
FALSY = "="
TRUTHY = "+"
NOT = "~"
HANDED = "^"
DICT = "d:"
# the spellings a test or an argument keeps (the others tell nothing)
KEPT = ("n:", "a:", "g:", "!", FALSY, TRUTHY, NOT)


def kept(spelling: str) -> bool:
    return spelling.startswith(KEPT)


def negate(spelled: str) -> str:
    """The spelling of `not x` for `x` so spelled."""
    if spelled in (FALSY, TRUTHY):
        return TRUTHY if spelled == FALSY else FALSY
    if spelled.startswith(NOT):
        return spelled[1:]
    return NOT + spelled if kept(spelled) else UNKNOWN


def split_arg(arg: str) -> tuple[str | None, str]:
    """(keyword, value) of a spelled argument: keyword None for a positional,
    "*" for a star and "**" for a double star (value: what it unpacks, as
    spelled, "" where the facts kept nothing)."""
    if arg.startswith("*"):
        stars = "**" if arg.startswith("**") else "*"
        return stars, arg[len(stars) :]
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


def truthy_literal(expr: cst.BaseExpression) -> bool:
    kind = type(expr)
    if kind is cst.Name:
        return expr.value == "True"  # type: ignore[attr-defined]
    if kind is cst.Integer:
        try:
            return int(expr.value, 0) != 0  # type: ignore[attr-defined]
        except ValueError:
            return False
    if kind is cst.SimpleString:
        return expr.evaluated_value not in ("", b"")  # type: ignore[attr-defined]
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
    # every name of the function (or a function nested in it) by how many times
    # it is used (not as an assignment's target), and the `**name` arguments: a
    # dict bound to a local another use can change (`kw["x"] = 1`,
    # `kw.update(...)`, handing it on) is not known
    uses: dict[str, int] = field(default_factory=dict)
    unpacked: dict[str, int] = field(default_factory=dict)


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
        self.evaluable: set[int] = set()  # those of them run exactly when their tests hold
        self.elifs: set[int] = set()  # `elif` nodes: their body needs the tests above false
        # (function, evaluable) of each such suite (or expression) being walked
        self.branches: list[tuple[Any, bool]] = []
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
        if truthy_literal(expr):
            return TRUTHY
        fn = self.stack[-1] if self.stack else None
        kind = type(expr)
        if kind is cst.UnaryOperation and isinstance(expr.operator, cst.Not):  # type: ignore[attr-defined]
            return negate(self.spell(expr.expression))  # type: ignore[attr-defined]
        if kind is cst.Dict:
            return self._dict_display(expr)  # type: ignore[arg-type]
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
        if name == "dict" and not self._bound_here(name):
            return self._dict_call(expr)
        spelled = self._global(func, name)
        return f"c:{spelled[2:]}" if spelled.startswith("g:") else UNKNOWN

    def _bound_here(self, head: str) -> bool:
        """`head` names an import or a module binding (not a builtin)."""
        return (
            head in self.ctx.imports
            or head in self.module_names
            or any(head in sc.imports for sc in self.ctx.scopes[1:])
        )

    def _dict_call(self, expr: cst.Call) -> str:
        """`dict(a=x, ...)`: DICT with each keyword's value (keywords only)."""
        if any(a.keyword is None or a.star for a in expr.args):
            return UNKNOWN
        return self._entries((a.keyword.value, a.value) for a in expr.args)  # type: ignore[union-attr]

    def _dict_display(self, expr: cst.Dict) -> str:
        """`{"a": x, ...}`: DICT where every key is a literal identifier string."""
        pairs = []
        for el in expr.elements:
            key = el.key if isinstance(el, cst.DictElement) else None
            name = key.evaluated_value if isinstance(key, cst.SimpleString) else None
            if not isinstance(name, str) or not name.isidentifier():
                return UNKNOWN
            pairs.append((name, el.value))
        return self._entries(pairs)

    def _entries(self, pairs: Any) -> str:
        spelled = []
        for key, value in pairs:
            v = self.spell(value)
            spelled.append(f"{key}={v if not v.startswith(DICT) else UNKNOWN}")
        return DICT + ",".join(spelled)

    def _global(self, expr: cst.BaseExpression, name: str) -> str:
        resolved = self.ctx.resolve(expr) if self._bound_here(name.partition(".")[0]) else None
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
        tests = [self.spell(c) for c in conjuncts(node.test)]
        spelled = tuple(s for s in tests if kept(s))
        if spelled:
            self.tests[id(node.body)] = spelled
        if len(spelled) == len(tests) and id(node) not in self.elifs:
            self.evaluable.add(id(node.body))  # runs exactly when every conjunct holds
        if isinstance(node.orelse, cst.If):
            self.elifs.add(id(node.orelse))
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

    def _enter_branch(self, node: Any, evaluable: bool = False) -> None:
        self.branches.append((self.stack[-1] if self.stack else None, evaluable))

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
        return fn.flags.cut or any(f is fn for f, _ in self.branches)

    def _branch_mark(self, fn: Any) -> tuple[str, ...]:
        """BRANCH, GUARD (only evaluable `if` bodies around it) or nothing."""
        if fn is None:
            return ()
        if fn.flags.cut or any(f is fn and not ok for f, ok in self.branches):
            return (BRANCH,)
        return (GUARD,) if any(f is fn for f, _ in self.branches) else ()

    def _enter_test(self, node: cst.BaseSuite) -> None:
        spelled = self.tests.get(id(node))
        if spelled:
            self.whens.append((self.stack[-1] if self.stack else None, spelled))
        if id(node) in self.branching:
            self._enter_branch(node, id(node) in self.evaluable)

    def _leave_test(self, node: cst.BaseSuite) -> None:
        if id(node) in self.tests:
            self.whens.pop()
        if id(node) in self.branching:
            self._leave_branch(node)

    def when(self, fn: Any) -> tuple[str, ...]:
        """The kept conjuncts of the `if` tests around this point of `fn`, and
        BRANCH (or GUARD) where it runs on some paths only."""
        branch = self._branch_mark(fn)
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
                unpacked = self.spell(arg.value)
                if arg.star == "**" and unpacked.startswith("n:"):
                    counts = fn.flags.unpacked
                    counts[unpacked[2:]] = counts.get(unpacked[2:], 0) + 1
                out.append(arg.star + (unpacked if unpacked.startswith(("n:", "a:")) else ""))
            elif arg.keyword is not None:
                out.append(f"{arg.keyword.value}={self.spell(arg.value)}")
            else:
                out.append(f"p:{self.spell(arg.value)}")
        self._note(fn, [split_arg(a)[1] for a in out])
        return tuple(out)

    @staticmethod
    def _note(fn: Any, values: Any) -> None:
        for value in values:
            value = value.lstrip(NOT)
            if value.startswith("n:"):
                fn.flags.spelled.add(value[2:])

    # -- output ---------------------------------------------------------------
    def func_flags(self, fn: Any, attrs: dict[str, tuple[str, ...]]) -> Flags | None:
        f: FuncFlags = fn.flags
        attrs = {**attrs, **{a: (*attrs.get(a, ()), UNKNOWN) for a in f.rebound}}
        bound = [v for vs in (*attrs.values(), *f.globals.values()) for v in vs]
        self._note(fn, bound)  # the names an attribute or a global is bound to
        names = {
            n: self._values(f, n, self.flag_values.get(fn.scope, n)) for n in sorted(f.spelled)
        }
        if not (f.defaults or names or attrs or f.globals):
            return None
        globals_ = {q: tuple(v) for q, v in f.globals.items()}
        return Flags(tuple(f.defaults), names, attrs, globals_)

    @staticmethod
    def _values(f: FuncFlags, name: str, values: tuple[str, ...] | None) -> tuple[str, ...]:
        """A name's bound values; a dict's only where it is bound once and its
        every use is a `**name` argument (an assignment's target is no use)."""
        if not values:
            return (UNKNOWN,)
        if any(v.startswith(DICT) for v in values) and (
            len(values) != 1 or f.uses.get(name, 0) != f.unpacked.get(name, 0)
        ):
            return (*values, UNKNOWN)
        return values

    def count_use(self, name: str) -> None:
        """A name's appearance in every function being walked (a nested one's use
        of the outer local counts for the outer function too)."""
        for fn in self.stack:
            fn.flags.uses[name] = fn.flags.uses.get(name, 0) + 1

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
