"""What runs inside CUDA graph capture: the `with torch.<device>.graph(...)`
blocks, the calls made in them, and every function those calls reach, with the
call path to it (asked by CTX701: a lease made there is a driver call while the
graph records).

A rule's visitor inherits `CaptureVisitor` (which calls the subclass's own
`visit_FunctionDef`/`visit_Call` through `super()`), reads `capturing` while
the walk is inside a block, and keeps `capture` and `captures` in its facts;
`Capture` gathers them over the program and answers what they reach.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext
from ctxlint.facts.typed import Span
from ctxlint.facts.visitor import FileVisitor
from ctxlint.program.callees import callee_targets, function_key
from ctxlint.program.calls import call_graph
from ctxlint.program.core import Program
from ctxlint.program.reach import first_reached, resolve_targets, wanted_modules

# torch's graph-capture context managers: torch.cuda.graph, torch.npu.graph, ...
CAPTURE = re.compile(r"^torch\w*\.\w+(\.graphs)?\.graph$")
# function -> (capture site, call path) for every function capture reaches
Reached = dict[str, tuple[str, list[str]]]


@dataclass(frozen=True, slots=True)
class CaptureBlock:
    fn: str
    snippet: str
    span: Span


class CaptureVisitor(FileVisitor):
    """The capture blocks of a file, and the callees named inside them, by function."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.capture: dict[str, list[list[str]]] = {}  # function -> callees in capture
        self.captures: list[CaptureBlock] = []
        self.depth: list[int] = [0]  # capture blocks open, per function
        self.nested: list[set[str]] = [set()]

    @property
    def capturing(self) -> bool:
        return self.depth[-1] > 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.nested[-1].add(node.name.value)
        self.depth.append(0)
        self.nested.append(set())

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.depth.pop()
        self.nested.pop()

    def _capture_call(self, node: cst.With) -> cst.Call | None:
        for item in node.items:
            call = item.item
            if isinstance(call, cst.Call) and CAPTURE.match(self.ctx.resolve(call.func) or ""):
                return call
        return None

    def visit_With(self, node: cst.With) -> None:
        call = self._capture_call(node)
        if call is not None:
            self.depth[-1] += 1
            span = self.ctx.anchor(call)
            block = CaptureBlock(function_key(self.ctx), self.ctx.snippet(call)[:120], span)  # type: ignore[arg-type]
            self.captures.append(block)

    def leave_With(self, node: cst.With) -> None:
        if self._capture_call(node) is not None:
            self.depth[-1] -= 1

    def visit_Call(self, node: cst.Call) -> None:
        if self.capturing:
            found = callee_targets(self.ctx, node.func, self.nested[-1])
            if found:
                self.capture.setdefault(function_key(self.ctx), []).extend(found)


class Capture:
    """The program's capture blocks (with their files) and the callees named in them."""

    def __init__(self) -> None:
        self.callees: dict[str, list[list[str]]] = {}
        self.blocks: list[tuple[str, CaptureBlock]] = []

    def add(
        self, path: str, callees: dict[str, list[list[str]]], blocks: tuple[CaptureBlock, ...]
    ) -> None:
        for q, ts in callees.items():
            self.callees.setdefault(q, []).extend(ts)
        self.blocks += [(path, c) for c in blocks]

    def reached(self, program: Program) -> Reached:
        """function -> (capture site, call path) for every function the calls made
        inside a capture block reach."""
        graph = call_graph(program)
        where = {c.fn: f"{path}:{c.span[0]}" for path, c in self.blocks}
        sites = []
        for fn, raw in sorted(self.callees.items()):
            func = graph.funcs.get(fn)
            seeds = resolve_targets(graph, fn, func.cls if func else None, raw)
            sites.append((where.get(fn, fn), [fn], seeds))
        return first_reached(graph, sites)

    def wanted_modules(self, program: Program) -> set[str]:
        """The modules the calls made inside capture run through, not parsed yet."""
        raw = [t for ts in self.callees.values() for t in ts]
        return wanted_modules(call_graph(program), self.reached(program), raw)
