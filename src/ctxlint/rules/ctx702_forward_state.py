"""CTX702 forward-state: per-forward flags are read on the thread that set them,
and written through `scoped(...)`.

The tier is the runtime module's `get_forward()` (its return annotation names
the class). A *read* is an attribute of a `get_forward()` call, or of a local
bound to one, other than its writers `set`/`scoped`. A *thread start* runs a
target without the caller's context (the model's part "threads",
program.call_starts: `threading.Thread(target=f)`, a thread pool's `submit`/`map`,
`run_in_executor`; not `<copy_context()>.run` nor `asyncio.to_thread`). The call
graph resolves each target and follows its calls: a read it reaches sees the
default flags.

A *sticky* write is `get_forward().set(name, value)`: the names the code sets so
are pinned in the baseline (the legacy sticky setters); a `set` of any other name
is a finding (new writes use `scoped(...)`, which restores on exit).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ctxlint.core.findings import PIN, VIOLATION
from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, string_value
from ctxlint.facts.typed import Span
from ctxlint.facts.visitor import FileVisitor
from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.binding_values import Bound
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.call_starts import HELD, THREAD_TOKENS, THREADS, thread_starts
from ctxlint.program.callees import chain_text, function_key, short
from ctxlint.program.calls import call_graph
from ctxlint.program.core import Program
from ctxlint.program.reach import first_reached, resolve_targets, wanted_modules
from ctxlint.program.rule import PinSite, RawFinding, Rule, pin_findings

ID = "CTX702"
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


# -- the program -------------------------------------------------------------------
class Model:
    def __init__(self, program: Program) -> None:
        self.tier = False
        self.reads: dict[str, list[tuple[str, str, FlagRead]]] = {}
        self.sets: list[tuple[str, str, StickySet]] = []
        self.starts = thread_starts(program)
        for path, module, facts in program.typed_facts(ID, ForwardFacts):
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


class ForwardState(Rule):
    id = ID
    name = "forward-state"
    summary = (
        "Per-forward flags are not read from a thread started without the caller's "
        "context, and are written with scoped(...) outside the pinned sticky setters"
    )
    visitor = ForwardVisitor
    needs = (BAGS,)
    requires = ("calls", THREADS, BINDINGS)

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return {ACCESSOR, *THREAD_TOKENS, f"module:{vocab.runtime_module}"}

    def more_tokens(self, program: Program) -> set[str]:
        """The modules a thread's target runs through that are not parsed yet."""
        model = Model(program)  # not memoised: the facts grow each round
        reach = self._build_reach(program, model)
        raw = [t for s in model.starts for t in s.targets]
        return wanted_modules(call_graph(program), reach, raw)

    def _model(self, program: Program) -> Model:
        return program.memo(f"{ID}:model", lambda: Model(program))

    def _reach(self, program: Program, model: Model) -> dict[str, tuple[str, list[str]]]:
        return program.memo(f"{ID}:reach", lambda: self._build_reach(program, model))

    def _build_reach(self, program: Program, model: Model) -> dict[str, tuple[str, list[str]]]:
        """function -> (start site, call path) for what a context-less start runs."""
        graph = call_graph(program)
        sites = [
            (
                f"`{s.snippet[:60]}` at {s.path}:{s.span[0]}",
                [],
                resolve_targets(graph, s.fn, s.cls, s.targets),
            )
            for s in sorted(model.starts, key=lambda s: (s.path, s.span))
        ]
        return first_reached(graph, sites)

    def derive(self, program: Program) -> dict[str, Any]:
        model = self._model(program)
        if not model.tier:
            return {"forward tier": f"(no {ACCESSOR}() in {program.vocab.runtime_module})"}
        reach = self._reach(program, model)
        return {
            "forward tier": f"{program.vocab.runtime_module}.{ACCESSOR}",
            "thread starts": sorted(f"{s.path}:{s.span[0]} {s.kind}" for s in model.starts),
            "reached from threads": len(reach),
            "forward reads": sum(len(v) for v in model.reads.values()),
            "sticky names": model.sticky(),
        }

    def pins(self, program: Program) -> dict[str, Any]:
        return {f"sticky {k}": ", ".join(v) for k, v in self._model(program).sticky().items()}

    def check(self, program: Program) -> Iterable[RawFinding]:
        model = self._model(program)
        if not model.tier:
            return
        reach = self._reach(program, model)
        for fn, reads in sorted(model.reads.items()):
            if fn not in reach:
                continue
            start, chain = reach[fn]
            for path, module, r in reads:
                yield RawFinding(
                    ID,
                    path,
                    short(fn, module),
                    r.snippet,
                    r.span,
                    f"per-forward flag `{r.flag}` is read in a thread started without the "
                    f"caller's context ({start}, via {chain_text(call_graph(program), chain)}): "
                    "the thread sees the default flags; start it with "
                    "`contextvars.copy_context().run` or hand it the value",
                )
        pinned = program.pinned.get(ID, {})
        for path, module, s in model.sets:
            name = s.name
            if name is not None and f"sticky {name}" in pinned:
                continue
            what = f"`{name}`" if name is not None else "a computed name"
            yield RawFinding(
                ID,
                path,
                short(s.fn, module),
                s.snippet,
                s.span,
                f"sticky per-forward write of {what}, outside the pinned sticky setters: "
                "write it with `get_forward().scoped(...)`, which restores on exit"
                + (
                    "; a legacy setter that must stay sticky is recorded with "
                    "`ctxlint baseline update`"
                    if name is not None
                    else ""
                ),
                # a literal name is a pin to record (or a write to rewrite); a computed one can't be
                kind=PIN if name is not None else VIOLATION,
                # each site of one setter is listed; the pin it records is one key
                data={"key": f"sticky {name}"} if name is not None else {},
            )
        if pinned:  # a pinned name's setters changed, or it is gone
            sites = {
                f"sticky {s.name}": PinSite(path, short(s.fn, module), s.snippet, s.span)
                for path, module, s in reversed(model.sets)
                if s.name is not None
            }
            current = {k: v for k, v in self.pins(program).items() if k in pinned}
            yield from pin_findings(ID, program, current, sites)


RULE = ForwardState()
