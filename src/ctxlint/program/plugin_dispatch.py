"""Plugin dispatch: the plugin bases of the class index, their hooks, the
implementations, and the method calls that dispatch through a base.

A base is a class that defines abstract methods (`@abstractmethod`) or methods
whose body only raises `NotImplementedError` (unless it overrides an ancestor's:
an implementation declining a hook), plus the classes a config names. A hook is
an interface only where a dispatch site calls it through the base with
arguments that fit the base. The per-file facts are the method calls on
receivers whose class can be told (program.bindings); CTX501 keeps them under
its id and asks this model which dispatches do not fit the signature that
binds them (`misfit_dispatches`) and which implementations do not accept what
their base is called with (`overrides`, `Override.problems`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, Literal

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, dotted
from ctxlint.facts.typed import Site, site
from ctxlint.facts.visitor import FileVisitor
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.classes import ClassIndex, MethodFacts, class_index
from ctxlint.program.core import Program
from ctxlint.program.signatures import (
    CallShape,
    accept_problems,
    bound,
    call_problems,
    sig_text,
    through_base,
)
from ctxlint.program.test_code import is_test_file, test_roots

ID = "CTX501"  # the rule whose facts these are
PLUGIN_BASES = "plugin-bases"
# decorated defs that are never called as hooks: properties, overload stubs,
# dispatch registrations
_NOT_METHODS = frozenset(
    ("property", "cached_property", "setter", "deleter", "getter", "overload", "register")
)


# -- per-file extraction ---------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Receiver:
    """What a method is called on: `self` or `super()` in a method of `cls`, the
    attribute `self.<attr>` of `cls`, or an object of one of `types` ("types")."""

    kind: Literal["self", "super", "attr", "types"]
    cls: str | None = None
    attr: str | None = None
    types: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class MethodCall:
    method: str
    receiver: Receiver
    shape: CallShape
    site: Site
    # attributes of the same receiver that an enclosing `if` test reads before
    # the call can run (`if self.backend.is_chat_model: self.backend.generate(...)`)
    guards: tuple[str, ...] = ()


# An attribute by owner: (the class whose method reads/writes `self.<attr>`, or ""
# for any other object's `<expr>.<attr>`, the attribute)
Slot = tuple[str, str]


_Slots = tuple[
    dict[str, list[tuple[Slot, CallShape]]], dict[str, set[Slot]], set[tuple[Slot, Slot]]
]


# what a call hands each parameter (position or keyword, "*" for an unpacking):
# an own parameter of the caller (a forward) or the classes of what it builds (a
# construction), and the class object it is where it is one
_Forward = tuple[tuple[str, str, str], ...]
_Built = tuple[tuple[str, tuple[str, ...], str], ...]
_Inits = tuple[
    dict[str, dict[str, set[str]]],
    dict[str, list[_Forward]],
    dict[str, list[_Built]],
    dict[tuple[str, str], tuple[str, str]],
]


@dataclass(frozen=True, slots=True)
class PluginFacts:
    calls: tuple[MethodCall, ...]
    # calls of a method on an object read off an attribute (`x.layer.w13_kernel
    # .apply(...)`, or through a local last assigned that read): (slot, method, shape)
    slot_calls: tuple[tuple[Slot, str, CallShape], ...] = ()
    # constructions of a capitalised callee: (its name, the slot it is assigned
    # to, or ("", "") where it goes anywhere else)
    builds: tuple[tuple[str, Slot], ...] = ()
    copies: tuple[tuple[Slot, Slot], ...] = ()  # `x.a = y.b`: (destination, source)
    # `self.<attr> = ...` in a method of a class: (class, attr, the `__init__`
    # parameter it is set from, or "" for any other value)
    sets: tuple[tuple[str, str, str], ...] = ()
    # `super().__init__(...)` in a class's `__init__`: (class, what it hands
    # each parameter: (position or keyword, the own parameter handed or "", the
    # class object handed or ""))
    forwards: tuple[tuple[str, _Forward], ...] = ()
    # constructions of a capitalised callee with what each argument (position or
    # keyword, "*" for an unpacking) is known to be built as (() unknown), and
    # the class object it is ("" none)
    args: tuple[tuple[str, _Built], ...] = ()
    # `self.<attr> = <param>(...)` in a class's `__init__` (alone, or one side of
    # `... if c else None`): (class, attr, the parameter called, its default's
    # qualified name or ""): what the attribute holds is built of the class
    # object the parameter is handed
    made: tuple[tuple[str, str, str, str], ...] = ()


class PluginVisitor(FileVisitor):
    """Method calls on receivers whose class can be told (program.bindings);
    the classes themselves are the class index's (program.classes)."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.calls: list[MethodCall] = []
        # `if isinstance(x, T):` bodies: [receiver text, types, active, id(orelse)] or None
        self.narrow: list[list[Any] | None] = []
        # per enclosing `if`: the (receiver text, attribute) pairs its test reads
        self.guarded: list[set[tuple[str, str]]] = []
        self.slot_calls: set[tuple[Slot, str, CallShape]] = set()
        self.builds: set[tuple[str, Slot]] = set()
        self.copies: set[tuple[Slot, Slot]] = set()
        self.stored: set[int] = set()  # constructions assigned to a slot
        self.locals: dict[tuple[str, str], Slot | None] = {}  # (scope, name) -> read slot
        self.sets: set[tuple[str, str, str]] = set()
        self.forwards: set[tuple[str, _Forward]] = set()
        self.args: set[tuple[str, _Built]] = set()
        self.made: set[tuple[str, str, str, str]] = set()

    # -- what `__init__` parameters set ----------------------------------------
    def _init_param(self, value: cst.BaseExpression | None) -> str:
        """The parameter `value` names where it is one of the enclosing
        `__init__`'s own; "" otherwise."""
        scope = self.ctx.scope
        if scope.kind != "function" or scope.name != "__init__" or scope.class_qualname is None:
            return ""
        if not isinstance(value, cst.Name) or not isinstance(scope.node, cst.FunctionDef):
            return ""
        ps = scope.node.params
        names = {p.name.value for p in (*ps.posonly_params, *ps.params, *ps.kwonly_params)}
        return value.value if value.value in names else ""

    def _set(self, target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        slot = self._slot(target)
        if slot is not None and slot[0]:
            self.sets.add((slot[0], slot[1], self._init_param(value)))
            made = _unless_none(value)
            if isinstance(made, cst.Call) and (param := self._init_param(made.func)):
                self.made.add((slot[0], slot[1], param, self._default(param)))

    def _default(self, param: str) -> str:
        """The qualified name the enclosing `__init__`'s `param` defaults to
        where it is a name ("" otherwise)."""
        node = self.ctx.scope.node
        assert isinstance(node, cst.FunctionDef)
        ps = node.params
        p = next(
            p for p in (*ps.posonly_params, *ps.params, *ps.kwonly_params) if p.name.value == param
        )
        return self._class_object(p.default) if p.default is not None else ""

    def _class_object(self, value: cst.BaseExpression | None) -> str:
        """The qualified name `value` names where it is a capitalised name that
        can be the program's (a class object handed on); "" otherwise."""
        if not isinstance(value, (cst.Name, cst.Attribute)):
            return ""
        name = self.ctx.resolve(value)
        if not name or not name.rpartition(".")[2].lstrip("_")[:1].isupper():
            return ""
        return name if self.ctx.may_name_program_code(name) else ""

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._set(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._set(node.target, None)

    def _built(self, value: cst.BaseExpression) -> tuple[str, ...]:
        """The classes `value` is known to be built as: a construction, or a
        local bound only by assignment (not a declaration: an annotation admits
        subclasses)."""
        b = self.ctx.parts[BINDINGS]
        if isinstance(value, cst.Call):
            return tuple(b.value_types(value)[0])
        r = b.receiver(value)
        if r.kind == "local" and r.binding is not None and r.binding.kind == "assignment":
            return r.binding.instances
        return ()

    def _handed(self, node: cst.Call) -> list[tuple[str, cst.BaseExpression | None]]:
        out: list[tuple[str, cst.BaseExpression | None]] = []
        for i, a in enumerate(node.args):
            key = "*" if a.star else a.keyword.value if a.keyword is not None else str(i)
            out.append((key, None if a.star else a.value))
        return out

    # -- attribute slots -------------------------------------------------------
    def _slot(self, expr: cst.BaseExpression) -> Slot | None:
        if not isinstance(expr, cst.Attribute):
            return None
        r = self.ctx.parts[BINDINGS].receiver(expr.value)
        return (r.cls if r.kind == "self" and r.cls else "", expr.attr.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            pairs: list[tuple[cst.BaseExpression, cst.BaseExpression | None]] = [
                (t.target, node.value)
            ]
            if isinstance(t.target, (cst.Tuple, cst.List)):
                targets = [e.value for e in t.target.elements]
                values = _elements(node.value)
                paired = values is not None and len(values) == len(targets)
                pairs = list(zip(targets, values if paired else [None] * len(targets), strict=True))  # type: ignore[arg-type]
            for target, value in pairs:
                self._set(target, value)
                dest = self._slot(target)
                if isinstance(target, cst.Name):
                    read = self._slot(value) if value is not None else None
                    self.locals[(self.ctx.qualname, target.value)] = read
                elif dest is not None and isinstance(value, cst.Call):
                    if (ctor := self._ctor(value)) is not None:
                        self.builds.add((ctor, dest))
                        self.stored.add(id(value))
                elif dest is not None and (src := self._slot(value)) is not None:
                    self.copies.add((dest, src))

    def _ctor(self, call: cst.Call) -> str | None:
        """The callee's qualified name where it is capitalised, as classes are."""
        if not isinstance(call.func, (cst.Name, cst.Attribute)):
            return None
        name = self.ctx.resolve(call.func)
        return name if name and name.rpartition(".")[2].lstrip("_")[:1].isupper() else None

    def _receiver(self, expr: cst.BaseExpression) -> Receiver | None:
        r = self.ctx.parts[BINDINGS].receiver(expr)
        if r.kind in ("self", "selfattr") and r.flavor != "inst":
            return None
        if r.kind == "self":
            return Receiver("self", r.cls)
        if r.kind == "super":
            return Receiver("super", r.cls)
        if r.kind == "selfattr" and r.cls is not None:
            return Receiver("attr", r.cls, r.attr)
        if r.kind in ("local", "global") and r.binding is not None and r.binding.instances:
            return Receiver("types", types=tuple(r.binding.instances))
        return None

    # -- isinstance narrowing --------------------------------------------------
    def _leave_branch(self, node: cst.CSTNode) -> None:
        for n in self.narrow:
            if n is not None and n[3] == id(node):
                n[2] = False  # the else/elif of a narrowing `if` is not narrowed

    def visit_If(self, node: cst.If) -> None:
        self._leave_branch(node)
        test = node.test
        while isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            test = test.left
        entry = None
        if (
            isinstance(test, cst.Call)
            and isinstance(test.func, cst.Name)
            and test.func.value == "isinstance"
            and len(test.args) == 2
        ):
            target = dotted(test.args[0].value)
            spec = test.args[1].value
            elems = [e.value for e in spec.elements] if isinstance(spec, cst.Tuple) else [spec]
            types = [
                r
                for e in elems
                if isinstance(e, (cst.Name, cst.Attribute)) and (r := self.ctx.resolve(e))
            ]
            if target and types:
                entry = [target, types, True, id(node.orelse) if node.orelse else None]
        self.narrow.append(entry)
        self.guarded.append(set(_always_read(node.test)))

    def visit_Else(self, node: cst.Else) -> None:
        self._leave_branch(node)

    def leave_If(self, node: cst.If) -> None:
        self.narrow.pop()
        self.guarded.pop()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        ctor = self._ctor(node)
        if ctor is not None:
            if id(node) not in self.stored:
                self.builds.add((ctor, ("", "")))
            handed = self._handed(node)
            built = tuple(
                (k, self._built(v) if v is not None else (), self._class_object(v))
                for k, v in handed
            )
            self.args.add((ctor, built))
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value == "__init__"
            and self.ctx.parts[BINDINGS].receiver(func.value).kind == "super"
            and self.ctx.scope.name == "__init__"
            and (cls := self.ctx.enclosing_class()) is not None
        ):
            params = tuple(
                (k, self._init_param(v), self._class_object(v)) for k, v in self._handed(node)
            )
            self.forwards.add((f"{self.ctx.module}.{cls}", params))
        if not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
        if method.startswith("__") and method.endswith("__"):
            return
        shape = _shape(node)
        read = self._slot(func.value)
        if isinstance(func.value, cst.Name):
            read = self.locals.get((self.ctx.qualname, func.value.value))
        if read is not None:
            self.slot_calls.add((read, method, shape))
        recv = None
        if self.narrow:
            text = dotted(func.value)
            for n in reversed(self.narrow):
                if n is not None and n[2] and n[0] == text:
                    recv = Receiver("types", types=tuple(n[1]))
                    break
        recv = recv or self._receiver(func.value)
        if recv is None:
            return
        text = dotted(func.value)
        guards = sorted({a for g in self.guarded for t, a in g if t == text}) if text else []
        self.calls.append(MethodCall(method, recv, shape, site(self.ctx, node), tuple(guards)))

    def finish(self) -> PluginFacts | None:
        named = self.ctx.may_name_program_code
        builds = tuple(sorted(b for b in self.builds if named(b[0])))
        slots = (
            tuple(sorted(self.slot_calls, key=repr)),
            builds,
            tuple(sorted(self.copies)),
            tuple(sorted(self.sets)),
            tuple(sorted(self.forwards)),
            tuple(sorted(a for a in self.args if named(a[0]))),
            tuple(sorted(self.made)),
        )
        if not self.calls and not any(slots):
            return None
        return PluginFacts(tuple(self.calls), *slots)


def _unless_none(value: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """The other side of `x if c else None` (or `None if c else x`): `None`
    holds no object to dispatch on; `value` itself otherwise."""
    if isinstance(value, cst.IfExp):
        sides = [value.body, value.orelse]
        rest = [e for e in sides if not (isinstance(e, cst.Name) and e.value == "None")]
        return rest[0] if len(rest) == 1 else value
    return value


def _elements(value: cst.BaseExpression) -> list[cst.BaseExpression] | None:
    """The elements of a tuple or list display with no starred one."""
    if not isinstance(value, (cst.Tuple, cst.List)):
        return None
    if any(isinstance(e, cst.StarredElement) for e in value.elements):
        return None
    return [e.value for e in value.elements]


def _shape(node: cst.Call) -> CallShape:
    return CallShape(
        sum(1 for a in node.args if a.keyword is None and not a.star),
        any(a.star == "*" for a in node.args),
        tuple(a.keyword.value for a in node.args if a.keyword is not None),
        any(a.star == "**" for a in node.args),
    )


def _always_read(test: cst.BaseExpression) -> Iterator[tuple[str, str]]:
    """(receiver text, attribute) for each attribute read that evaluating `test`
    always makes: through `not`, the left operand of `and`/`or`, a comparison's
    first two operands, a call's callee and arguments, a subscript's value, and
    every hop of a dotted name (`self.backend.is_chat_model` reads `backend` of
    `self` and `is_chat_model` of `self.backend`)."""
    if isinstance(test, cst.Attribute):
        if (text := dotted(test.value)) is not None:
            yield text, test.attr.value
        yield from _always_read(test.value)
    elif isinstance(test, cst.UnaryOperation):
        yield from _always_read(test.expression)
    elif isinstance(test, cst.BooleanOperation):
        yield from _always_read(test.left)
    elif isinstance(test, cst.Comparison):
        yield from _always_read(test.left)
        yield from _always_read(test.comparisons[0].comparator)
    elif isinstance(test, cst.Call):
        yield from _always_read(test.func)
        for a in test.args:
            yield from _always_read(a.value)
    elif isinstance(test, cst.Subscript):
        yield from _always_read(test.value)


# -- the whole program -------------------------------------------------------------
def plugin_graph(program: Program) -> Graph:
    """The program's plugin graph, once per run (and fixed-point round): the
    rounds, the derivation, the pins and the check share it."""
    return program.memo(f"{ID} graph", lambda: Graph(program))


class Graph:
    """The plugin bases of the class index, their hooks, implementations and dispatches."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.index: ClassIndex = class_index(program)
        self.classes = self.index.classes
        self.where = self.index.where
        self.mro = self.index.mro
        # qualified class -> the methods a caller can call as hooks
        self.methods: dict[str, dict[str, MethodFacts]] = {
            q: {n: m for n, m in c.methods.items() if not _NOT_METHODS.intersection(m.decorators)}
            for q, c in self.classes.items()
        }
        configured = program.config.options.get(PLUGIN_BASES, [])
        self.configured = [str(c) for c in configured]
        self.bases = self._bases()
        self.configured_real = {
            real for name in self.configured if (real := self.index.resolve(name)) is not None
        }
        self._dispatches: list[tuple[str, MethodCall, str, str, int]] | None = None
        self._interface_calls: dict[tuple[str, str], list[tuple[str, MethodCall]]] | None = None
        self._implementations: dict[str, list[str]] | None = None
        self._overrides: list[Override] | None = None
        self._slots: _Slots | None = None
        self._inits: _Inits | None = None
        self._handed: dict[tuple[str, str], list[str]] = {}

    def _bases(self) -> dict[str, dict[str, MethodFacts]]:
        """Plugin base -> hook -> method facts."""
        out: dict[str, dict[str, MethodFacts]] = {}
        for qual, methods in self.methods.items():
            ancestors = self.mro(qual)[1:]
            hooks = {}
            for name, m in methods.items():
                if name.startswith("__") or m.abstract is None:
                    continue
                if m.abstract == "raise" and any(name in self.methods[a] for a in ancestors):
                    continue  # an implementation declining a hook, not a new hook
                if m.flavor == "inst" and not any(p[1] in ("po", "pk", "va") for p in m.params):
                    continue  # no `self`: a placeholder no call can reach, no interface
                hooks[name] = m
            if hooks:
                out[qual] = hooks
        for name in self.configured:
            real = self.index.resolve(name)
            if real is None:
                continue
            hooks = out.setdefault(real, {})
            for mname, m in self.methods[real].items():
                if not mname.startswith("_"):
                    hooks.setdefault(mname, m)
        return out

    def hook_base(self, cls: str, hook: str) -> str | None:
        """The nearest plugin base in `cls`'s ancestry (itself included) declaring `hook`."""
        if cls not in self.classes:
            return None
        for a in self.mro(cls):
            if hook in self.bases.get(a, ()):
                return a
        return None

    def implementations(self) -> dict[str, list[str]]:
        """In-tree subclass -> the plugin bases it derives from (worked out once)."""
        if self._implementations is None:
            self._implementations = {}
            for qual in self.classes:
                bases = [a for a in self.mro(qual)[1:] if a in self.bases]
                if bases:
                    self._implementations[qual] = bases
        return self._implementations

    def receiver_types(self, recv: Receiver) -> list[str]:
        k, cls, index = recv.kind, recv.cls, self.index
        if k == "self":
            return [cls]  # type: ignore[list-item]
        if k == "super":
            return list(self.mro(cls)[1:2]) if cls in self.classes else []  # type: ignore[arg-type]
        if k == "attr":
            if cls not in self.classes:
                return []
            declared = [c for t in index.attr_types(cls, recv.attr) for c in index.instances(t)]  # type: ignore[arg-type]
            given = self.handed(cls, recv.attr) if declared else []  # type: ignore[arg-type]
            if given and not any(d in self.mro(g) for g in given for d in declared):
                return given  # every object built of it is handed something else
            return declared
        return [c for t in recv.types for c in index.instances(t)]

    def dispatches(self) -> list[tuple[str, MethodCall, str, str, int]]:
        """(path, call, base, definer, receiver types) for every call of a hook on
        a plugin object, worked out once (the derivation and the check ask).

        `definer` is the nearest class defining the method for the receiver's
        type: the base itself, or an override between (whose own signature
        binds the call, and which is checked against the base separately)."""
        if self._dispatches is None:
            self._dispatches = list(self._find_dispatches())
        return self._dispatches

    def interface_calls(self) -> dict[tuple[str, str], list[tuple[str, MethodCall]]]:
        """(base, hook) -> the dispatch calls made through the base itself that fit
        its signature: the calls an implementation must take (worked out once)."""
        if self._interface_calls is None:
            found: dict[tuple[str, str], list[tuple[str, MethodCall]]] = {}
            for path, call, base, definer, _ in self.dispatches():
                hook = self.methods[definer][call.method]
                if definer == base and not call_problems(bound(hook), call.shape):
                    found.setdefault((base, call.method), []).append((path, call))
            self._interface_calls = found
        return self._interface_calls

    def is_interface(self, base: str, hook: str) -> bool:
        """Whether a hook is an interface whose signature is a contract: a dispatch
        calls it through the base with the base's arguments, or the base is one the
        config names (its implementations live outside the tree). A method that only
        raises `NotImplementedError` with no such dispatch (a model's `forward`,
        called through `__call__` with each model's own arguments) pins nothing."""
        return (base, hook) in self.interface_calls() or base in self.configured_real

    def _find_dispatches(self) -> Iterator[tuple[str, MethodCall, str, str, int]]:
        for path, _, facts in self.program.typed_facts(ID, PluginFacts):
            for call in facts.calls:
                seen: set[str] = set()
                types = self.receiver_types(call.receiver)
                for t in types:
                    base = self.hook_base(t, call.method)
                    if base is None or base in seen:
                        continue
                    seen.add(base)
                    definer = next(a for a in self.mro(t) if call.method in self.methods[a])
                    yield path, call, base, definer, len(set(types))

    def misfit_dispatches(self) -> Iterator[tuple[str, MethodCall, str, str, list[str]]]:
        """(path, call, base, definer, problems) for each dispatch that does not
        fit the signature binding it: the base's, or an override's when that is
        the receiver's one class."""
        for path, call, base, definer, ntypes in self.dispatches():
            hook = self.methods[definer][call.method]
            if definer != base and hook.abstract == "raise":
                continue  # the receiver's one override declines the hook: it raises anyway
            if definer == base and self.unguarded(base, call):
                continue  # a plugin that follows the base fails at the guard, not here
            problems = call_problems(bound(hook), call.shape)
            if problems and (definer == base or ntypes <= 1):
                yield path, call, base, definer, problems

    def failing_implementations(
        self, path: str, call: MethodCall, base: str
    ) -> list[tuple[str, str]]:
        """(`Impl.hook` (file.py:line), `Impl.hook(sig)` (path)) for each in-tree
        implementation, by its own override of the hook, that a dispatch through
        `base` reaches and does not fit either: the receiver can be one (it is
        declared, or handed, as one of its ancestors, no nearer declared kind
        sets it apart, and it is not held apart), its override does not decline
        the hook, and is no other interface of the name."""
        name = call.method
        out: list[tuple[tuple[bool, int, int, str], str, str]] = []  # (order, label, detail)
        hook = self.bases[base][name]
        types = self.receiver_types(call.receiver)
        # each dispatch site of the hook with its receiver's types (asked once,
        # not again for every implementation)
        sites = [
            (p, c, self.receiver_types(c.receiver))
            for p, c in self.interface_calls().get((base, name), [])
        ]
        roots = test_roots(self.program)
        for impl in sorted(self.implementations()):
            m = self.methods[impl].get(name)
            if m is None or m.abstract == "raise" or m.flavor != hook.flavor:
                continue  # inherits it, declines it, or a static/class override
            mro = self.mro(impl)
            if impl == base or base not in mro or not any(t in mro for t in types):
                continue
            if not call_problems(bound(m), call.shape):
                continue
            reach = [(p, c) for p, c, held in sites if any(t in mro for t in held)]
            if (path, call) not in self.through_nearest(impl, base, [*reach, (path, call)]):
                continue  # a kind declared nearer sets it apart from this receiver
            if self.held_apart(impl) or self.own_interface(impl, name, hook):
                continue  # held where this receiver is not, or another interface
            where, short = self.where[impl][0], impl.rpartition(".")[2]
            # named first: not test code, not the attribute's own holder (a
            # composite is not its own part), then the nearest the dispatch's
            # file, then the nearest its receiver's class
            holder = call.receiver.kind == "attr" and call.receiver.cls in mro
            holder = holder or is_test_file(where, roots)
            near = len(os.path.commonpath([where, path]).split("/"))
            depth = min(mro.index(t) for t in types if t in mro)
            label = f"`{short}.{name}` ({where.rpartition('/')[2]}:{m.span[0]})"
            detail = f"{short}.{name}{sig_text(m.params)} ({where}:{m.span[0]})"
            out.append(((holder, -near, depth, impl), label, detail))
        return [(label, detail) for _, label, detail in sorted(out)]

    def raising_here(self, path: str, call: MethodCall, base: str) -> tuple[str, list[str]]:
        """What raises `TypeError` at a dispatch through `base` that does not fit
        it: a plugin following the base, and the in-tree implementations
        `failing_implementations` names (the message's first and how many more;
        a details line each)."""
        failing = self.failing_implementations(path, call, base)
        # the receiver's declaration admits these; a branch or a registry key
        # the model does not read may rule some out here: "would", "if held"
        tree = [f"would raise TypeError here too, if held: {d}" for _, d in failing]
        plugin = "a plugin following the base signature"
        if not failing:
            return f"{plugin} raises TypeError here", tree
        more = f" and {len(failing) - 1} more" if len(failing) > 1 else ""
        held = "if the receiver holds one" if len(failing) > 1 else "if the receiver holds it"
        return (
            f"in-tree {failing[0][0]}{more} would raise TypeError here {held}, as would a plugin",
            tree,
        )

    def unguarded(self, base: str, call: MethodCall) -> list[str]:
        """The attributes an `if` test guarding `call` reads of its receiver that
        neither `base` (nor any of its ancestors) nor the receiver's own class
        gives its instances: the call runs only for implementations that add
        them, so the base's signature is not what binds it."""
        if not call.guards:
            return []
        owners = {base, *self.receiver_types(call.receiver)}
        has = self.index.has_attribute
        return [g for g in call.guards if all(has(c, g) is False for c in owners)]

    def interface_hooks(self) -> Iterator[tuple[str, str, MethodFacts]]:
        """(base, hook, its method) for each hook whose signature is a contract."""
        for base, hooks in self.bases.items():
            for hook, m in hooks.items():
                if self.is_interface(base, hook):
                    yield base, hook, m

    def overrides(self) -> list[Override]:
        """The overrides `_find_overrides` finds, worked out once: the derived sets
        (`other_interfaces`) and the check both ask, and each judges every
        override's problems."""
        if self._overrides is None:
            self._overrides = list(self._find_overrides())
        return self._overrides

    def _find_overrides(self) -> Iterator[Override]:
        """Each in-tree implementation's override of an interface hook it can be
        compared with (the same flavor), by implementation and name, with the
        dispatch calls whose receiver can be it; an override of a hook only ever
        dispatched on objects that cannot be its class is left out, and so is one
        whose body only raises `NotImplementedError` (it declines the hook: every
        call fails however it is made)."""
        sites = self.interface_calls()
        for impl, _ in sorted(self.implementations().items()):
            for name, m in sorted(self.methods[impl].items()):
                base = next((a for a in self.mro(impl)[1:] if name in self.bases.get(a, ())), None)
                if base is None:
                    continue
                hook = self.bases[base][name]
                if m.flavor != hook.flavor or not self.is_interface(base, name):
                    continue  # a static/class override of an instance hook; no contract
                if m.abstract == "raise":
                    continue  # declines the hook: any call fails, the signature pins nothing
                calls = [
                    (site_path, call)
                    for site_path, call in sites.get((base, name), [])
                    if any(t in self.mro(impl) for t in self.receiver_types(call.receiver))
                ]
                if (base, name) in sites and not calls:
                    continue  # dispatched, but never on an object that can be this class
                if calls and self.held_apart(impl, name):
                    continue  # its objects go where only its own signature binds the calls
                o = Override(impl, name, m, base, hook, self.through_nearest(impl, base, calls))
                if o.problems():  # is it another interface of the same name?
                    o = replace(o, own=tuple(self.own_interface(impl, name, hook)))
                yield o

    def held_apart(self, impl: str, name: str | None = None) -> list[tuple[str, MethodCall]]:
        """The dispatches (of `name`, or of any hook) on a receiver `self.<attr>`
        that what the constructors hand shows holds `impl` alone, where `impl`
        is never built by its name: its objects are built through a class object
        handed to an `__init__` (sglang's `MiniMaxSparseKVPool(index_k_pool_cls=
        ...)` sets `self.index_k_pool = index_k_pool_cls(...)`), so they are held
        there and dispatched with what `impl` itself takes, not through the base
        by receivers declared more generally. Empty otherwise."""
        if impl in self._slot_facts()[1]:
            return []  # built by name somewhere: it may go anywhere
        return [
            (path, call)
            for path, call, _, definer, _ in self.dispatches()
            if name in (None, call.method)
            and definer == impl
            and call.receiver.kind == "attr"
            and self.handed(call.receiver.cls, call.receiver.attr) == [impl]  # type: ignore[arg-type]
        ]

    def _slot_facts(self) -> _Slots:
        """By method: the slots its calls read; by class: where it is built;
        the slot copies (worked out once)."""
        if self._slots is None:
            calls: dict[str, list[tuple[Slot, CallShape]]] = {}
            builds: dict[str, set[Slot]] = {}
            copies: set[tuple[Slot, Slot]] = set()
            for _, _, facts in self.program.typed_facts(ID, PluginFacts):
                for slot, method, shape in facts.slot_calls:
                    calls.setdefault(method, []).append((slot, shape))
                copies.update(facts.copies)
                for ctor, slot in facts.builds:
                    if (real := self.index.resolve(ctor)) is not None:
                        builds.setdefault(real, set()).add(slot)
            self._slots = (calls, builds, copies)
        return self._slots

    def _same_slot(self, a: Slot, b: Slot) -> bool:
        """Whether two slots can be one object's attribute: the same name, on
        any object ("") or on classes one object can be both of."""
        if a[1] != b[1]:
            return False
        if not a[0] or not b[0]:
            return True
        below = self.index.subclasses
        return bool({a[0], *below(a[0])} & {b[0], *below(b[0])})

    def own_interface(self, impl: str, name: str, hook: MethodFacts) -> list[Slot]:
        """The attributes through which `impl`'s `name` is another interface of
        that name (issue 36: sglang's NPU MoE kernels, `FusedMoEMethodBase`
        subclasses whose `apply` the Ascend runner calls as `w13_kernel.apply(
        quant_info, x, expert_tokens, ...)`): every construction of a class that
        runs this method is assigned to an attribute, those attributes (and the
        ones they are copied to) are read only by calls of `name` that fit this
        method, and one of them does not fit the base's. Empty otherwise."""
        calls, builds, copies = self._slot_facts()
        family = [c for c in (impl, *self.index.subclasses(impl)) if self._definer(c, name) == impl]
        slots = {s for c in family for s in builds.get(c, ())}
        if not slots or ("", "") in slots:
            return []  # never built by name, or built somewhere other than an attribute
        todo = list(slots)
        while todo:
            src = todo.pop()
            for dest, copied in copies:
                if dest not in slots and self._same_slot(copied, src):
                    slots.add(dest)
                    todo.append(dest)
        mine, base = bound(self.methods[impl][name]), bound(hook)
        read = [
            shape
            for slot, shape in calls.get(name, ())
            if any(self._same_slot(slot, s) for s in slots)
        ]
        if not read or any(call_problems(mine, shape) for shape in read):
            return []
        if not any(call_problems(base, shape) for shape in read):
            return []
        return sorted(slots)

    def _init_facts(self) -> _Inits:
        """By class: how its `self` attributes are set, its `super().__init__`
        calls, its constructions' arguments, the attributes it sets by calling
        a class-object parameter (worked out once)."""
        if self._inits is None:
            sets: dict[str, dict[str, set[str]]] = {}
            forwards: dict[str, list[_Forward]] = {}
            args: dict[str, list[_Built]] = {}
            made: dict[tuple[str, str], tuple[str, str]] = {}
            for _, _, facts in self.program.typed_facts(ID, PluginFacts):
                for cls, attr, param in facts.sets:
                    sets.setdefault(cls, {}).setdefault(attr, set()).add(param)
                for cls, handed in facts.forwards:
                    forwards.setdefault(cls, []).append(handed)
                for ctor, built in facts.args:
                    if (real := self.index.resolve(ctor)) is not None:
                        args.setdefault(real, []).append(built)
                for cls, attr, param, default in facts.made:
                    made[(cls, attr)] = (param, default)
            self._inits = (sets, forwards, args, made)
        return self._inits

    def handed(self, cls: str, attr: str) -> list[str]:
        """The classes of what `self.<attr>` holds in `cls`'s methods where every
        object that can be `self` there sets it once, in an `__init__`, from a
        parameter that each construction of its class hands a value it builds
        (HiCache's `mem_pool_host`, `HostPoolGroup(entries)` at every
        `HybridCacheController(...)` of 0.5.17); empty where any of that is not told."""
        if (cls, attr) not in self._handed:
            out: set[str] = set()
            for x in (cls, *self.index.subclasses(cls)):
                got = self._handed_one(x, attr)
                if not got:
                    out = set()
                    break
                out.update(got)
            self._handed[(cls, attr)] = sorted(out)
        return self._handed[(cls, attr)]

    def _handed_one(self, cls: str, attr: str) -> list[str]:
        sets, forwards, args, made = self._init_facts()
        mro = self.mro(cls)
        setters = [(a, p) for a in mro for p in sets.get(a, {}).get(attr, ())]
        if len(setters) != 1:
            return []  # set more than once
        owner, param = setters[0]
        # `self.<attr> = <param>(...)`: built of the class object handed
        called, default = ("", "") if param else made.get((owner, attr), ("", ""))
        param = param or called
        inits = [a for a in mro if "__init__" in self.classes[a].methods]
        if not param or owner not in inits:
            return []  # set from something else than a parameter
        for i in range(inits.index(owner), 0, -1):  # back to the first `__init__` run
            handed = forwards.get(inits[i - 1], [])
            if len(handed) != 1:
                return []
            got = self._hand(handed[0], self._key(inits[i], param))
            if got is None:
                if not called or any(k == "*" for k, _, _ in handed[0]):
                    return []  # not handed on, or perhaps through an unpacking
                return self._objects_of([default])  # the parameter's default
            own, obj = got
            if called and obj:
                return self._objects_of([obj])  # this `__init__` fixes the class
            if not own:
                return []
            param = own
        key = self._key(inits[0], param)
        out: set[str] = set()
        for built in args.get(cls, []) or [()]:
            if any(k == "*" for k, _, _ in built):
                return []  # unpacked: not known
            got_built = [(t, obj) for k, t, obj in built if k in key]
            if called:
                classes = [obj for _, obj in got_built] or ([default] if built else [])
                objects = self._objects_of(classes)
                if not objects:
                    return []
                out.update(objects)
                continue
            types = [t for t, _ in got_built]
            if len(types) != 1 or not types[0]:
                return []  # not handed, or not known
            out.update(c for t in types[0] for c in self.index.instances(t))
        return sorted(out)

    @staticmethod
    def _hand(handed: _Forward, key: set[str]) -> tuple[str, str] | None:
        """What a forward hands the parameter `key` names (the own parameter, the
        class object); None where it hands it nothing. A position after an
        unpacking is not where it seems, so it is not matched."""
        for i, (k, own, obj) in enumerate(handed):
            if k in key and (not k.isdigit() or all(h[0] != "*" for h in handed[:i])):
                return own, obj
        return None

    def _objects_of(self, class_objects: list[str]) -> list[str]:
        """The classes of what calling each class object builds; empty where
        one is not a class of the tree."""
        out: list[str] = []
        for name in class_objects:
            real = self.index.resolve(name) if name else None
            if real is None:
                return []
            out.append(real)
        return sorted(set(out))

    def _key(self, cls: str, param: str) -> set[str]:
        """How a call of `cls(...)` can hand `param`: by keyword, by position."""
        params = bound(self.classes[cls].methods["__init__"])
        key = {param}
        for i, p in enumerate(q for q in params if q[1] in ("po", "pk")):
            if p[0] == param:
                key.add(str(i))
        return key

    def _definer(self, cls: str, name: str) -> str | None:
        return next((a for a in self.mro(cls) if name in self.methods.get(a, {})), None)

    def configured_missing(self) -> list[str]:
        """The classes the config names as plugin bases that the tree lacks."""
        return sorted(c for c in self.configured if self.index.resolve(c) is None)

    def other_interfaces(self) -> dict[str, list[str]]:
        """Implementation.method -> the attributes through which it serves another
        interface of the hook's name (`ctxlint sets`; `*` for any object's)."""
        return {
            f"{o.impl}.{o.name}": [f"{owner or '*'}.{attr}" for owner, attr in o.own]
            for o in self.overrides()
            if o.own
        }

    def through_nearest(
        self, impl: str, base: str, calls: list[tuple[str, MethodCall]]
    ) -> list[tuple[str, MethodCall]]:
        """The dispatches `impl` answers to: where some dispatch's receiver is
        declared (annotated, or assigned constructions) as a subclass S of the
        base that `impl` derives from, the kind of plugin the code set apart
        for it (a hybrid backend's `linear_attn_backend: MambaAttnBackendBase`
        beside its `full_attn_backend: AttentionBackend`), `impl` answers to
        the dispatches through the nearest such S (or through a class between
        S and `impl`: `self` in one), not to those declared more generally."""
        mro = self.mro(impl)

        def depth(call: MethodCall) -> int:  # how near `impl` its receiver's declared class is
            types = self.receiver_types(call.receiver)
            return min((mro.index(t) for t in types if t in mro), default=len(mro))

        # `self`/`super()` declare no kind: the class's own code, not a receiver's
        declared = [depth(c) for _, c in calls if c.receiver.kind in ("attr", "types")]
        nearest = min(declared, default=len(mro))
        if nearest >= mro.index(base):  # none declared below the base
            return calls
        return [(p, c) for p, c in calls if depth(c) <= nearest]


@dataclass(frozen=True, slots=True)
class Override:
    """An implementation's method `name` overriding the interface hook of `base`."""

    impl: str
    name: str
    method: MethodFacts
    base: str
    hook: MethodFacts
    calls: list[tuple[str, MethodCall]]  # (path, call): the dispatches that can reach it
    # where it is another interface of the name: the attributes holding every
    # object of it, read only by calls that fit it (Graph.own_interface)
    own: tuple[Slot, ...] = ()

    def problems(self) -> list[str]:
        """What it does not accept of the base's contract and of each dispatch's
        arguments the base's named parameters take, each once."""
        if self.own:
            return []
        mine, base = bound(self.method), bound(self.hook)
        out = accept_problems(mine, base, dispatched=bool(self.calls))
        unbound: set[str] = set()
        for site_path, call in self.calls:
            shape = through_base(call.shape, base)
            left = dict(_left_unbound(mine, base, shape))
            for p in call_problems(mine, shape):
                name = p.removeprefix("missing required `").removesuffix("`")
                if name in left:  # a positional the dispatch's own ones bind elsewhere
                    unbound.add(name)
                    p = left[name]
                out.append(f"{p} at the dispatch {site_path}:{call.site.span[0]}")
        # "requires `x`, which the base does not pass" misreads where the base has
        # an `x` too: the dispatches' positionals fill the override's others first
        told = {f"requires `{n}`, which the base does not pass" for n in unbound}
        return list(dict.fromkeys(p for p in out if p not in told))


_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
_ORDINALS = ("", "first", "second", "third", "fourth", "fifth", "sixth", "seventh")
_ORDINALS += ("eighth", "ninth", "tenth")


def _left_unbound(params: list[Any], base: list[Any], call: CallShape) -> Iterator[tuple[str, str]]:
    """(name, why) for each required positional of `params` that a call passing
    some positionals, none unpacked, leaves unbound where one of them binds a
    parameter the base names otherwise: "the dispatch passes four positionals;
    the override's fifth parameter, `attn_metadata`, is left unbound" (the
    fourth went to `gate_compress`, where the base has `attn_metadata`)."""
    n = call.npos
    positional = [p for p in params if p[1] in ("po", "pk")]
    theirs = [p for p in base if p[1] in ("po", "pk")]
    if n == 0 or call.star or call.dstar:
        return
    if all(a[0] == b[0] for a, b in zip(positional[:n], theirs[:n], strict=False)):
        return  # the positionals bind as the base's do: "missing required" says it
    count = f"{_WORDS[n] if n < len(_WORDS) else n} positional{'s' if n != 1 else ''}"
    for i, (name, _, default) in enumerate(positional):
        if i >= n and default is None and name not in call.kws:
            nth = _ORDINALS[i + 1] if i + 1 < len(_ORDINALS) else f"#{i + 1}"
            yield (
                name,
                (
                    f"the dispatch passes {count}; the override's {nth} parameter, "
                    f"`{name}`, is left unbound"
                ),
            )
