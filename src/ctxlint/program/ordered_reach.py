"""What a function runs first, in statement order: the first event of one kind
(a bag read) its calls reach before an event of another (a publish) stops them.

Unlike `program.reach`, which asks what can run at all, this follows each body
in the order its statements run: a call whose every callee publishes (on every
path through it: a publish or call in a branch, `Event.branch`, ends nothing,
unless it sits under `if` tests the call's context makes true:
UnsetFlags.takes) ends the caller's unpublished prefix too, and a call or read under an `if` test that is
false before publish does not run (program.unset_flags: a flag only a bag read
sets, a parameter handed `False`); a callee is asked in the call's context
(which of its parameters the call hands such a value). CTX301 asks it of every process entry, and
`ctxlint fix` of every function an entry runs before it publishes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from ctxlint.program.call_binding import EMPTY, Context
from ctxlint.program.call_model import Event, EventKind
from ctxlint.program.calls import CallGraph, Func, short
from ctxlint.program.reach import Step
from ctxlint.program.unset_flags import UnsetFlags


@dataclass(frozen=True)
class Hit:
    chain: tuple[str, ...]  # qualnames from the callee to the function with the event
    accessor: str  # the event's accessor (a bag read's)
    path: str  # of the function with the event
    line: int  # 0 when the event was not anchored

    def label(self) -> str:
        """The read a finding is about: the accessor, and where when in a callee."""
        where = f" at {self.path}:{self.line}" if self.chain and self.line else ""
        return f"{self.accessor}(){where}"

    def related(self) -> dict[str, str]:
        """The read's place when it is in a callee (a finding's related location)."""
        if not (self.chain and self.line):
            return {}
        return {"related": f"{self.path}:{self.line}", "related_what": f"{self.accessor}() read"}

    def path_text(self, funcs: Mapping[str, Func], start: str) -> str:
        """`start -> callee -> ... -> accessor() (path:line)`, for a finding's details."""
        parts = [start, *(short(q, funcs[q].module) for q in self.chain)]
        where = f" ({self.path}:{self.line})" if self.chain and self.line else ""
        return " -> ".join(parts) + f" -> {self.accessor}(){where}"


# one step of a prefix: the event's index in its body, the event, the callees followed
PrefixStep = tuple[int, Event, list[str]]


