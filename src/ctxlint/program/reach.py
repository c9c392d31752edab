"""Reachability over the call graph: the walks every rule asks, written once.

A rule asks a question here instead of following `graph.edges` or
`graph.callers` itself:

- `forward` / `Walk`: breadth first along calls from some functions, keeping one
  parent per function (the first that calls it, so on a shortest path): what
  they run, and the call path to each (`path_to`) for a finding's message.
  `steps` picks which of a function's calls are followed (a prefix of its
  body: `OrderedReach.prefix` stops at a publish), `more` adds callees the
  graph has no edge for (callables handed on, classes named), `through` says
  which functions may be entered at all;
- `backward`: breadth first along callers, sorted, with a `through` predicate
  on each (caller, callee) edge (same module only, not through a pass runner);
  `spread_to_callers` carries labels (a role) from callee to caller;
- the questions several rules share: `same_module_publishers` (a publish,
  directly or through helpers of the function's own module),
  `first_reached` (what each of some start sites reaches, the first site
  keeping a function) and `module_tokens` (the modules to parse for names
  the graph does not resolve yet).

Seeds and callers are taken in sorted order, or in the order the caller
gives, so an answer does not depend on string hashing; one exception is kept
as CTX301 always had it: `caller_frontier` walks callers in their set's order
under a limit, and only picks files to parse (its answer is a token set).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Set
from typing import Any

from ctxlint.program.call_model import Event, EventKind, Global, targets_from_json
from ctxlint.program.calls import CallGraph, call_graph
from ctxlint.program.core import Program

Parents = dict[str, str | None]  # function -> the function it was reached from (None: a seed)
Step = tuple[Event, list[str]]  # one event of a body and the functions its call may run
Steps = Callable[[str], Iterable[Step]]
# a step that is no event of the body: callees the graph has no edge for
# (callables handed on, the methods of a class named), walked as one more call
CALLS = Event(EventKind.CALL)


def steps(graph: CallGraph, q: str) -> Iterator[Step]:
    """Every event of `q`'s body, in statement order, with what its call runs."""
    return zip(graph.funcs[q].events, graph.edges[q], strict=True)


def after_publish(graph: CallGraph, q: str, publishers: Set[str]) -> Iterator[Step]:
    """The steps of `q`'s body after it publishes: after a publish event, or a
    call every target of which is one of `publishers` (the statements below run
    on the published bags). A later publishing step is not yielded."""
    published = False
    for event, targets in steps(graph, q):
        publishes = event.kind is EventKind.PUBLISH or (
            event.kind is EventKind.CALL and bool(targets) and set(targets) <= publishers
        )
        if published and not publishes:
            yield event, targets
        published = published or publishes


def first_call(graph: CallGraph, caller: str, callee: str) -> int:
    """The index of the first event of `caller`'s body that may run `callee`."""
    return next(i for i, targets in enumerate(graph.edges[caller]) if callee in targets)


def path_to(parents: Mapping[str, str | None], q: str) -> list[str]:
    """The call path from a seed to `q`."""
    out = [q]
    while parents.get(out[-1]) is not None:
        out.append(parents[out[-1]])  # type: ignore[arg-type]
    return out[::-1]


