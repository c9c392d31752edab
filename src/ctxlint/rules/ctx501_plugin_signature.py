"""CTX501 plugin-signature: plugin hooks, their dispatch sites and implementations agree.

Plugin bases are derived, not listed: a class in the tree that defines abstract
methods (`@abstractmethod`) or methods whose body only raises
`NotImplementedError` (unless that method overrides one of an ancestor: then it
is an implementation declining a hook, not a new one), plus the classes named
in `plugin-bases`. Their hooks are those methods (every public method, for a
configured base). Each hook's signature is pinned in the baseline; every call
of a hook on an object of a base is checked against the base signature, and
every in-tree implementation (transitively, across modules) must accept what
the base and its dispatch sites pass.

The classes (bases, method signatures, attribute types) are the class index's
(program.classes, C3 MRO, through re-exports); this rule's facts are the
method calls on receivers whose class can be told (program.bindings: `self`,
`super()`, annotated parameters/locals/attributes, objects constructed in the
scope, isinstance-narrowed names).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, dotted
from ctxlint.facts.typed import Site, site
from ctxlint.facts.visitor import FileVisitor
from ctxlint.facts.vocab import Vocabulary
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.classes import KEY as CLASSES
from ctxlint.program.classes import ClassIndex, MethodFacts, Param, class_index
from ctxlint.program.core import Program
from ctxlint.program.rule import PinSite, RawFinding, Rule, pin_findings
from ctxlint.program.signatures import (
    CallShape,
    accept_problems,
    bound,
    call_problems,
    sig_text,
)

ID = "CTX501"
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


@dataclass(frozen=True, slots=True)
class PluginFacts:
    calls: tuple[MethodCall, ...]


class PluginVisitor(FileVisitor):
    """Method calls on receivers whose class can be told (program.bindings);
    the classes themselves are the class index's (program.classes)."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.calls: list[MethodCall] = []
        # `if isinstance(x, T):` bodies: [receiver text, types, active, id(orelse)] or None
        self.narrow: list[list[Any] | None] = []

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

    def visit_Else(self, node: cst.Else) -> None:
        self._leave_branch(node)

    def leave_If(self, node: cst.If) -> None:
        self.narrow.pop()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
        if method.startswith("__") and method.endswith("__"):
            return
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
        shape = CallShape(
            sum(1 for a in node.args if a.keyword is None and not a.star),
            any(a.star == "*" for a in node.args),
            tuple(a.keyword.value for a in node.args if a.keyword is not None),
            any(a.star == "**" for a in node.args),
        )
        self.calls.append(MethodCall(method, recv, shape, site(self.ctx, node)))

    def finish(self) -> PluginFacts | None:
        return PluginFacts(tuple(self.calls)) if self.calls else None


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
            return [c for t in index.attr_types(cls, recv.attr) for c in index.instances(t)]  # type: ignore[arg-type]
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