class OrderedReach:
    """First `find` events before `stop` events, over one call graph."""

    def __init__(
        self,
        graph: CallGraph,
        find: EventKind = EventKind.READ,
        stop: EventKind = EventKind.PUBLISH,
        finds: Callable[[Event], bool] | None = None,
        reads: Callable[[Event], bool] | None = None,
        may_stop: bool = False,
    ) -> None:
        self.graph = graph
        # a stop in a branch whose guard the call cannot settle: CTX301 counts
        # it as a stop (it may run: sglang 0.5.23's `lifespan` publishes in one
        # arm, its other arm runs in a process that published before), CTX102's
        # hint does not (it names a publish only where one runs)
        self.may_stop = may_stop
        # which tests are false before publish (`reads`: a bag read that fails there)
        self.flags = UnsetFlags(graph, reads)
        self.find, self.stop = find, stop
        # which `find` events count (CTX301: the leaf reads, program.leaf_reads)
        self.finds = finds or (lambda e: e.kind is find)
        funcs = graph.funcs
        found = {q for q in graph.doing(find) if any(map(self.finds, funcs[q].events))}
        # functions that reach a `find` (a `stop`) event along any calls
        self.reaches_find = graph.reaching(found)
        self.reaches_stop = graph.reaching(graph.doing(stop))
        self._first: dict[str | tuple[str, Context], tuple[Hit | None, bool]] = {}
        self._busy: set[str] = set()

    def callee(self, q: str, event: Event, t: str, ctx: Context = EMPTY) -> tuple[Hit | None, bool]:
        """`first` of the callee `t` of `q`'s call `event`, in the call's context."""
        return self.first(t, self.flags.handed(q, event, ctx, t))

    def first(self, q: str, ctx: Context = EMPTY) -> tuple[Hit | None, bool]:
        """(the first `find` event reachable from `q` before a `stop`, whether
        every run of `q` stops), in a call handing the parameters `ctx` a value
        false before publish. A recursive call answers (None, False)."""
        key = (q, ctx) if ctx else q
        if key in self._first:
            return self._first[key]
        if q in self._busy or (q not in self.reaches_find and q not in self.reaches_stop):
            return None, False  # recursion, or nothing to find below
        self._busy.add(q)
        found: Hit | None = None
        stops = False
        fn = self.graph.funcs[q]
        for event, targets in zip(fn.events, self.graph.edges[q], strict=True):
            if event.kind is self.stop:
                if event.branch and not self.runs(q, event, ctx):
                    continue  # on some paths only: the statements below may run without it
                stops = True
                break
            if event.when and self.flags.skips(q, event, ctx):
                continue  # does not run before publish
            if self.finds(event):
                found = found or Hit((), event.accessor or "", fn.path, event.line)
            elif targets:
                all_stop = True
                for t in targets:
                    hit, t_stops = self.callee(q, event, t, ctx)
                    if hit is not None and found is None:
                        found = Hit((t, *hit.chain), hit.accessor, hit.path, hit.line)
                    all_stop = all_stop and t_stops
                if all_stop and (not event.branch or self.runs(q, event, ctx)):
                    stops = True
                    break
        self._busy.discard(q)
        self._first[key] = (found, stops)
        return found, stops

    def runs(self, q: str, event: Event, ctx: Context = EMPTY) -> bool:
        """A stop in a branch counts: its guard holds in this call (or, with
        `may_stop`, the call cannot tell: it does not make it false)."""
        if self.may_stop:
            return not self.flags.skips(q, event, ctx)
        return self.flags.takes(q, event, ctx)

    def prefix(
        self, q: str, stop_at: tuple[EventKind, ...] | None = None, near: bool = False
    ) -> Prefix:
        """`q`'s body up to where it stops (lazily: see Prefix)."""
        return Prefix(self, q, (self.stop,) if stop_at is None else stop_at, near)

    def prefix_steps(self, q: str) -> Iterator[Step]:
        """The steps of `q`'s prefix, as a walk follows them (`program.reach`)."""
        for _, event, callees in self.prefix(q):
            yield event, callees

    def first_steps(
        self, q: str, stop_at: tuple[EventKind, ...] | None = None, near: bool = False
    ) -> tuple[list[tuple[Event, Hit]], Event | None]:
        """The events of `q`'s own prefix that lead to a `find` event (each with
        its first hit), and the event `q` stops at (None: it never stops)."""
        fn = self.graph.funcs[q]
        out: list[tuple[Event, Hit]] = []
        prefix = self.prefix(q, stop_at, near)
        for _, event, callees in prefix:
            if self.finds(event):
                out.append((event, Hit((), event.accessor or "", fn.path, event.line)))
                continue
            for t in callees:
                hit = self.callee(q, event, t)[0]
                if hit is not None:
                    out.append((event, Hit((t, *hit.chain), hit.accessor, hit.path, hit.line)))
                    break
        return out, prefix.stop[1] if prefix.stop is not None else None


class Prefix:
    """A body's steps before an event of a `stop_at` kind, through the first
    call whose callees all stop (when the reach's stop kind is among `stop_at`);
    `near`: the callees of the body's own module only. Lazy: whether a call
    stops the body is asked when the step after it is, so what the caller does
    with a step (walk its callees first) is done before, as a walk by hand
    would. After the iteration, `stop` is the stopping event with its index
    (None: the body runs to its end)."""

    def __init__(
        self, reach: OrderedReach, q: str, stop_at: tuple[EventKind, ...], near: bool
    ) -> None:
        self.reach, self.q, self.stop_at, self.near = reach, q, stop_at, near
        self.stop: tuple[int, Event] | None = None

    def __iter__(self) -> Iterator[PrefixStep]:
        graph, reach = self.reach.graph, self.reach
        fn = graph.funcs[self.q]
        stopping = reach.stop in self.stop_at
        for i, (event, targets) in enumerate(zip(fn.events, graph.edges[self.q], strict=True)):
            if event.kind in self.stop_at:
                if event.branch and not reach.runs(self.q, event):
                    continue  # on some paths only: the body goes on without it
                self.stop = (i, event)
                return
            if stopping and event.when and reach.flags.skips(self.q, event):
                continue  # does not run before publish (the prefix ends there)
            callees = [t for t in targets if not self.near or graph.funcs[t].module == fn.module]
            yield i, event, callees
            if (
                stopping
                and callees
                and (not event.branch or reach.runs(self.q, event))
                and all(reach.callee(self.q, event, t)[1] for t in callees)
            ):
                self.stop = (i, event)
                return
