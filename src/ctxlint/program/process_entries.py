"""Process entries, and what each runs before it publishes.

The entries are derived: functions and constructors that call the runtime
module's `publish` (directly or through a same-module helper, or by calling a
publisher in another module), and every target handed to a process start
(`Process(target=...)`, a process pool's `submit`, a Ray actor's `__init__` or
a Ray task). From each entry the calls are followed in statement order, across
modules, to the first bag leaf read before the publish (program/ordered_reach.py).
CTX301 reports those reads; `ctxlint fix` asks `runs_unpublished` where a read
it would add becomes such a finding; program/published.py answers the converse.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from ctxlint.program.call_model import EventKind, Global, Start, StartKind
from ctxlint.program.calls import call_graph, short
from ctxlint.program.core import Program
from ctxlint.program.leaf_reads import leaf_reads
from ctxlint.program.ordered_reach import OrderedReach
from ctxlint.program.parts import CALL_LINES
from ctxlint.program.reach import (
    CALLS,
    Step,
    backward,
    called_names,
    caller_frontier,
    depth_first,
    depth_first_stack,
    forward,
    module_tokens,
    same_module_publishers,
    steps,
)

KEY = "process-entries"
ROLES = {StartKind.PROCESS: "process target", StartKind.SUBMIT: "pool task", StartKind.RAY: "ray"}
PUBLISH, READ = EventKind.PUBLISH, EventKind.READ


class Analysis:
    """Entries and walks over the program's call graph (once per Program)."""

    def __init__(self, program: Program) -> None:
        self.graph = g = call_graph(program)
        self.funcs = g.funcs
        # the first bag read each function runs before a publish that fails
        # there (a leaf read: `get_parallel().world_group` off an import-time
        # object reads none; one a handler of the pre-publish error guards
        # answers the handler's value)
        leaves = leaf_reads(program)
        self.order = OrderedReach(
            g, READ, PUBLISH, leaves.fails_unpublished, leaves.reads, may_stop=True
        )
        # functions that reach a bag read along any calls (guarded or not)
        self.reaches_read = self.order.reaches_find
        if any(leaves.guarded(e) for q in g.doing(READ) for e in self.funcs[q].events):
            found = {q for q in g.doing(READ) if any(map(leaves.reads, self.funcs[q].events))}
            self.reaches_read = g.reaching(found)
        self.publishers = self._publishers(program)
        self.entries: dict[str, list[str]] = {
            q: [f"publishes through {self.through[q]}" if q in self.through else "publishes"]
            for q in sorted(self.publishers)
        }
        self.entry_start: dict[str, tuple[str, Start]] = {}
        for path, start in g.starts:
            for q in g.start_targets(start):
                role = ROLES[start.kind]
                if start.kind is StartKind.RAY and q.endswith(".__init__"):
                    role = "ray actor"
                label = f"{role} ({path}:{start.site.span[0]})"
                self.entries.setdefault(q, [])
                if label not in self.entries[q]:
                    self.entries[q].append(label)
                self.entry_start.setdefault(q, (path, start))
        self.reached_refs: set[str] = set()  # classes reached code names
        self._reached: set[str] | None = None

    def wanted_tokens(self) -> set[str]:
        g = self.graph
        # the names the walks call, in the order they meet them
        names = [t.name for _, start in g.starts for t in start.targets if isinstance(t, Global)]

        def noting(body: Iterable[Step]) -> Iterator[Step]:
            for event, targets in body:
                names.extend(called_names((event,)))
                yield event, targets

        # before an entry's publish, and all of a publisher that reaches no read
        depth_first(
            [q for q in self.entries if q in self.funcs],
            lambda q: noting(self.order.prefix_steps(q)),
        )
        depth_first(sorted(self.publishers - self.reaches_read), lambda q: noting(steps(g, q)))
        # the setters of the flags the walks asked about: every caller is parsed
        return module_tokens(g, names) | self._constructor_names() | self.order.flags.asked

    def _constructor_names(self) -> set[str]:
        """Names that may resolve a constructor the check would report as reached
        by nothing: its class, and the functions and classes leading to it from
        where the known callers stop (a package re-exporting one holds no token of
        its own, and is parsed only when asked for by name)."""
        out: set[str] = set()
        for q in self.unreached_constructors():
            for c in [*caller_frontier(self.graph, q), q]:
                f = self.funcs[c]
                out.add((f.cls or c).rpartition(".")[2])
        # a short name (`main`, `run`) is in every other file: not worth a parse
        return {n for n in out if len(n) >= 8 and not n.startswith("__")}

    def entry_roles(self) -> list[str]:
        """`entry (its roles)` of each entry with a body in the program, sorted."""
        return [f"{q} ({', '.join(r)})" for q, r in sorted(self.entries.items()) if q in self.funcs]

    def silent_publishers(self) -> list[str]:
        """The publishers reaching no bag read, sorted."""
        return sorted(q for q in self.own if q not in self.reaches_read)

    def start_lines(self) -> list[str]:
        """`path:line kind -> targets` of each process start, sorted."""
        g = self.graph
        return sorted(
            f"{path}:{s.site.span[0]} {s.kind.value} -> "
            + (", ".join(g.start_targets(s)) or "unresolved")
            for path, s in g.starts
        )

    def unreached_constructors(self) -> list[str]:
        """Constructors handed the record that no publishing entry reaches."""
        reached = self.reached_from_publishers()
        # A subclass of a class reached code names is plausibly built through it
        # (plugin registries discovered by scanning modules, `get_kv_class(...)`).
        named = {f.cls for q, f in self.funcs.items() if q in reached and f.cls}
        named |= self.reached_refs
        return [
            q
            for q in sorted(self.funcs)
            if (f := self.funcs[q]).takes_record
            and q.endswith(".__init__")
            and q not in reached
            and not (f.cls and any(c in named for c in self.graph.mro(f.cls)[1:]))
            and q not in self.entries
        ]

    def _publishers(self, program: Program) -> set[str]:
        """Functions whose body publishes, transitively: direct publishers and
        every caller of one, in any module (SGLang's test kits publish through
        `set_global_server_args_for_scheduler`, a helper in the record's module).

        Across modules the chain stops at a function that already runs inside a
        process entry (called, at any depth, by a same-module publisher or a
        process-start target): a re-publish there (0.5.17's `ModelRunner`
        re-publishing under the scheduler) does not make its callers entries,
        since their process published first. `through` keeps, for a publisher
        that calls no publish itself, the publisher it calls first."""
        g = self.graph
        # pinned when they reach no read: those publishing in their own module
        # (a caller of another module's helper has no publish site to anchor a pin)
        near = same_module_publishers(program)
        self.own: set[str] = set(near)
        roots = self.own | {q for _, start in g.starts for q in g.start_targets(start)}
        inside = set(forward(g, sorted(roots & set(self.funcs)))) - roots
        far = backward(g, self.own - inside, through=lambda c, _: c not in inside)
        self.through = {c: q for c, q in [*near.items(), *far.items()] if q is not None}
        return self.own | set(far)

    def reached_from_publishers(self) -> set[str]:
        """Functions a publishing entry may run: calls, plus anything it references
        by name and the import-time references of every module it enters. An
        object it builds, or a class it names, runs its methods wherever it is
        handed (`app.state.handler.run(...)`, `self.server_class().launch(...)`),
        so those methods count as reached too."""
        if self._reached is not None:
            return self._reached
        g = self.graph
        methods: dict[str, list[str]] = {}
        for q, f in self.funcs.items():
            if f.cls is not None:
                methods.setdefault(f.cls, []).append(q)
        seen: set[str] = set()
        modules: set[str] = set()
        classes: set[str] = set()

        def instance_of(cls: str) -> list[str]:
            out: list[str] = []
            for c in g.mro(cls):
                if c not in classes:
                    classes.add(c)
                    out += [m for m in methods.get(c, ()) if m not in seen]
            return out

        def reached(q: str) -> Iterator[Step]:
            seen.add(q)
            fn = self.funcs[q]
            if fn.cls is not None and q == f"{fn.cls}.__init__":
                yield CALLS, instance_of(fn.cls)
            refs = list(fn.refs)
            if fn.module not in modules:
                modules.add(fn.module)
                refs += g.module_refs.get(fn.module, ())
            yield from steps(g, q)
            for name in refs:
                cls = g.resolve_class(name)
                if cls is not None:
                    self.reached_refs.add(cls)
                    yield CALLS, instance_of(cls)
                yield CALLS, g.resolve_global(name)

        entries = [q for q in self.entries if q in self.funcs and self.order.first(q)[1]]
        depth_first_stack(entries, reached, done=seen.__contains__)
        self._reached = seen
        return seen


