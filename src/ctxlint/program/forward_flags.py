"""Where the per-forward flags are read and set, and which reads run on a thread
started without the caller's context.

The tier is the runtime module's `get_forward()`. A *read* is an attribute of a
`get_forward()` call, or of a local bound to one (the binding model), other
than its writers `set`/`scoped`; a *sticky set* is `get_forward().set(name,
value)`. The thread starts are the part "threads" (program.call_starts); the
call graph resolves each target and follows its calls (`thread_reach`). The
visitor's facts are kept under CTX702's id; CTX702 asks.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, string_value
from ctxlint.facts.typed import Span
from ctxlint.facts.visitor import FileVisitor
from ctxlint.program.binding_values import Bound
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.call_starts import HELD, ThreadStart, thread_starts
from ctxlint.program.callees import function_key, short
from ctxlint.program.calls import call_graph
from ctxlint.program.core import Program
from ctxlint.program.reach import first_reached, resolve_targets, wanted_modules
from ctxlint.program.rule import PinSite

KEY = "CTX702"  # the rule whose facts these are
ACCESSOR = "get_forward"  # the per-forward tier's accessor (fixed: facts are per file)
WRITERS = ("set", "scoped")


@dataclass(frozen=True, slots=True)
class FlagRead:
    flag: str
    snippet: str
    span: Span


@dataclass(frozen=True, slots=True)
class StickySet:
    """`get_forward().set(name, ...)` in `fn`; name None: a computed name."""

    fn: str
    snippet: str
    span: Span
    name: str | None


@dataclass(frozen=True, slots=True)
class ForwardFacts:
    defines: bool  # the runtime module defines get_forward
    reads: dict[str, list[FlagRead]]  # function -> its per-forward flag reads
    sets: list[StickySet]


class ForwardVisitor(FileVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        assert ctx.vocab is not None
        self.in_runtime = ctx.module == ctx.vocab.runtime_module
        self.defines = False
        self.reads: dict[str, list[FlagRead]] = {}
        self.sets: list[StickySet] = []
        # names bound to get_forward() (or to such a name), asked of the binding model
        self.aliases = ctx.parts[BINDINGS].track(self._holds_forward)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if len(self.ctx.scopes) == 2 and node.name.value == ACCESSOR and self.in_runtime:
            self.defines = True

    # -- what an expression is ---------------------------------------------
    def _is_forward(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Call) and not expr.args:
            func = expr.func
            resolved = self.ctx.resolve(func) if isinstance(func, (cst.Name, cst.Attribute)) else ""
            return (resolved or "").rpartition(".")[2] == ACCESSOR
        return isinstance(expr, cst.Name) and bool(self.aliases.here(expr.value))

    def _holds_forward(self, bound: Bound, before: Any) -> bool:
        return bound.kind in HELD and bound.value is not None and self._is_forward(bound.value)

    # -- reads and sticky writes ---------------------------------------------
    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value in WRITERS or not self._is_forward(node.value):
            return
        self.reads.setdefault(function_key(self.ctx), []).append(
            FlagRead(node.attr.value, self.ctx.snippet(node), self.ctx.anchor(node))  # type: ignore[arg-type]
        )

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == "set"):
            return
        if self._is_forward(func.value):
            positional = [a.value for a in node.args if a.keyword is None and not a.star]
            self.sets.append(
                StickySet(
                    function_key(self.ctx),
                    self.ctx.snippet(node)[:160],
                    self.ctx.anchor(node),  # type: ignore[arg-type]
                    string_value(positional[0]) if positional else None,
                )
            )

    def finish(self) -> ForwardFacts | None:
        found = self.defines or self.reads or self.sets
        return ForwardFacts(self.defines, self.reads, self.sets) if found else None


class ForwardFlags:
    """Every per-forward read (by function) and sticky set, and the thread starts."""

    def __init__(self, program: Program) -> None:
        self.tier = False
        self.reads: dict[str, list[tuple[str, str, FlagRead]]] = {}
        self.sets: list[tuple[str, str, StickySet]] = []
        self.starts = thread_starts(program)
        for path, module, facts in program.typed_facts(KEY, ForwardFacts):
            self.tier = self.tier or facts.defines
            for fn, rs in facts.reads.items():
                self.reads.setdefault(fn, []).extend((path, module, r) for r in rs)
            self.sets += [(path, module, s) for s in facts.sets]

    def sticky(self) -> dict[str, list[str]]:
        """Each name set with `set(...)` -> the functions that set it."""
        out: dict[str, set[str]] = {}
        for _, _, s in self.sets:
            if s.name is not None:
                out.setdefault(s.name, set()).add(s.fn)
        return {k: sorted(v) for k, v in sorted(out.items())}

    def threaded_reads(
        self, reach: dict[str, tuple[str, list[str]]]
    ) -> Iterator[tuple[str, str, str, FlagRead, str, list[str]]]:
        """(function, path, module, read, start, call path): each read in a function
        a thread started without the caller's context reaches."""
        for fn, reads in sorted(self.reads.items()):
            if fn in reach:
                start, chain = reach[fn]
                for path, module, r in reads:
                    yield fn, path, module, r, start, chain

    def pin_sites(self) -> dict[str, PinSite]:
        """`sticky <name>` -> the first site that sets it."""
        return {
            f"sticky {s.name}": PinSite(path, short(s.fn, module), s.snippet, s.span)
            for path, module, s in reversed(self.sets)
            if s.name is not None
        }


def thread_reach(program: Program, starts: list[ThreadStart]) -> dict[str, tuple[str, list[str]]]:
    """function -> (start site, call path) for what a context-less start runs."""
    graph = call_graph(program)
    sites = [
        (
            f"`{s.snippet[:60]}` at {s.path}:{s.span[0]}",
            [],
            resolve_targets(graph, s.fn, s.cls, s.targets),
        )
        for s in sorted(starts, key=lambda s: (s.path, s.span))
    ]
    return first_reached(graph, sites)


def unparsed_modules(program: Program) -> set[str]:
    """The modules a thread's target runs through that are not parsed yet (not
    memoised: the facts grow each round)."""
    starts = thread_starts(program)
    raw = [t for s in starts for t in s.targets]
    return wanted_modules(call_graph(program), thread_reach(program, starts), raw)