class Walk:
    """Breadth first along calls, one parent per function.

    `start(q, after)` enters `q` at once, past its event `after` (a publish: the
    entry runs on from there), whether or not the walk has met `q` already;
    `run()` then follows the queue. `on_event(q, event)` sees every event of each
    function entered, in the order the walk enters them."""

    def __init__(
        self,
        graph: CallGraph,
        *,
        steps: Steps | None = None,
        more: Callable[[str], Iterable[str]] | None = None,
        through: Callable[[str], bool] | None = None,
        on_event: Callable[[str, Event], None] | None = None,
    ) -> None:
        self.graph = graph
        self.parents: Parents = {}
        self._steps = steps
        self._more = more
        self._through = through
        self._on_event = on_event
        self._queue: deque[str] = deque()

    def _body(self, q: str) -> Iterable[Step]:
        if self._steps is not None:
            return self._steps(q)
        return steps(self.graph, q) if q in self.graph.funcs else ()

    def _enter(self, q: str, body: Iterable[Step]) -> None:
        parents, through = self.parents, self._through
        for event, targets in body:
            if self._on_event is not None:
                self._on_event(q, event)
            for t in targets:
                if t not in parents and (through is None or through(t)):
                    parents[t] = q
                    self._queue.append(t)
        for t in self._more(q) if self._more is not None else ():
            if t not in parents and (through is None or through(t)):
                parents[t] = q
                self._queue.append(t)

    def start(self, q: str, after: int = -1) -> None:
        self.parents.setdefault(q, None)
        body = self._body(q)
        self._enter(q, list(body)[after + 1 :] if after >= 0 else body)

    def seed(self, q: str) -> None:
        """`q` as a seed the queue enters in its turn (after the seeds before it)."""
        if q not in self.parents:
            self.parents[q] = None
            self._queue.append(q)

    def run(self) -> Parents:
        while self._queue:
            q = self._queue.popleft()
            self._enter(q, self._body(q))
        return self.parents

    def path(self, q: str) -> list[str]:
        return path_to(self.parents, q)


def forward(
    graph: CallGraph,
    seeds: Iterable[str],
    *,
    steps: Steps | None = None,
    more: Callable[[str], Iterable[str]] | None = None,
    through: Callable[[str], bool] | None = None,
) -> Parents:
    """Every function `seeds` run (function -> parent, None at a seed), breadth
    first: each parent is on a shortest path."""
    walk = Walk(graph, steps=steps, more=more, through=through)
    for q in seeds:
        walk.seed(q)
    return walk.run()


def depth_first(seeds: Iterable[str], steps: Steps, seen: set[str] | None = None) -> set[str]:
    """Every function `seeds` run along `steps`, depth first: each callee is
    walked before the next step of its caller's body is asked for (a lazy
    `steps` sees its callees' answers). `seen`: functions not to enter again."""
    seen = set() if seen is None else seen

    def visit(q: str) -> None:
        if q in seen:
            return
        seen.add(q)
        for _, targets in steps(q):
            for t in targets:
                visit(t)

    for q in seeds:
        visit(q)
    return seen


def depth_first_stack(seeds: Iterable[str], steps: Steps, done: Callable[[str], bool]) -> None:
    """Walk `seeds` along `steps` last in, first out: a function's callees are
    all pushed before any is walked. `done(q)`: whether `q` is walked already
    (a lazy `steps` records it when its body ends)."""
    todo = list(seeds)
    while todo:
        q = todo.pop()
        if not done(q):
            for _, targets in steps(q):
                todo += [t for t in targets if not done(t)]


def backward(
    graph: CallGraph, seeds: Iterable[str], *, through: Callable[[str, str], bool] | None = None
) -> Parents:
    """Every function that reaches `seeds` along calls (function -> the callee it
    was reached from, None at a seed), breadth first from the sorted seeds, each
    function's callers in sorted order. `through(caller, callee)`: whether the
    walk takes that edge."""
    parents: Parents = {q: None for q in sorted(seeds)}
    todo = deque(parents)
    while todo:
        q = todo.popleft()
        for c in sorted(graph.callers.get(q, ())):
            if c not in parents and (through is None or through(c, q)):
                parents[c] = q
                todo.append(c)
    return parents


def spread_to_callers(
    graph: CallGraph, labels: dict[str, set[str]], through: Callable[[str, str], bool]
) -> Iterator[tuple[str, str, str]]:
    """Labels carried from each function to its callers, breadth first (sorted):
    (caller, callee, label) each time a caller gets a label it did not have.
    `labels` grows in place; `through(caller, callee)` says whether it carries."""
    todo = deque(sorted(labels))
    while todo:
        q = todo.popleft()
        for c in sorted(graph.callers.get(q, ())):
            if not through(c, q):
                continue
            for label in sorted(labels[q]):
                if label not in labels.get(c, set()):
                    labels.setdefault(c, set()).add(label)
                    todo.append(c)
                    yield c, q, label


