"""Where code runs a target somewhere else: process starts and thread starts.

Process starts, for the part "calls" (`ProcessStarts`, mixed into the call facts
visitor, whose targets and scopes it uses): `Process(target=f)`, a process pool's
`submit(f, ...)`/`map(f, ...)`, a Ray task or actor (`@ray.remote` on a def or
class, `ray.remote(Cls)`, `ray.remote(...)(Cls)`). The call graph keeps them
(`CallGraph.starts`, `process_starts`), each resolved by `start_targets`.

Thread starts, the part "threads" (`ThreadStartFacts`): a target run without the
caller's context: `threading.Thread(target=f)`, `<ThreadPoolExecutor>.submit(f)`
/ `.map(f, ...)`, `<loop>.run_in_executor(ex, f)`; a target that is
`<copy_context()>.run` carries the context and is no such start (nor is
`asyncio.to_thread`, which copies it). `thread_starts(program)` lists them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, dotted
from ctxlint.facts.visitor import FileVisitor
from ctxlint.program.binding_values import VALUE_KINDS, Bound, Tracked
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.bindings import Bindings
from ctxlint.program.call_model import Global, Site, Start, StartKind, Target
from ctxlint.program.callees import callee_targets, function_key

if TYPE_CHECKING:
    from ctxlint.program.calls import CallGraph
    from ctxlint.program.core import Program

PROCESS_POOL = "ProcessPoolExecutor"
THREAD_POOL = "ThreadPoolExecutor"
THREADS = "threads"  # the part's key
# Bindings a name then holds the value of, as these questions read them: a with
# target too (`with ThreadPoolExecutor() as pool`: the pool's __enter__ is itself)
HELD = VALUE_KINDS | {"with target"}
# The words a file that starts a thread holds (a rule's prefilter tokens)
THREAD_TOKENS = ("Thread", THREAD_POOL, "run_in_executor")


class ProcessStarts:
    ctx: FileContext
    stack: list[Any]  # the visitor's function stack (call_facts._Func)
    starts: list[Start]
    held: Tracked  # what locals hold (call_facts.Held)
    pool_attrs: Tracked  # `self` attributes holding a process pool

    def _targets(self, expr: cst.BaseExpression) -> list[Target]:
        raise NotImplementedError

    def _is_ray_remote(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Call):
            expr = expr.func
        return Global("ray.remote") in self._targets(expr)

    def _is_pool(self, call: cst.Call) -> bool:
        name = dotted(call.func)
        return bool(name) and name.rpartition(".")[2] == PROCESS_POOL  # type: ignore[union-attr]

    def _site(self, node: cst.CSTNode) -> Site:
        return Site(self.ctx.snippet(node)[:160], self.ctx.anchor(node))

    def _start(self, kind: StartKind, targets: list[Target], node: cst.CSTNode) -> Start:
        fn = self.stack[-1] if self.stack else None
        return Start(
            kind,
            tuple(targets),
            self.ctx.qualname,
            fn.qual if fn else None,
            fn.cls if fn else None,
            self._site(node),
        )

    def _process_start(self, node: cst.Call, name: str | None) -> None:
        func = node.func
        if name is not None and name.rpartition(".")[2] == "Process":
            for arg in node.args:
                if arg.keyword is not None and arg.keyword.value == "target":
                    self.starts.append(
                        self._start(StartKind.PROCESS, self._targets(arg.value), node)
                    )
            return
        # ray.remote(Cls) and ray.remote(num_gpus=1)(Cls); ray.remote(num_gpus=1)
        # alone is a decorator factory, and the decorator is seen on the def
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if name is not None and name.rpartition(".")[2] == "remote":
            if positional and Global("ray.remote") in self._targets(func):
                self.starts.append(self._start(StartKind.RAY, self._targets(positional[0]), node))
            return
        if isinstance(func, cst.Call) and positional and self._is_ray_remote(func.func):
            self.starts.append(self._start(StartKind.RAY, self._targets(positional[0]), node))
            return
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in ("submit", "map")
            and node.args
            and self._is_pool_expr(func.value)
        ):
            targets = self._targets(node.args[0].value)
            self.starts.append(self._start(StartKind.SUBMIT, targets, node))

    def _is_pool_expr(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Call):
            return self._is_pool(expr)
        if not self.stack:
            return False
        fn = self.stack[-1]
        if isinstance(expr, cst.Name):
            held = self.held.get(fn.scope, expr.value)
            return held is not None and held.pool
        # `self.pool`: as far as the methods seen so far tell
        return (
            isinstance(expr, cst.Attribute)
            and isinstance(expr.value, cst.Name)
            and expr.value.value == fn.self_name
            and bool(self.pool_attrs.attr(self.ctx.enclosing_class(), expr.attr.value))
        )


def process_starts(graph: CallGraph) -> list[tuple[str, Start]]:
    """(path, start) of every process start, by path."""
    return graph.starts


# -- thread starts: the part "threads" ------------------------------------------------
@dataclass(frozen=True, slots=True)
class ThreadStart:
    """A thread start: the call that starts it and the targets it runs."""

    path: str
    module: str
    kind: str  # "Thread", "run_in_executor", "ThreadPoolExecutor.submit" / ".map"
    fn: str  # the function the start is in (`module.<module>` outside any)
    cls: str | None  # the module-qualified class of that function
    snippet: str
    span: Any  # [line, column, end_line, end_column]
    targets: list[Any]  # target JSON (program.call_model.target_json)


def thread_starts(program: Program) -> list[ThreadStart]:
    """Every thread start of the program, by path and then in walk order."""
    return [
        ThreadStart(
            path, module, s["kind"], s["fn"], s["cls"], s["snippet"], s["span"], s["targets"]
        )
        for path, module, facts in program.facts(THREADS)
        for s in facts
    ]


class ThreadStartFacts(FileVisitor):
    """The thread starts of one file (plain JSON: a list of starts, or None)."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.starts: list[dict[str, Any]] = []
        self.bindings: Bindings = ctx.parts[BINDINGS]
        # names bound to copy_context() (or to such a name); names and `self`
        # attributes bound to a thread pool
        self.copies = self.bindings.track(self._holds_copy)
        self.pools = self.bindings.track(self._holds_pool, self._parks_pool)
        self.pending: list[tuple[str | None, str, dict[str, Any]]] = []  # self.attr.submit(...)

    def _resolved(self, expr: cst.BaseExpression) -> str:
        if isinstance(expr, (cst.Name, cst.Attribute)):
            return self.ctx.resolve(expr) or ""
        return ""

    def _is_copy(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Call):
            return self._resolved(expr.func).rpartition(".")[2] == "copy_context"
        return isinstance(expr, cst.Name) and bool(self.copies.here(expr.value))

    def _is_pool_call(self, expr: cst.BaseExpression) -> bool:
        return (
            isinstance(expr, cst.Call)
            and self._resolved(expr.func).rpartition(".")[2] == THREAD_POOL
        )

    # -- what bindings hold (asked by the binding model) -----------------------
    def _holds_copy(self, bound: Bound, before: Any) -> bool:
        return bound.kind in HELD and bound.value is not None and self._is_copy(bound.value)

    def _holds_pool(self, bound: Bound, before: Any) -> bool:
        return bound.kind in HELD and bound.value is not None and self._is_pool_call(bound.value)

    def _parks_pool(self, bound: Bound, before: Any) -> bool:
        # a `self` attribute holds a pool once any method parks one there: the
        # methods run in any order, so a later `self.pool = None` (a close) does
        # not undo the `submit`s the others make
        return bool(before) or self._holds_pool(bound, before)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if self._resolved(func) == "threading.Thread":
            for a in node.args:
                if a.keyword is not None and a.keyword.value == "target":
                    self._start("Thread", a.value, node)
            return
        if not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if method == "run_in_executor" and len(positional) >= 2:
            self._start("run_in_executor", positional[1], node)
        elif method in ("submit", "map") and positional:
            recv = func.value
            if (isinstance(recv, cst.Name) and self.pools.here(recv.value)) or self._is_pool_call(
                recv
            ):
                self._start(f"{THREAD_POOL}.{method}", positional[0], node)
            elif isinstance(recv, cst.Attribute) and dotted(recv.value) == self.ctx.scope.self_name:
                start = self._make_start(f"{THREAD_POOL}.{method}", positional[0], node)
                if start is not None:  # a pool on `self` is known once the class is seen
                    self.pending.append((self.ctx.enclosing_class(), recv.attr.value, start))

    def _make_start(
        self, kind: str, target: cst.BaseExpression, node: cst.Call
    ) -> dict[str, Any] | None:
        copied = (
            isinstance(target, cst.Attribute)
            and target.attr.value == "run"
            and self._is_copy(target.value)
        )
        if copied:
            return None
        found = callee_targets(self.ctx, target)
        if not found:
            return None
        cls = self.ctx.enclosing_class()
        return {
            "fn": function_key(self.ctx),
            "cls": f"{self.ctx.module}.{cls}" if cls else None,
            "snippet": self.ctx.snippet(node)[:160],
            "span": self.ctx.anchor(node),
            "kind": kind,
            "targets": found,
        }

    def _start(self, kind: str, target: cst.BaseExpression, node: cst.Call) -> None:
        start = self._make_start(kind, target, node)
        if start is not None:
            self.starts.append(start)

    def finish(self) -> Any:
        self.starts += [s for cls, attr, s in self.pending if self.pools.attr(cls, attr)]
        return self.starts or None
