"""CTX701 resource-lease: named streams and buffers are leased by literal name,
one subsystem per name, and never from inside CUDA graph capture.

Everything comes from the runtime's resources tier. The tier is the class the
runtime module's `get_resources()` is annotated to return; its *registries* are
the attributes its methods (or the runtime module's, through `<x>.resources`)
store into keyed by their first parameter (`self.streams[name] = ...`): those
methods are the *lease methods*, and the runtime module's functions that store
so or hand their first parameter to a lease method (`get_stream(name)`,
`set_stream`, `get_buffer`) are the *lease functions*. A lease call is a call of
a lease function, or of a lease method on a runtime accessor's result
(`get_resources().stream(name)`, `get_context().get_stream(name)`).

A lease's *subsystem* is the package its module belongs to one level below the
root: the runtime module's package for modules inside it (SGLang:
`sglang.srt.models`, `sglang.srt.layers`), else the module's top-level package
(`app.models`; a flat example app is one subsystem). The name -> subsystem
table is pinned in the baseline.

Capture is a `with torch.<device>.graph(...)` block: a lease call in it, or in
a function the call graph reaches from the calls in it, creates a stream or
buffer while the graph records (a driver call).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.annotations import parse_string
from ctxlint.facts.context import FileContext, dotted, string_value
from ctxlint.facts.typed import Span
from ctxlint.facts.visitor import FileVisitor
from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.callees import callee_targets, chain_text, function_key, short
from ctxlint.program.calls import call_graph
from ctxlint.program.core import Program
from ctxlint.program.reach import first_reached, resolve_targets, wanted_modules
from ctxlint.program.rule import PinSite, RawFinding, Rule, pin_findings

ID = "CTX701"
# The resources tier's accessor (the design's `get_resources()`): a fixed name,
# because per-file facts are keyed by content and vocabulary, not by config.
ACCESSOR = "get_resources"
SLOT = "resources"  # the tier's slot on the runtime context (`ctx.resources`)
# torch's graph-capture context managers: torch.cuda.graph, torch.npu.graph, ...
CAPTURE = re.compile(r"^torch\w*\.\w+(\.graphs)?\.graph$")


def _first_arg(node: cst.Call) -> cst.BaseExpression | None:
    for a in node.args:
        if a.keyword is not None and a.keyword.value == "name":
            return a.value
    positional = [a for a in node.args if a.keyword is None and not a.star]
    return positional[0].value if positional else None


@dataclass(frozen=True, slots=True)
class RuntimeCall:
    """A call into the runtime module with an argument: a lease candidate."""

    fn: str  # the calling function (callees.function_key)
    target: str  # `rt.f`, or `rt.acc().m` for a method on an accessor's result
    name: str | None  # its name argument when a literal (or a constant bound to one)
    arg: str  # the name argument as written
    capture: bool  # made inside a graph-capture block
    snippet: str
    span: Span


@dataclass(frozen=True, slots=True)
class TierFunction:
    """A function storing into a keyed registry, or handing its first parameter on."""

    cls: str | None  # its class, qualified
    stores: tuple[tuple[str, str], ...]  # (registry attribute, "self" or "slot")
    delegates: tuple[str, ...]  # the methods it hands its first parameter to


@dataclass(frozen=True, slots=True)
class CaptureBlock:
    fn: str
    snippet: str
    span: Span


@dataclass(frozen=True, slots=True)
class LeaseFacts:
    calls: tuple[RuntimeCall, ...]
    tier: dict[str, TierFunction]
    accessor: str | None  # the class the module's `get_resources()` is annotated to return
    defines: bool  # the module defines `get_resources()` at module level
    capture: dict[str, list[list[str]]]  # function -> the callees inside capture (target JSON)
    captures: tuple[CaptureBlock, ...]


class LeaseVisitor(FileVisitor):
    """Calls into the runtime module with an argument (lease candidates), the
    keyed stores and delegations that define lease methods, module constants,
    and the calls made inside graph-capture blocks."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        assert ctx.vocab is not None
        self.rt = ctx.vocab.runtime_module
        self.calls: list[tuple[RuntimeCall, str | None]] = []  # and the constant it names
        self.consts: dict[str, str | None] = {}  # module-level NAME = "literal"
        # function -> (class, stores, delegates)
        self.tier: dict[str, tuple[str | None, list[tuple[str, str]], list[str]]] = {}
        self.accessor: str | None = None
        self.defines = False  # this module defines the accessor at module level
        self.capture: dict[str, list[list[str]]] = {}  # function -> callees in capture
        self.captures: list[CaptureBlock] = []
        self.depth: list[int] = [0]  # capture blocks open, per function
        self.nested: list[set[str]] = [set()]

    # -- definitions -------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.nested[-1].add(node.name.value)
        self.depth.append(0)
        self.nested.append(set())
        if len(self.ctx.scopes) == 2 and node.name.value == ACCESSOR:
            self.defines = True
        if len(self.ctx.scopes) == 2 and node.name.value == ACCESSOR and node.returns:
            ann = parse_string(node.returns.annotation)
            if isinstance(ann, (cst.Name, cst.Attribute)):
                self.accessor = self.ctx.resolve(ann)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.depth.pop()
        self.nested.pop()

    def _param0(self) -> str | None:
        node = self.ctx.scope.node
        if not isinstance(node, cst.FunctionDef):
            return None
        p = node.params
        names = [x.name.value for x in (*p.posonly_params, *p.params)]
        if names and names[0] == self.ctx.scope.self_name:
            names = names[1:]
        return names[0] if names else None

    def _tier(self) -> tuple[str | None, list[tuple[str, str]], list[str]]:
        cls = self.ctx.scope.class_qualname
        return self.tier.setdefault(
            function_key(self.ctx), (f"{self.ctx.module}.{cls}" if cls else None, [], [])
        )

    def visit_Assign(self, node: cst.Assign) -> None:
        if self.ctx.scope.kind == "module":
            for t in node.targets:
                if isinstance(t.target, cst.Name):
                    name = t.target.value
                    value = string_value(node.value)
                    self.consts[name] = value if name not in self.consts else None
            return
        if not self.ctx.in_function():
            return
        p0 = self._param0()
        for t in node.targets:
            target = t.target
            if not (isinstance(target, cst.Subscript) and len(target.slice) == 1):
                continue
            index = target.slice[0].slice
            chain = dotted(target.value)
            if (
                p0
                and isinstance(index, cst.Index)
                and isinstance(index.value, cst.Name)
                and index.value.value == p0
                and chain
                and "." in chain
            ):
                *base, attr = chain.split(".")
                on_self = base == [self.ctx.scope.self_name]
                via_slot = base[-1] == SLOT and self.ctx.module == self.rt
                if on_self or via_slot:
                    self._tier()[1].append((attr, "self" if on_self else "slot"))

    # -- calls -------------------------------------------------------------
    def visit_With(self, node: cst.With) -> None:
        for item in node.items:
            call = item.item
            if isinstance(call, cst.Call) and CAPTURE.match(self.ctx.resolve(call.func) or ""):
                self.depth[-1] += 1
                snippet = self.ctx.snippet(call)[:120]
                span = self.ctx.anchor(call)
                self.captures.append(CaptureBlock(function_key(self.ctx), snippet, span))  # type: ignore[arg-type]
                return

    def leave_With(self, node: cst.With) -> None:
        for item in node.items:
            call = item.item
            if isinstance(call, cst.Call) and CAPTURE.match(self.ctx.resolve(call.func) or ""):
                self.depth[-1] -= 1
                return

    def _target(self, func: cst.BaseExpression) -> str | None:
        """`rt.f`, or `rt.acc().m` / `rt.acc().slot.m` for a method on an accessor's result."""
        resolved = self.ctx.resolve(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        if resolved and resolved.startswith(self.rt + "."):
            return resolved
        chain: list[str] = []
        while isinstance(func, cst.Attribute):
            chain.append(func.attr.value)
            func = func.value
        if isinstance(func, cst.Call) and chain and not func.args:
            inner = (
                self.ctx.resolve(func.func)
                if isinstance(func.func, (cst.Name, cst.Attribute))
                else None
            )
            if inner and inner.startswith(self.rt + "."):
                return f"{inner}().{'.'.join(reversed(chain))}"
        return None

    def visit_Call(self, node: cst.Call) -> None:
        fn = function_key(self.ctx)
        capturing = self.depth[-1] > 0
        if capturing:
            found = callee_targets(self.ctx, node.func, self.nested[-1])
            if found:
                self.capture.setdefault(fn, []).extend(found)
        arg = _first_arg(node)
        if arg is None:
            return
        # delegations make lease functions only in the runtime module
        p0 = self._param0() if self.ctx.in_function() and self.ctx.module == self.rt else None
        func = node.func
        if p0 and isinstance(func, cst.Attribute) and isinstance(arg, cst.Name) and arg.value == p0:
            self._tier()[2].append(func.attr.value)
        target = self._target(func)
        if target is None:
            return
        call = RuntimeCall(
            fn,
            target,
            string_value(arg),
            self.ctx.snippet(arg)[:80],
            capturing,
            self.ctx.snippet(node)[:160],
            self.ctx.anchor(node),  # type: ignore[arg-type]
        )
        self.calls.append((call, arg.value if isinstance(arg, cst.Name) else None))

    def finish(self) -> LeaseFacts | None:
        calls = tuple(  # a module constant bound once to a literal is that literal
            replace(c, name=self.consts.get(const)) if c.name is None and const is not None else c
            for c, const in self.calls
        )
        tier = {
            q: TierFunction(cls, tuple(stores), tuple(delegates))
            for q, (cls, stores, delegates) in self.tier.items()
            if stores or delegates
        }
        if not (calls or tier or self.defines or self.capture or self.captures):
            return None
        return LeaseFacts(
            calls, tier, self.accessor, self.defines, self.capture, tuple(self.captures)
        )


# -- the program -------------------------------------------------------------------
class Model:
    """The resources tier, the lease functions, every lease site with its subsystem."""

    def __init__(self, program: Program) -> None:
        rt = program.vocab.runtime_module
        self.rt = rt
        self.tier_class: str | None = None
        self.has_accessor = False
        tier: dict[str, tuple[str, TierFunction]] = {}
        calls: list[tuple[str, str, RuntimeCall]] = []
        self.capture: dict[str, list[list[str]]] = {}
        self.captures: list[tuple[str, CaptureBlock]] = []
        for path, module, facts in program.typed_facts(ID, LeaseFacts):
            if module == rt and facts.accessor is not None:
                self.tier_class = facts.accessor
            if module == rt and facts.defines:
                self.has_accessor = True
            for q, t in facts.tier.items():
                tier[q] = (module, t)
            calls += [(path, module, c) for c in facts.calls]
            for q, ts in facts.capture.items():
                self.capture.setdefault(q, []).extend(ts)
            self.captures += [(path, c) for c in facts.captures]
        # lease methods: the tier's own keyed stores, or the runtime module's through the slot
        self.methods: dict[str, str] = {}
        for q, (module, t) in tier.items():
            for attr, how in t.stores:
                if (how == "self" and t.cls == self.tier_class and t.cls) or (
                    how == "slot" and module == rt and t.cls
                ):
                    self.methods[q] = attr
        names = {q.rpartition(".")[2]: attr for q, attr in self.methods.items()}
        # lease functions: the runtime module's functions that store or delegate so
        self.functions: dict[str, str] = {}
        for q, (module, t) in tier.items():
            if module != rt or t.cls is not None:
                continue
            registry = next((a for a, how in t.stores if how == "slot"), None)
            registry = registry or next((names[d] for d in t.delegates if d in names), None)
            if registry:
                self.functions[q] = registry
        self.sites: list[tuple[str, str, str, RuntimeCall]] = []  # path, module, registry, call
        for path, module, c in calls:
            target = c.target
            registry = self.functions.get(target)
            if registry is None and "()." in target:
                registry = names.get(target.rpartition(".")[2])
            if registry is not None and module != rt:
                self.sites.append((path, module, registry, c))
        self.subsystem = self._subsystems()

    def _subsystems(self) -> dict[str, str]:
        """module -> subsystem, for every module with a lease site: the package one
        level below the root, the root being the runtime module's package for the
        modules inside it and the module's top-level package for the others."""
        rt_pkg = self.rt.rpartition(".")[0]
        out: dict[str, str] = {}
        for _, m, _, _ in self.sites:
            inside = bool(rt_pkg) and m.startswith(rt_pkg + ".")
            depth = len(rt_pkg.split(".")) if inside else 1
            out[m] = ".".join(m.split(".")[: depth + 1])
        return out

    def table(self) -> dict[str, list[str]]:
        """`<registry> <name>` -> the subsystems leasing it (literal names only)."""
        out: dict[str, set[str]] = {}
        for _, module, registry, c in self.sites:
            if c.name is not None:
                out.setdefault(f"{registry} {c.name}", set()).add(self.subsystem[module])
        return {k: sorted(v) for k, v in sorted(out.items())}


class ResourceLease(Rule):
    id = ID
    name = "resource-lease"
    summary = (
        "Named streams and buffers are leased by a literal name, from one subsystem per "
        "name, and never from inside CUDA graph capture"
    )
    visitor = LeaseVisitor
    needs = (BAGS,)  # the resources tier sits beside the bags on the runtime context
    requires = ("calls",)

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return {ACCESSOR, ".graph(", f"module:{vocab.runtime_module}"}

    def more_tokens(self, program: Program) -> set[str]:
        model = Model(program)  # not memoised: the facts grow each round
        out = {q.rpartition(".")[2] for q in model.functions}
        if model.tier_class:
            out.add(f"module:{model.tier_class.rpartition('.')[0]}")
        # and the modules the calls made inside capture run through, not parsed yet
        raw = [t for ts in model.capture.values() for t in ts]
        reach = self._build_reach(program, model)
        return out | wanted_modules(call_graph(program), reach, raw)

    def _model(self, program: Program) -> Model:
        return program.memo(f"{ID}:model", lambda: Model(program))

    def _reach(self, program: Program, model: Model) -> dict[str, tuple[str, list[str]]]:
        return program.memo(f"{ID}:reach", lambda: self._build_reach(program, model))

    def _build_reach(self, program: Program, model: Model) -> dict[str, tuple[str, list[str]]]:
        """function -> (capture site, call path) for every function the calls made
        inside a capture block reach."""
        graph = call_graph(program)
        where = {c.fn: f"{path}:{c.span[0]}" for path, c in model.captures}
        sites = []
        for fn, raw in sorted(model.capture.items()):
            func = graph.funcs.get(fn)
            seeds = resolve_targets(graph, fn, func.cls if func else None, raw)
            sites.append((where.get(fn, fn), [fn], seeds))
        return first_reached(graph, sites)

    def derive(self, program: Program) -> dict[str, Any]:
        model = self._model(program)
        if not model.has_accessor:
            return {"resources tier": f"(no {ACCESSOR}() in {model.rt})"}
        return {
            "resources tier": model.tier_class or "(not annotated)",
            "lease methods": dict(sorted(model.methods.items())),
            "lease functions": dict(sorted(model.functions.items())),
            "subsystems": sorted(set(model.subsystem.values())),
            "name table": {k: ", ".join(v) for k, v in model.table().items()},
            "lease sites": len(model.sites),
            "capture blocks": sorted(f"{p}:{c.span[0]}" for p, c in model.captures),
            "reached from capture": len(self._reach(program, model)),
        }

    def partial(self, sets: dict[str, Any]) -> str | None:
        if "lease functions" not in sets:  # disabled, or no resources tier: nothing to lease
            return None
        if not sets["lease functions"]:
            return (
                "no lease functions: no function of the runtime module stores into, or "
                f"delegates to, the resources tier's registries ({sets.get('resources tier')})"
            )
        return None

    def pins(self, program: Program) -> dict[str, Any]:
        return {k: ", ".join(v) for k, v in self._model(program).table().items()}

    def check(self, program: Program) -> Iterable[RawFinding]:
        model = self._model(program)
        yield from self._names(model)
        reach = self._reach(program, model)
        for path, module, registry, c in model.sites:
            if c.capture:
                yield self._at(
                    path,
                    module,
                    c,
                    f"{registry} lease `{c.snippet[:60]}` inside CUDA graph capture: creating a "
                    "stream or buffer is a driver call; lease it at init/warmup time",
                )
            elif c.fn in reach:
                site, chain = reach[c.fn]
                yield self._at(
                    path,
                    module,
                    c,
                    f"{registry} lease reachable from inside CUDA graph capture ({site}, via "
                    f"{chain_text(call_graph(program), chain)}): creating a stream or buffer is a "
                    "driver call; lease it at init/warmup time",
                )
        if ID in program.pinned:
            sites: dict[str, PinSite] = {}
            for path, module, registry, c in model.sites:
                key = f"{registry} {c.name}"
                if c.name is not None and key not in sites:
                    sites[key] = PinSite(path, short(c.fn, module), c.snippet, c.span)
            yield from pin_findings(ID, program, self.pins(program), sites)

    def _names(self, model: Model) -> Iterable[RawFinding]:
        by_key: dict[str, dict[str, list[tuple[str, str, RuntimeCall]]]] = {}
        for path, module, registry, c in model.sites:
            if c.name is None:
                yield self._at(
                    path,
                    module,
                    c,
                    f"{registry} lease name `{c.arg}` is not a literal: the name -> subsystem "
                    "table cannot hold it; lease one literal name per subsystem role, or keep "
                    f"per-device/grow-only entries in `{ACCESSOR}().{registry}` directly",
                )
                continue
            key = f"{registry} {c.name}"
            by_key.setdefault(key, {}).setdefault(model.subsystem[module], []).append(
                (path, module, c)
            )
        for key, subs in sorted(by_key.items()):
            if len(subs) < 2:
                continue
            # the subsystem with the most leases keeps the name; each other is reported once
            owner = sorted(subs, key=lambda s: (-len(subs[s]), s))[0]
            for sub in sorted(subs):
                if sub == owner:
                    continue
                path, module, c = sorted(subs[sub], key=lambda x: (x[0], x[2].span))[0]
                registry, _, name = key.partition(" ")
                yield self._at(
                    path,
                    module,
                    c,
                    f"{registry} `{name}` is leased from {len(subs)} subsystems "
                    f"({', '.join(sorted(subs))}): sharing a name across roles serializes "
                    f"the overlap each expects; lease a name for `{sub}`'s own role",
                )

    @staticmethod
    def _at(path: str, module: str, c: RuntimeCall, message: str) -> RawFinding:
        return RawFinding(ID, path, short(c.fn, module), c.snippet, c.span, message)


RULE = ResourceLease()
