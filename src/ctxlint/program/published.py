"""Where a publish precedes: the functions a process may run after it publishes,
and whether a publish precedes one statement.

A bag accessor answers only once its process has published, so a hint that
sends a read to its bag is right only where a publish comes first.
`published_after`: from every function that publishes (directly, or by calling
one that does, in any module), the calls its body makes after the publishing
statement are followed, with everything they run: calls, names they reference,
and the methods of a class they build or name (an object runs its methods
wherever it is handed, as CTX301's reach from publishers counts them).
`PublishOrder.before` asks the ordered question of one statement, as CTX301
orders events: its own body's statements before it (a read before its own
function's publish is pre-publish), then each caller's statements before the
call, up to a process start or import-time code (nothing published there). A
way in the graph cannot follow (a function with no known caller: a hook run by
dispatch) is not claimed either way, and neither is a tree that publishes
nowhere (a legacy codebase before its migration: the bag is where its reads
are going).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum

from ctxlint.facts.typed import Span
from ctxlint.program.call_model import EventKind
from ctxlint.program.calls import CallGraph, call_graph
from ctxlint.program.core import Program
from ctxlint.program.ordered_reach import OrderedReach
from ctxlint.program.reach import backward, forward, steps

KEY = "published-after"
ORDER_KEY = "publish-order"
# how far up the callers the ordered question climbs before it gives up
DEPTH = 24


class Before(Enum):
    """Whether a publish precedes a statement on the paths into it."""

    PUBLISHED = "published"  # on every path the call graph knows
    UNPUBLISHED = "unpublished"  # on none
    UNKNOWN = "unknown"  # some paths publish, or a way in is not known


# a call in a function body as the rule's own facts keep it: (the called name's
# last part, first line, last line); where an event keeps no line of its own
Call = tuple[str, int, int]


@dataclass(frozen=True, slots=True)
class CallAt:
    """A call kept in a rule's facts, in a function whose order is asked: the
    name it calls (the last part) and where, to place a publishing call whose
    event keeps no line."""

    scope: str
    name: str
    span: Span


def calls_by_function(
    files: Iterable[tuple[str, Iterable[CallAt]]],
) -> dict[tuple[str, str], list[Call]]:
    """(path, function) -> its calls as `before` takes them, from each file's kept calls."""
    out: dict[tuple[str, str], list[Call]] = {}
    for path, calls in files:
        for c in calls:
            out.setdefault((path, c.scope), []).append((c.name, c.span[0], c.span[2]))
    return out


def published_after(program: Program) -> frozenset[str]:
    """Functions that may run after their process publishes (memoized per program)."""
    return program.memo(KEY, lambda: _build(program))


def _build(program: Program) -> frozenset[str]:
    g = call_graph(program)
    publishers = set(backward(g, g.doing(EventKind.PUBLISH)))
    seeds: list[str] = []
    for q in sorted(publishers):
        after = False
        for event, targets in steps(g, q):
            if after:
                seeds.extend(targets)
            elif event.kind is EventKind.PUBLISH or (targets and set(targets) <= publishers):
                after = True  # the statements below run on the published bags
    methods: dict[str, list[str]] = {}
    for q, fn in sorted(g.funcs.items()):
        if fn.cls is not None:
            methods.setdefault(fn.cls, []).append(q)

    def instance(cls: str) -> Iterator[str]:
        for c in g.mro(cls):
            yield from methods.get(c, ())

    def more(q: str) -> Iterator[str]:
        fn = g.funcs[q]
        if fn.cls is not None and q == f"{fn.cls}.__init__":
            yield from instance(fn.cls)
        for name in fn.refs:
            cls = g.resolve_class(name)
            if cls is not None:
                yield from instance(cls)
            yield from g.resolve_global(name)

    return frozenset(forward(g, sorted(set(seeds)), more=more))