def runs_unpublished(program: Program) -> dict[str, tuple[str, int | None]]:
    """Where a bag read added today would be a new finding of this rule: the
    pre-publish part of a process entry's own body, what it calls before its
    publish along calls that reach no bag read yet (one that does already has
    its finding, on the call), and, for a constructor no publishing entry
    reaches and that reads no bag yet, what it runs before `assert_published`.
    Each function with the entry (or constructor) that runs it (`Cls.method`), and the line
    from which its own body no longer runs unpublished (its publish, or a call
    that publishes; None: all of it). `ctxlint fix` leaves such a rewrite
    rather than make it, check it and roll it back."""
    a = analysis(program)
    out: dict[str, tuple[str, int | None]] = {}
    # the lines of events that keep no site (program.parts.SIDE: no rule reads them)
    lines = {q: ls for _, _, f in program.facts(CALL_LINES) for q, ls in f.items()}

    def body(q: str, by: str, stop_at: tuple[EventKind, ...], near: bool) -> Iterator[Step]:
        """The steps of `q` before it stops (`near`: callees within its module),
        and then `q` recorded as run unpublished by `by`, up to that stop."""
        prefix = a.order.prefix(q, stop_at, near)
        for _, event, callees in prefix:
            yield event, callees
        until = None
        if prefix.stop is not None:
            i, event = prefix.stop
            until = event.line or (lines.get(q) or [0] * (i + 1))[i]
        out.setdefault(q, (by, until))

    def enter(start: list[str], by: str, stop_at: tuple[EventKind, ...]) -> None:
        depth_first_stack(start, lambda q: body(q, by, stop_at, False), done=out.__contains__)

    for seed in sorted(a.entries):
        if seed in a.funcs:
            by = short(seed, a.funcs[seed].module)
            for _, callees in body(seed, by, (PUBLISH,), False):
                if not any(a.order.first(t)[0] for t in callees):  # no finding on this call yet
                    enter(callees, by, (PUBLISH,))
    for seed in a.unreached_constructors():
        stop = (PUBLISH, EventKind.ASSERT)
        if not a.order.first_steps(seed, stop, near=True)[0]:  # no finding yet
            by = short(seed, a.funcs[seed].module)
            for _, callees in body(seed, by, stop, True):
                enter(callees, by, stop)
    return out


def analysis(program: Program) -> Analysis:
    """One analysis per program and round (more_tokens, derive, pins and check share it)."""
    return program.memo(KEY, lambda: Analysis(program))