def caller_frontier(graph: CallGraph, q: str, limit: int = 64) -> set[str]:
    """Where the known callers of `q` stop: the functions met walking up from it
    (depth first, `limit` functions at most) with no caller the walk has not met.
    Callers go in their set's order, as CTX301's token walk always took them:
    under the limit the answer may vary with string hashing (it only names
    files to parse; sorting them is a change of its own, to check on sglang)."""
    out: set[str] = set()
    seen, todo = {q}, [q]
    while todo and len(seen) < limit:
        c = todo.pop()
        up = [x for x in graph.callers.get(c, ()) if x not in seen]
        if not up:
            out.add(c)
        seen.update(up)
        todo += up
    return out


# -- the questions several rules ask -------------------------------------------------
def same_module_publishers(program: Program) -> Parents:
    """Functions that publish, directly or through helpers of their own module:
    function -> the helper it publishes through (None: it publishes itself).
    Breadth first, so a parent is the nearest helper."""

    def build() -> Parents:
        g = call_graph(program)
        funcs = g.funcs
        return backward(
            g,
            g.doing(EventKind.PUBLISH),
            through=lambda c, q: funcs[c].module == funcs[q].module,
        )

    return program.memo("reach:publishers", build)


def first_reached(
    graph: CallGraph, sites: Iterable[tuple[str, list[str], list[str]]]
) -> dict[str, tuple[str, list[str]]]:
    """For start sites (label, path so far, functions the site runs), in order:
    every function a site reaches -> (the first such site's label, the path
    so far and the call path to it)."""
    out: dict[str, tuple[str, list[str]]] = {}
    for label, before, seeds in sites:
        parents = forward(graph, seeds)
        for q in parents:
            if q not in out:
                out[q] = (label, [*before, *path_to(parents, q)])
    return out


def resolve_targets(graph: CallGraph, fn: str, cls: str | None, raw: list[Any]) -> list[str]:
    """Functions the JSON targets of a call in function `fn` (of class `cls`) run."""
    func = graph.funcs.get(fn)
    return graph.targets(func if func is not None else cls, targets_from_json(raw))


def module_tokens(graph: CallGraph, names: Iterable[str]) -> set[str]:
    """`module:` tokens for the qualified names the graph does not resolve yet,
    inside the program's top-level packages: every module on the way to the
    name (the one that defines it, or a package re-exporting it), and on to
    where a module seen so far re-exports it from."""
    tops = {m.partition(".")[0] for m in graph.modules}
    out: set[str] = set()

    def want(name: str, depth: int = 0) -> None:
        parts = name.split(".")
        if parts[0] not in tops or depth > 8 or graph.resolve_global(name):
            return
        out.update(f"module:{'.'.join(parts[:i])}" for i in range(1, len(parts) + 1))
        target = graph.reexported(name)
        if target:
            want(target, depth + 1)

    for name in names:
        want(name)
    return out


def wanted_modules(graph: CallGraph, reached: Iterable[str], raw: Iterable[Any] = ()) -> set[str]:
    """`module_tokens` for what the functions `reached` call (and the JSON targets
    `raw` name) that the program has not parsed yet."""
    names = list(called_names([Event(EventKind.CALL, targets_from_json(list(raw)))]))
    for q in reached:
        func = graph.funcs.get(q)
        names += called_names(func.events if func is not None else ())
    return module_tokens(graph, names)


def called_names(events: Iterable[Event]) -> Iterator[str]:
    """The qualified names the events' calls name (their Global targets)."""
    for event in events:
        for t in event.targets:
            if isinstance(t, Global):
                yield t.name