class PluginSignature(Rule):
    id = ID
    name = "plugin-signature"
    summary = (
        "A plugin hook called, or implemented, with a signature the plugin base does not "
        "declare; hook signatures are pinned in the baseline"
    )
    visitor = PluginVisitor
    requires = (BINDINGS, CLASSES)
    options: ClassVar[dict[str, Any]] = {PLUGIN_BASES: []}

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return {"NotImplementedError", "abstractmethod"}

    def more_tokens(self, program: Program) -> set[str]:
        """Names of bases and their subclasses so far: implementations and
        dispatch sites in other files mention one of them."""
        graph = plugin_graph(program)
        names = {c.rpartition(".")[2] for c in graph.configured}
        names |= {b.rpartition(".")[2] for b in graph.bases}
        names |= {i.rpartition(".")[2] for i in graph.implementations()}
        return names

    def derive(self, program: Program) -> dict[str, Any]:
        graph = plugin_graph(program)
        return {
            "plugin bases": {
                base: {h: sig_text(m.params) for h, m in sorted(hooks.items())}
                for base, hooks in sorted(graph.bases.items())
            },
            "configured plugin bases not found": sorted(
                c for c in graph.configured if graph.index.resolve(c) is None
            ),
            "implementations": {
                impl: sorted(bases) for impl, bases in sorted(graph.implementations().items())
            },
            "dispatch sites": sorted(
                f"{path}:{call.site.span[0]} {call.site.snippet[:80]} -> {base}.{call.method}"
                for path, call, base, _, _ in graph.dispatches()
            ),
        }

    def pins(self, program: Program) -> dict[str, Any]:
        graph = plugin_graph(program)
        return {
            f"{base}.{hook}": sig_text(m.params)
            for base, hooks in graph.bases.items()
            for hook, m in hooks.items()
            if graph.is_interface(base, hook)
        }

    def check(self, program: Program) -> Iterable[RawFinding]:
        graph = plugin_graph(program)
        out: list[RawFinding] = []
        # dispatch sites against the base signature
        sites = graph.interface_calls()
        for path, call, base, definer, ntypes in graph.dispatches():
            hook = graph.methods[definer][call.method]
            problems = call_problems(bound(hook), call.shape)
            if not problems or (definer != base and ntypes > 1):
                # an override binds the call only when it is the receiver's one class
                continue
            if definer == base:
                whose = "plugin hook"
                result = "a plugin that follows the base signature fails here with a TypeError"
            else:
                whose = f"{_short(base)} hook override"
                result = "this call raises TypeError"
            hook_name = f"{_short(definer)}.{call.method}"
            out.append(
                RawFinding(
                    ID,
                    path,
                    call.site.scope,
                    call.site.snippet,
                    call.site.span,
                    f"call of {whose} `{hook_name}` does not fit its signature "
                    f"({_first(problems)}): {result}",
                    _details(
                        [f"hook: {hook_name}{sig_text(hook.params)}"],
                        problems,
                    ),
                )
            )
        # implementations against the base contract and what its dispatch passes
        for impl, _ in sorted(graph.implementations().items()):
            path, qual = graph.where[impl]
            for name, m in sorted(graph.methods[impl].items()):
                base = next(
                    (a for a in graph.mro(impl)[1:] if name in graph.bases.get(a, ())), None
                )
                if base is None:
                    continue
                hook = graph.bases[base][name]
                if m.flavor != hook.flavor:
                    continue  # a static/class override of an instance hook: not comparable
                if not graph.is_interface(base, name):
                    continue  # no dispatch calls it with the base's arguments: no contract
                # the dispatches whose receiver can be this implementation
                calls = [
                    (site_path, call)
                    for site_path, call in sites.get((base, name), [])
                    if any(t in graph.mro(impl) for t in graph.receiver_types(call.receiver))
                ]
                if (base, name) in sites and not calls:
                    continue  # dispatched, but never on an object that can be this class
                problems = accept_problems(bound(m), bound(hook), dispatched=bool(calls))
                for site_path, call in calls:
                    for p in call_problems(bound(m), _through(call.shape, bound(hook))):
                        problems.append(f"{p} at the dispatch {site_path}:{call.site.span[0]}")
                if problems:
                    problems = list(dict.fromkeys(problems))
                    out.append(
                        RawFinding(
                            ID,
                            path,
                            f"{qual}.{name}",
                            f"def {name}{sig_text(m.params)}",
                            m.span,
                            f"`{_short(impl)}.{name}` does not accept what the plugin base "
                            f"`{_short(base)}.{name}` is called with ({_first(problems)})",
                            _details(
                                [
                                    f"override: {_short(impl)}.{name}{sig_text(m.params)}",
                                    f"base: {_short(base)}.{name}{sig_text(hook.params)}",
                                ],
                                problems,
                            ),
                        )
                    )
        out.extend(self._pin_findings(program, graph))
        return out

    def _pin_findings(self, program: Program, graph: Graph) -> list[RawFinding]:
        """Pins are enforced once the baseline records CTX501 pins at all: a run
        with no baseline (spec examples, a first look at a tree) has nowhere to
        record them, and `baseline update` writes the section."""
        if ID not in program.pinned:
            return []
        sites: dict[str, PinSite] = {}
        for base, hooks in graph.bases.items():
            path, qual = graph.where[base]
            for hook, m in hooks.items():
                if not graph.is_interface(base, hook):
                    continue
                sites[f"{base}.{hook}"] = PinSite(path, f"{qual}.{hook}", f"def {hook}", m.span)
        return pin_findings(ID, program, self.pins(program), sites)


def _through(call: CallShape, base: list[Param]) -> CallShape:
    """The part of a dispatch call that the base's named parameters take: what
    a base catch-all absorbs is no implementation's contract."""
    named = {p[0] for p in base if p[1] in ("pk", "ko")}
    return CallShape(
        min(call.npos, sum(1 for p in base if p[1] in ("po", "pk"))),
        # what the catch-all carries is unknown: it may fill any further parameter
        call.star or any(p[1] == "va" for p in base),
        tuple(k for k in call.kws if k in named),
        call.dstar or any(p[1] == "vk" for p in base),
    )


def _first(problems: list[str]) -> str:
    """The first problem, and how many more: a message stays one short sentence
    (SGLang's reached 1,911 characters); the rest is in the details."""
    more = len(problems) - 1
    return problems[0] + (f", and {more} more problem{'s' if more > 1 else ''}" if more else "")


def _details(signatures: list[str], problems: list[str]) -> str:
    """The signatures compared and every problem, one a line (`--show-details`)."""
    return "\n".join([*signatures, "problems:", *(f"  - {p}" for p in problems)])


def _short(qual: str) -> str:
    return qual.rpartition(".")[2]


RULE = PluginSignature()