class PublishOrder:
    """The ordered question CTX301 asks of process entries, asked of one
    statement: does a publish precede it on the paths into it? First its own
    function's body (where the body's prefix stops at a publish, or at a call
    whose callees all publish: program/ordered_reach.py), then each caller's
    statements before its call, up to a process start or import-time code (a
    fresh process: nothing published) or a function with no caller the graph
    knows (not claimed)."""

    def __init__(self, program: Program) -> None:
        self.graph: CallGraph = call_graph(program)
        self.publishes = bool(self.graph.doing(EventKind.PUBLISH))
        self.order = OrderedReach(self.graph)
        self.after = published_after(program)
        self.started = {q for _, st in self.graph.starts for q in self.graph.start_targets(st)}
        self._stop: dict[str, int | None] = {}
        self._in: dict[str, frozenset[Before]] = {}

    def stop(self, q: str) -> int | None:
        """The index of the event at which `q`'s body has published (None: never)."""
        if q not in self._stop:
            prefix = self.order.prefix(q)
            for _ in prefix:
                pass
            self._stop[q] = prefix.stop[0] if prefix.stop is not None else None
        return self._stop[q]

    def before(self, q: str, span: Sequence[int], calls: Sequence[Call]) -> Before:
        """Whether a publish precedes the statement at `span` in function `q`
        (module-qualified); `calls`: the calls of `q`'s body with their lines,
        to place a publishing call whose event keeps none."""
        g = self.graph
        if not self.publishes or q not in g.funcs:
            return Before.UNKNOWN  # a tree that publishes nowhere: the bag is where reads go
        if q in self.after:
            return Before.UNKNOWN  # some publisher's later steps may run it (a method, a callback)
        at = self.stop(q)
        if at is not None:
            lines = self._lines(q, at, calls)
            if lines is None:
                return Before.UNKNOWN
            if span[0] > lines[1]:
                return Before.PUBLISHED
            # before its own function's publish (an argument of the publishing call
            # is evaluated before it runs): pre-publish, unless a way in publishes
            # first (a re-publish). A function that publishes is a process entry
            # where the graph shows one (no known caller: started by dispatch or a
            # `partial`; or a way in from a process start or import-time code):
            # there a way in it cannot follow is taken as another entry
            found = set(self._into(q))
            if not g.callers.get(q) or Before.UNPUBLISHED in found:
                found = {Before.UNPUBLISHED if b is Before.UNKNOWN else b for b in found}
        else:
            found = set(self._into(q))
        return next(iter(found)) if len(found) == 1 else Before.UNKNOWN

    def follows(self, q: str, span: Sequence[int], calls: Sequence[Call]) -> int | None:
        """The first line of the publish `q`'s own body makes after the statement at
        `span`; None where its body publishes nowhere, or before the statement or
        in it (an argument of the publishing call cannot be read after it), or the
        graph cannot place it."""
        at = self.stop(q) if q in self.graph.funcs else None
        lines = None if at is None else self._lines(q, at, calls)
        return lines[0] if lines is not None and span[0] < lines[0] else None

    def _lines(self, q: str, at: int, calls: Sequence[Call]) -> tuple[int, int] | None:
        """The first and last line of `q`'s event `at` (its site, else the first of
        the body's calls naming one of its callees); None where neither tells."""
        event = self.graph.funcs[q].events[at]
        if event.site is not None:
            span = event.site.span
            return span[0], span[2]
        names = {_called_name(t) for t in self.graph.edges[q][at]}
        found = [(first, last) for name, first, last in calls if name in names]
        return min(found) if found else None

    def _into(self, q: str) -> frozenset[Before]:
        """What precedes the calls into `q`, over every way in: published or not
        (UNKNOWN for a way the graph cannot follow). Each function is climbed
        once per question; a recursion's way in is its outer call's."""
        if q in self._in:
            return self._in[q]
        g = self.graph
        out: set[Before] = set()
        seen, todo = {q}, [(q, 0)]
        while todo and Before.UNKNOWN not in out and len(out) < 2:
            f, depth = todo.pop()
            if depth > DEPTH:
                out.add(Before.UNKNOWN)
                break
            fresh = f in self.started or f in g.module_refs.get(g.funcs[f].module, ())
            if fresh:
                out.add(Before.UNPUBLISHED)  # a fresh process, or import-time code
            callers = sorted(g.callers.get(f, ()))
            if not callers and not fresh:
                out.add(Before.UNKNOWN)  # run by dispatch or from outside: not claimed
            for c in callers:
                at = self.stop(c)
                for j, targets in enumerate(g.edges[c]):
                    if f not in targets:
                        continue
                    if at is not None and j > at:
                        out.add(Before.PUBLISHED)
                    elif c not in seen:
                        seen.add(c)
                        todo.append((c, depth + 1))
        self._in[q] = found = frozenset(out)
        return found


def _called_name(target: str) -> str:
    """The name a call spells for a callee: `f` for `pkg.mod.f`, the class for
    its `__init__`."""
    head, _, name = target.rpartition(".")
    return head.rpartition(".")[2] if name == "__init__" else name


def publish_order(program: Program) -> PublishOrder:
    """The ordered publish question over this program (memoized per program)."""
    return program.memo(ORDER_KEY, lambda: PublishOrder(program))
