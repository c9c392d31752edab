"""The part "calls": one module's summary for the whole-program call graph.

The visitor records, for every function and method, its events in execution
order (calls are recorded when they *complete*, so `f(g())` records `g` first):
bag reads, `publish`, `assert_published`, and calls with their targets resolved
as far as one file allows (program.call_model's typed targets). A call through
a local holding `self.meth` or `super().meth` with more attributes after it
names nothing one file or the program could resolve, and is left out.

Positions cost a second pass over a file, so only events that can become a
finding site are anchored (chosen in `finish()` from what the file alone knows).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, LineAnchor, dotted, string_value
from ctxlint.facts.visitor import FileVisitor
from ctxlint.program.binding_values import Bound
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.call_model import (
    ClassSummary,
    Event,
    EventKind,
    FuncSummary,
    Global,
    HeldMethod,
    ModuleSummary,
    SelfMethod,
    Start,
    StartKind,
    SuperMethod,
    Target,
)
from ctxlint.program.call_starts import HELD, ProcessStarts
from ctxlint.program.calls import KEY
from ctxlint.program.flag_facts import FlagFacts, FuncFlags, falsy_literal, truthy_literal

# A bare `except:` catches every exception: the root of the builtin hierarchy.
BARE_EXCEPT = "BaseException"


def _raises(node: cst.CSTNode) -> bool:
    """Whether the code raises (nested defs and classes left out: they run elsewhere)."""
    if isinstance(node, cst.Raise):
        return True
    if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
        return False
    return any(_raises(child) for child in node.children)


def _module_names(module: cst.Module) -> set[str]:
    """Names bound at module level by def/class/assignment (imports are in ctx)."""
    out: set[str] = set()
    todo: list[Any] = list(module.body)
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            out.add(stmt.name.value)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                targets: list[cst.BaseExpression] = []
                if isinstance(small, cst.Assign):
                    targets = [t.target for t in small.targets]
                elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                    targets = [small.target]
                out.update(t.value for t in targets if isinstance(t, cst.Name))
        elif isinstance(stmt, (cst.If, cst.Try, cst.With)):
            for block in (getattr(stmt, "body", None), getattr(stmt, "orelse", None)):
                body = getattr(block, "body", None)
                if isinstance(body, (list, tuple)):
                    todo.extend(body)
            for handler in getattr(stmt, "handlers", ()):
                todo.extend(handler.body.body)
    return out


def _extend(targets: list[Target], rest: str) -> list[Target]:
    """`t.rest` for each target: only a qualified name takes more attributes."""
    if not rest:
        return list(targets)
    return [Global(f"{t.name}.{rest}") for t in targets if isinstance(t, Global)]


def _new(found: list[Target], known: tuple[Target, ...]) -> tuple[Target, ...]:
    """The targets found that are not known yet (in order; as found, repeats kept)."""
    return tuple(t for t in found if t not in known)


def _globals(targets: list[Target]) -> list[Global]:
    return [t for t in targets if isinstance(t, Global)]


@dataclass
class _Func:
    qual: str  # module-qualified
    cls: str | None  # module-qualified class of a method
    self_name: str | None
    params: set[str]
    defaults: dict[str, list[Target]]  # parameter -> targets of its callable default
    ordered: tuple[str, ...] = ()  # parameter names in order, the receiver left out
    record_annotated: bool = False  # a parameter annotated with the record class
    scope: str = ""  # its qualname in the module (the binding model's scope key)
    nested: dict[str, str] = field(default_factory=dict)  # nested def -> qualname
    events: list[tuple[Event, cst.CSTNode]] = field(default_factory=list)
    refs: set[str] = field(default_factory=set)  # in-package names referenced, not called
    flags: FuncFlags = field(default_factory=FuncFlags)  # program.flag_facts


@dataclass(frozen=True, slots=True)
class Held:
    """What a function's local held over its bindings so far, as the call graph
    reads it (may-alias: a later binding adds to what an earlier one gave,
    except that a new instance replaces the last)."""

    pool: bool = False  # a process pool
    own: bool = False  # an instance of the method's own class (`cls.__new__(cls)`)
    instances: tuple[Global, ...] = ()  # `local = Cls(...)`
    aliases: tuple[Target, ...] = ()  # `local = name`


NOTHING = Held()


class CallFactsVisitor(FlagFacts, ProcessStarts, FileVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        # function -> the lines of its events, set by finish for the side part CallLines
        self.lines: dict[str, list[Any]] = {}
        vocab = ctx.vocab
        assert vocab is not None
        rt = vocab.runtime_module
        self.special = {
            f"{rt}.publish": EventKind.PUBLISH,
            f"{rt}.assert_published": EventKind.ASSERT,
        }
        self.accessors = {vocab.qualified(a): a for a in vocab.bag_accessors}
        # `get_parallel().world_group`: the member taken off an accessor call, by
        # the call's node (program.leaf_reads asks whether it is a published leaf)
        self.members: dict[int, str] = {}
        self.module_names = _module_names(ctx.module_node)
        self.stack: list[_Func] = []
        # try bodies -> what their handlers that do not raise again catch, and
        # for each such body being walked, the function it is in (a def nested
        # in the body runs elsewhere, unguarded) with those classes
        self.guarding: dict[int, tuple[str, ...]] = {}
        self.guards: list[tuple[_Func | None, tuple[str, ...]]] = []
        self.funcs: dict[str, _Func] = {}
        self.lambdas = 0
        self.classes: dict[str, list[str]] = {}  # class -> its bases
        self.starts: list[Start] = []
        # what locals hold, and the `self` attributes holding a process pool, a
        # callable (parked) or an instance (held), asked of the binding model
        bindings = ctx.parts[BINDINGS]
        self.held = bindings.track(self._holds)
        self.pool_attrs = bindings.track(None, self._parks_pool)
        self.parked = bindings.track(None, self._parks_callable)
        self.made = bindings.track(None, self._parks_instance)
        self._init_flags(bindings)
        self.package = ctx.module.partition(".")[0]
        self.module_refs: set[str] = set()  # referenced by import-time code
        self.in_import = False
        # the name nodes of def/class statements and of plain assignments: bindings,
        # not references (a new module constant changes no reference)
        self.def_names: set[int] = set()

    # -- names --------------------------------------------------------------
    def _q(self, local: str) -> str:
        return f"{self.ctx.module}.{local}"

    def _resolved(self, expr: cst.BaseExpression) -> list[Target]:
        resolved = self.ctx.resolve(expr)
        return [Global(resolved)] if resolved else []

    def _targets(self, expr: cst.BaseExpression) -> list[Target]:
        """Targets of a callable expression (what `expr(...)` would run)."""
        if isinstance(expr, cst.Call):  # functools.partial(f, ...) runs f
            name = dotted(expr.func)
            if name and name.rpartition(".")[2] == "partial" and expr.args:
                return self._targets(expr.args[0].value)
            return []
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Call):
            inner = expr.value
            if dotted(inner.func) == "super" and not self._shadowed("super"):
                return [SuperMethod(expr.attr.value)]
            # `Manager().loop()`: a method of the instance made inline, as for
            # `m = Manager(); m.loop()` (a function's result resolves to no method)
            return _extend(_globals(self._targets(inner.func)), expr.attr.value)
        name = dotted(expr)
        if name is None:
            return []
        head, _, rest = name.partition(".")
        fn = self.stack[-1] if self.stack else None
        if fn is not None:
            held = self.held.get(fn.scope, head) or NOTHING
            if head == fn.self_name or held.own:
                parts = rest.split(".") if rest else []
                if len(parts) == 1:
                    return [SelfMethod(parts[0])]
                if len(parts) == 2:
                    return [HeldMethod(parts[0], parts[1])]
                return []
            for outer in reversed(self.stack):
                if head in outer.nested:
                    return _extend([Global(outer.nested[head])], rest)
            if held.aliases:
                return _extend(list(held.aliases), rest)
            if held.instances:
                return _extend(list(held.instances), rest) if rest else []
            if head in fn.defaults:
                return _extend(fn.defaults[head], rest)
            if head in fn.params:
                return []
            for scope in self.ctx.scopes[1:]:
                if head in scope.imports:
                    return self._resolved(expr)
        if head in self.ctx.imports or head in self.module_names:
            return self._resolved(expr)
        return []

    def _shadowed(self, name: str) -> bool:
        return bool(self.stack) and name in self.stack[-1].params

    # -- scopes -------------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.def_names.add(id(node.name))
        qual = self._q(self.ctx.qualname)
        bases = [t for arg in node.bases if arg.keyword is None for t in self._targets(arg.value)]
        self.classes[qual] = [b.name for b in _globals(bases)]
        if any(self._is_ray_remote(d.decorator) for d in node.decorators):
            self.starts.append(self._start(StartKind.RAY, [Global(qual)], node.name))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.def_names.add(id(node.name))
        scope = self.ctx.scope
        qual = self._q(scope.qualname)
        p = node.params
        named = (*p.posonly_params, *p.params, *p.kwonly_params)
        params = {x.name.value for x in named}
        for star in (p.star_arg, p.star_kwarg):
            if isinstance(star, cst.Param):
                params.add(star.name.value)
        # Defaults are evaluated in the enclosing scope: resolve them before entering.
        defaults: dict[str, list[Target]] = {}
        for x in named:
            if x.default is not None and isinstance(x.default, (cst.Name, cst.Attribute)):
                found = self._targets(x.default)
                if found:
                    defaults[x.name.value] = found
        if self.stack:
            self.stack[-1].nested[node.name.value] = qual
        cls = self._q(scope.class_qualname) if scope.class_qualname else None
        records = self.ctx.records
        annotated = records is not None and any(
            x.annotation is not None and records.is_record_annotation(x.annotation.annotation)
            for x in named
        )
        ordered = tuple(x.name.value for x in named if x.name.value != scope.self_name)
        fn = _Func(qual, cls, scope.self_name, params, defaults, ordered, annotated, scope.qualname)
        fn.flags.defaults = [
            *(x.name.value for x in named if x.default is not None and falsy_literal(x.default)),
            *(
                f"+{x.name.value}"
                for x in named
                if x.default is not None and truthy_literal(x.default)
            ),
            *(
                f"{star}{param.name.value}"
                for star, param in (("*", p.star_arg), ("**", p.star_kwarg))
                if isinstance(param, cst.Param)
            ),
        ]
        self.stack.append(fn)
        self.funcs[qual] = fn
        if any(self._is_ray_remote(d.decorator) for d in node.decorators):
            self.starts.append(self._start(StartKind.RAY, [Global(qual)], node.name))

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.stack.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.lambdas += 1

    def leave_Lambda(self, node: cst.Lambda) -> None:
        self.lambdas -= 1

    # -- what bindings hold (asked by the binding model) -----------------------
    def _value(self, bound: Bound) -> cst.BaseExpression | None:
        """The value a binding in a function hands the graph: an assignment's, or
        a with statement's call (`with Pool() as p`)."""
        value = bound.value
        if not self.stack or value is None or bound.kind not in HELD:
            return None
        if bound.kind == "with target" and not isinstance(value, cst.Call):
            return None
        return value

    def _holds(self, bound: Bound, before: Held | None) -> Held | None:
        value = self._value(bound)
        was = before or NOTHING
        if isinstance(value, cst.Call):
            if self._is_pool(value):
                return replace(was, pool=True)
            if self._makes_own_instance(self.stack[-1], value):
                return replace(was, own=True)
            made = _globals(self._targets(value.func))
            return replace(was, instances=tuple(made)) if made else before
        if isinstance(value, (cst.Name, cst.Attribute)):
            found = self._targets(value)
            if found:
                return replace(was, aliases=was.aliases + _new(found, was.aliases))
        return before

    def _parks_pool(self, bound: Bound, before: bool | None) -> bool | None:
        value = self._value(bound)
        return True if isinstance(value, cst.Call) and self._is_pool(value) else before

    def _parks_callable(self, bound: Bound, before: tuple[Target, ...] | None) -> Any:
        value = self._value(bound)
        if not isinstance(value, (cst.Name, cst.Attribute)):
            return before
        found = self._targets(value)
        return (*(before or ()), *_new(found, before or ())) if found else before

    def _parks_instance(self, bound: Bound, before: tuple[str, ...] | None) -> Any:
        value = self._value(bound)
        if not isinstance(value, cst.Call) or self._is_pool(value):
            return before
        made = _globals(self._targets(value.func))
        return (*(before or ()), *(t.name for t in made)) if made else before

    @staticmethod
    def _makes_own_instance(fn: _Func, call: cst.Call) -> bool:
        """`cls.__new__(cls)` or `cls(...)` in a classmethod: an instance of the class."""
        name = dotted(call.func)
        return fn.self_name is not None and name in (fn.self_name, f"{fn.self_name}.__new__")

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self.write_elsewhere(t.target)  # `mod.FLAG = ...` (program.flag_facts)
            if isinstance(t.target, cst.Name):  # a name bound, not referenced
                self.def_names.add(id(t.target))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Name):
            self.def_names.add(id(node.target))

    # -- references ---------------------------------------------------------
    # A class handed around by name (a registry, a factory's `return Cls`) is
    # constructed where the graph cannot see; references make the constructor
    # check's reachability liberal instead of reporting every such class.
    def _ref(self, expr: cst.BaseExpression) -> None:
        if self.lambdas:
            return
        for t in _globals(self._targets(expr)):
            if t.name.partition(".")[0] == self.package:
                (self.stack[-1].refs if self.stack else self.module_refs).add(t.name)

    def visit_Name(self, node: cst.Name) -> None:
        if self.in_import or id(node) in self.def_names:
            return
        name = node.value
        self.count_use(name)
        if (
            name in self.ctx.imports
            or name in self.module_names
            or any(name in sc.imports for sc in self.ctx.scopes[1:])  # `from x import C` in a def
        ):
            self._ref(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if self.in_import:
            return
        value = node.value
        if isinstance(value, cst.Call):
            name = dotted(value.func) or ""
            if name.rpartition(".")[2] in self.ctx.vocab.bag_accessors:  # type: ignore[union-attr]
                self.members[id(value)] = node.attr.value
        if isinstance(node.value, cst.Name) and node.value.value in self.ctx.imports:
            self._ref(node)

    def visit_Import(self, node: cst.Import) -> None:
        self.in_import = True

    def leave_Import(self, node: cst.Import) -> None:
        self.in_import = False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.in_import = True

    def leave_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.in_import = False

    # -- the try context of a read ---------------------------------------------
    def _caught(self, handler: cst.ExceptHandler | cst.ExceptStarHandler) -> list[str]:
        """The classes a handler that does not raise again catches, qualified as
        this file names them (a builtin by its plain name); none for one that
        raises (the read's failure goes on) or names no class it can tell."""
        if _raises(handler.body):
            return []
        kind = handler.type
        if kind is None:
            return [BARE_EXCEPT]
        names = kind.elements if isinstance(kind, cst.Tuple) else [kind]
        out = []
        for e in names:
            expr = e.value if isinstance(e, cst.Element) else e
            name = dotted(expr)
            if name is None:
                continue
            if self._bound_here(name):
                resolved = self.ctx.resolve(expr)
                if resolved:
                    out.append(resolved)
            else:
                out.append(name.removeprefix("builtins."))
        return out

    def _bound_here(self, name: str) -> bool:
        """The name's head is bound by this file (an import, a module-level def or
        class), so it is no builtin."""
        head = name.partition(".")[0]
        return head != "builtins" and (
            head in self.ctx.imports
            or head in self.module_names
            or any(head in sc.imports for sc in self.ctx.scopes[1:])
        )

    def visit_Try(self, node: cst.Try) -> None:
        super().visit_Try(node)  # its handlers and `else` are branches (flag_facts)
        self._try(node.body, node.handlers)

    def visit_TryStar(self, node: cst.TryStar) -> None:
        super().visit_TryStar(node)
        self._try(node.body, node.handlers)

    def _try(self, body: cst.BaseSuite, handlers: Any) -> None:
        caught = sorted({c for h in handlers for c in self._caught(h)})
        if caught:
            self.guarding[id(body)] = tuple(caught)

    def _enter_suite(self, node: cst.BaseSuite) -> None:
        self._enter_test(node)
        caught = self.guarding.get(id(node))
        if caught:
            self.guards.append((self.stack[-1] if self.stack else None, caught))

    def _leave_suite(self, node: cst.BaseSuite) -> None:
        self._leave_test(node)
        if id(node) in self.guarding:
            self.guards.pop()

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._enter_suite(node)

    def leave_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        self._leave_suite(node)

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self._enter_suite(node)  # `try: x` on one line

    def leave_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        self._leave_suite(node)

    def _caught_around(self, fn: _Func) -> tuple[str, ...]:
        """What the handlers of the `try` bodies around this point of `fn` catch."""
        return tuple(sorted({c for g, caught in self.guards if g is fn for c in caught}))

    # -- calls --------------------------------------------------------------
    def leave_Call(self, node: cst.Call) -> None:
        if self.lambdas:
            return
        self._process_start(node, dotted(node.func))
        if not self.stack:
            return
        targets = self._targets(node.func)
        if not targets:
            return
        fn = self.stack[-1]
        first = targets[0]
        if len(targets) == 1 and isinstance(first, Global):
            special = self.special.get(first.name)
            if special:
                role = _role(node) if special is EventKind.PUBLISH else None
                fn.events.append((Event(special, role=role, when=self.when(fn)), node))
                return
            accessor = self.accessors.get(first.name)
            if accessor:
                member = self.members.pop(id(node), None)
                caught = self._caught_around(fn)
                read = Event(
                    EventKind.READ,
                    accessor=accessor,
                    member=member,
                    caught=caught,
                    when=self.when(fn),
                )
                fn.events.append((read, node))
                return
        call = Event(
            EventKind.CALL, tuple(targets), when=self.when(fn), args=self.call_args(fn, node)
        )
        fn.events.append((call, node))

    # -- output -------------------------------------------------------------
    def finish(self) -> Any:
        funcs = self.funcs
        local = set(funcs)

        def callees(fn: _Func) -> Iterator[str]:
            for event, _ in fn.events:
                for t in event.targets:
                    yield from self._local_targets(fn, t, local)

        def doing(kind: EventKind) -> set[str]:
            return {q for q, f in funcs.items() if any(e.kind is kind for e, _ in f.events)}

        # What the file alone knows: functions that publish (directly or through
        # a same-module helper) and functions that reach a read in this module.
        callers = _callers(funcs, callees)
        publishes = _closure(doing(EventKind.PUBLISH), callers)
        reads = _closure(doing(EventKind.READ), callers)
        started: set[str] = set()
        for s in self.starts:
            for t in s.targets:
                if isinstance(t, Global):
                    started.add(t.name)
                elif isinstance(t, SelfMethod) and s.cls:
                    started.add(f"{s.cls}.{t.name}")
        out: dict[str, FuncSummary] = {}
        attrs = self.attr_flags()
        for q, fn in funcs.items():
            # entry bodies anchor every read and call; a function reaching a read
            # here may publish through another module's helper (only the whole
            # program can tell), so it anchors its body too; every publish and
            # assert_published is anchored (a pin's site, a constructor's guard).
            full = (
                q in publishes
                or q in reads
                or q in started
                or (fn.cls in started and q.endswith(".__init__"))
            )
            events = tuple(
                e._replace(site=self._site(node))
                if full or e.kind in (EventKind.PUBLISH, EventKind.ASSERT)
                else e
                for e, node in fn.events
            )
            if any(e.site is None for e in events):  # their lines: the side part below
                self.lines[q] = [
                    0 if e.site is not None else self.ctx.anchor(node, LineAnchor)
                    for e, (_, node) in zip(events, fn.events, strict=True)
                ]
            refs = tuple(sorted(fn.refs))
            flags = self.func_flags(fn, attrs.get(q, {}))
            out[q] = FuncSummary(q, fn.cls, events, fn.ordered, fn.record_annotated, refs, flags)
        cut = len(self.ctx.module) + 1  # the model keys a class by its qualname in the module
        classes = {
            q: ClassSummary(
                tuple(bases),
                dict(self.parked.attrs.get(q[cut:], {})),
                dict(self.made.attrs.get(q[cut:], {})),
            )
            for q, bases in self.classes.items()
        }
        imports = dict(self.ctx.imports)
        refs = tuple(sorted(self.module_refs))
        summary = ModuleSummary(
            self.ctx.module, out, classes, tuple(self.starts), imports, refs, self.falsy_globals()
        )
        return summary.to_json()  # spans are Anchors until the walk's positions are known

    def _local_targets(self, fn: _Func, target: Target, local: set[str]) -> Iterator[str]:
        """Same-module functions a target can name (for the file's own view)."""
        if isinstance(target, Global):
            if target.name in local:
                yield target.name
            elif f"{target.name}.__init__" in local:
                yield f"{target.name}.__init__"
        elif isinstance(target, SelfMethod) and fn.cls is not None:
            q = f"{fn.cls}.{target.name}"
            if q in local:
                yield q


def _callers(
    funcs: dict[str, _Func], callees: Callable[[_Func], Iterator[str]]
) -> dict[str, list[str]]:
    """Each same-module function's callers among `funcs` (its callees read once)."""
    callers: dict[str, list[str]] = {}
    for q, fn in funcs.items():
        for c in callees(fn):
            callers.setdefault(c, []).append(q)
    return callers


def _closure(seed: set[str], callers: dict[str, list[str]]) -> set[str]:
    """Functions that reach `seed` through same-module calls: `seed` and the
    callers of any function in it, found caller by caller (each function's
    callers read once, not every function's callees again per round)."""
    out = set(seed)
    todo = list(seed)
    while todo:
        for q in callers.get(todo.pop(), ()):
            if q not in out:
                out.add(q)
                todo.append(q)
    return out


def _role(call: cst.Call) -> str | None:
    """The literal `role=` of a publish call (None when absent or computed)."""
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == "role":
            return string_value(arg.value)
    return None


class CallLines(FileVisitor):
    """A side part (program.parts.SIDE): the line of each event that keeps no
    site, per function (0 where it keeps one), as LineAnchors until the walk
    ends. No rule reads them, so a line moving leaves every rule's round answer
    as it was; `ctxlint fix` asks where an entry publishes through another
    module's helper (program/process_entries.runs_unpublished)."""

    def finish(self) -> Any:
        return self.ctx.parts[KEY].lines or None  # the part runs with "calls", after it
