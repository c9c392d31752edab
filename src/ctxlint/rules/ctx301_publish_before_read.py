"""CTX301 publish-before-read: a bag read that can run before its process publishes.

Process entries are derived: functions and constructors that call the runtime
module's `publish` (directly or through a same-module helper), and every target
handed to a process start (`Process(target=...)`, a process pool's `submit`, a
Ray actor's `__init__` or a Ray task). From each entry the calls are followed in
statement order, across modules, and a bag read reached before the publish is
reported on the entry's statement that leads to it, with the path. A publisher
that reaches no read at all is pinned in the baseline, so a derivation that
silently stops finding reads fails; a constructor that reads bags, is reached
from no publishing entry and does not `assert_published` first is reported too.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.call_model import Event, EventKind, Global, Start, StartKind
from ctxlint.program.calls import call_graph, short
from ctxlint.program.core import Program
from ctxlint.program.parts import CALL_LINES
from ctxlint.program.rule import FixGuard, PinSite, RawFinding, Rule, guard_until, pin_findings

ID = "CTX301"
NO_READ = "publishes, reaches no bag read"
ROLES = {StartKind.PROCESS: "process target", StartKind.SUBMIT: "pool task", StartKind.RAY: "ray"}
PUBLISH, READ, CALL = EventKind.PUBLISH, EventKind.READ, EventKind.CALL


@dataclass(frozen=True)
class Hit:
    chain: tuple[str, ...]  # qualnames from the callee to the reading function
    accessor: str
    path: str  # of the reading function
    line: int  # 0 when the read was not anchored


class Analysis:
    """Entries and walks over the program's call graph (once per Program)."""

    def __init__(self, program: Program) -> None:
        self.graph = g = call_graph(program)
        self.funcs = g.funcs
        self.callers = g.callers
        # functions that reach a bag read (a publish) along any calls
        self.reaches_read = g.reaching(g.doing(READ))
        self.reaches_publish = g.reaching(g.doing(PUBLISH))
        self.publishers = self._publishers()
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
        self._pre: dict[str, tuple[Hit | None, bool]] = {}
        self.reached_refs: set[str] = set()  # classes reached code names
        self._reached: set[str] | None = None
        self._busy: set[str] = set()

    def wanted_tokens(self) -> set[str]:
        g = self.graph
        tops = {m.partition(".")[0] for m in g.modules}
        out: set[str] = set()

        def want(name: str, depth: int = 0) -> None:
            parts = name.split(".")
            if parts[0] not in tops or depth > 8 or g.resolve_global(name):
                return  # outside the tree, or already known
            # the module that defines it, or a package on the way that re-exports
            # it (resolution goes through import tables only, so no other file
            # can define it); `Cls.method` names its class's module too
            out.update(f"module:{'.'.join(parts[:i])}" for i in range(1, len(parts) + 1))
            # and where a module seen so far re-exports it from
            target = g.reexported(name)
            if target:
                want(target, depth + 1)

        seen: set[tuple[str, bool]] = set()

        def walk(q: str, pre_only: bool) -> None:
            if (q, pre_only) in seen:
                return
            seen.add((q, pre_only))
            fn = self.funcs[q]
            for event, targets in zip(fn.events, g.edges[q], strict=True):
                if pre_only and event.kind is PUBLISH:
                    return
                if event.kind is not CALL:
                    continue
                for t in event.targets:
                    if isinstance(t, Global):
                        want(t.name)
                for t in targets:
                    walk(t, pre_only)
                if pre_only and targets and all(self.pre(t)[1] for t in targets):
                    return

        for _, start in g.starts:
            for t in start.targets:
                if isinstance(t, Global):
                    want(t.name)
        for q in self.entries:
            if q in self.funcs:
                walk(q, True)
        for q in self.publishers - self.reaches_read:
            walk(q, False)
        out |= self._constructor_names()
        return out

    def _constructor_names(self) -> set[str]:
        """Names that may resolve a constructor the check would report as reached
        by nothing: its class, and the functions and classes leading to it from
        where the known callers stop (a package re-exporting one holds no token of
        its own, and is parsed only when asked for by name)."""
        out: set[str] = set()
        for q in self.unreached_constructors():
            fn = self.funcs[q]
            seen, todo = {q}, [q]
            while todo and len(seen) < 64:
                c = todo.pop()
                up = [x for x in self.callers.get(c, ()) if x not in seen]
                if not up:  # where the known callers stop
                    f = self.funcs[c]
                    out.add((f.cls or c).rpartition(".")[2])
                seen.update(up)
                todo += up
            out.add((fn.cls or q).rpartition(".")[2])
        # a short name (`main`, `run`) is in every other file: not worth a parse
        return {n for n in out if len(n) >= 8 and not n.startswith("__")}

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

    def _publishers(self) -> set[str]:
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
        out = g.doing(PUBLISH)
        self.through: dict[str, str] = {}
        # pinned when they reach no read: those publishing in their own module
        # (a caller of another module's helper has no publish site to anchor a pin)
        todo = sorted(out)
        while todo:
            q = todo.pop(0)  # breadth first: `through` names the nearest helper
            for c in sorted(self.callers.get(q, ())):
                if c not in out and g.funcs[c].module == g.funcs[q].module:
                    out.add(c)
                    self.through[c] = q
                    todo.append(c)
        self.own: set[str] = set(out)
        roots = set(out) | {q for _, start in g.starts for q in g.start_targets(start)}
        inside: set[str] = set()
        todo = sorted(roots & set(self.funcs))
        while todo:
            for targets in g.edges.get(todo.pop(), ()):
                for t in targets:
                    if t not in inside and t not in roots:
                        inside.add(t)
                        todo.append(t)
        todo = sorted(out - inside)
        while todo:
            q = todo.pop(0)
            for c in sorted(self.callers.get(q, ())):
                if c not in out and c not in inside:
                    out.add(c)
                    self.through[c] = q
                    todo.append(c)
        return out

    # -- walks ----------------------------------------------------------------
    def pre(self, q: str) -> tuple[Hit | None, bool]:
        """(first read reachable from `q` before a publish, whether `q` publishes)."""
        if q in self._pre:
            return self._pre[q]
        if q in self._busy or (q not in self.reaches_read and q not in self.reaches_publish):
            return None, False  # recursion, or nothing to find below
        self._busy.add(q)
        found: Hit | None = None
        stops = False
        fn = self.funcs[q]
        for event, targets in zip(fn.events, self.graph.edges[q], strict=True):
            if event.kind is PUBLISH:
                stops = True
                break
            if event.kind is READ:
                found = found or Hit((), event.accessor or "", fn.path, event.line)
            elif targets:
                all_stop = True
                for t in targets:
                    hit, t_stops = self.pre(t)
                    if hit is not None and found is None:
                        found = Hit((t, *hit.chain), hit.accessor, hit.path, hit.line)
                    all_stop = all_stop and t_stops
                if all_stop:
                    stops = True
                    break
        self._busy.discard(q)
        self._pre[q] = (found, stops)
        return found, stops

    def first_steps(
        self, q: str, stop_at: tuple[EventKind, ...] = (PUBLISH,), same_module: bool = False
    ) -> tuple[list[tuple[Event, Hit]], Event | None]:
        """Events in `q`'s own body leading to a read before its publish, and that
        publish event (None if it never publishes)."""
        fn = self.funcs[q]
        steps: list[tuple[Event, Hit]] = []
        for event, targets in zip(fn.events, self.graph.edges[q], strict=True):
            if event.kind in stop_at:
                return steps, event
            if event.kind is READ:
                steps.append((event, Hit((), event.accessor or "", fn.path, event.line)))
            elif targets:
                callees = [
                    t for t in targets if not same_module or self.funcs[t].module == fn.module
                ]
                for t in callees:
                    hit = self.pre(t)[0]
                    if hit is not None:
                        steps.append(
                            (event, Hit((t, *hit.chain), hit.accessor, hit.path, hit.line))
                        )
                        break
                if PUBLISH in stop_at and callees and all(self.pre(t)[1] for t in callees):
                    return steps, event
        return steps, None

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

        def instance_of(cls: str) -> None:
            for c in g.mro(cls):
                if c not in classes:
                    classes.add(c)
                    todo.extend(m for m in methods.get(c, ()) if m not in seen)

        todo = [q for q in self.entries if q in self.funcs and self.pre(q)[1]]
        while todo:
            q = todo.pop()
            if q in seen:
                continue
            seen.add(q)
            fn = self.funcs[q]
            if fn.cls is not None and q == f"{fn.cls}.__init__":
                instance_of(fn.cls)
            refs = list(fn.refs)
            if fn.module not in modules:
                modules.add(fn.module)
                refs += g.module_refs.get(fn.module, ())
            for targets in g.edges.get(q, ()):
                todo += [t for t in targets if t not in seen]
            for name in refs:
                cls = g.resolve_class(name)
                if cls is not None:
                    self.reached_refs.add(cls)
                    instance_of(cls)
                todo += [t for t in g.resolve_global(name) if t not in seen]
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

    def body(q: str, by: str, stop_at: tuple[EventKind, ...], near: bool) -> Iterable[list[str]]:
        """The callees of each of `q`'s calls before it stops (`near`: within its
        module), and then `q` recorded as run unpublished by `by`."""
        fn = a.funcs[q]
        at = lines.get(q) or [0] * len(fn.events)
        until = None
        for i, (event, targets) in enumerate(zip(fn.events, a.graph.edges[q], strict=True)):
            if event.kind in stop_at:
                until = event.line or at[i]
                break
            callees = [t for t in targets if not near or a.funcs[t].module == fn.module]
            yield callees
            if PUBLISH in stop_at and callees and all(a.pre(t)[1] for t in callees):
                until = event.line or at[i]
                break
        out.setdefault(q, (by, until))

    def enter(start: list[str], by: str, stop_at: tuple[EventKind, ...]) -> None:
        todo = list(start)
        while todo:
            q = todo.pop()
            if q not in out:
                for callees in body(q, by, stop_at, False):
                    todo += [t for t in callees if t not in out]

    for seed in sorted(a.entries):
        if seed in a.funcs:
            by = short(seed, a.funcs[seed].module)
            for callees in body(seed, by, (PUBLISH,), False):
                if not any(a.pre(t)[0] for t in callees):  # no finding on this call yet
                    enter(callees, by, (PUBLISH,))
    for seed in a.unreached_constructors():
        stop = (PUBLISH, EventKind.ASSERT)
        if not a.first_steps(seed, stop_at=stop, same_module=True)[0]:  # no finding yet
            by = short(seed, a.funcs[seed].module)
            for callees in body(seed, by, stop, True):
                enter(callees, by, stop)
    return out


def analysis(program: Program) -> Analysis:
    """One analysis per program and round (more_tokens, derive, pins and check share it)."""
    return program.memo(ID, lambda: Analysis(program))


class PublishBeforeRead(Rule):
    id = ID
    name = "publish-before-read"
    summary = "A bag read that can run before its process entry publishes the config"
    needs = (BAGS,)
    requires = ("calls", "classes", "records")  # the call graph, its class questions

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return set(vocab.bag_accessors) | {
            "publish",
            "assert_published",
            "Process",
            "submit",
            "remote",
        }

    def more_tokens(self, program: Program) -> set[str]:
        """Modules the walks need and have not seen: for every unresolved call on
        a path the checks follow (before an entry's publish, and all of a
        publisher that reaches no read yet), the modules its qualified name runs
        through (`module:` tokens select exactly those files)."""
        return analysis(program).wanted_tokens()

    def derive(self, program: Program) -> dict[str, Any]:
        a = analysis(program)
        entries = []
        for q, roles in sorted(a.entries.items()):
            if q not in a.funcs:
                continue
            entries.append(f"{q} ({', '.join(roles)})")
        silent = sorted(q for q in a.own if q not in a.reaches_read)
        starts = []
        for path, s in a.graph.starts:
            got = ", ".join(a.graph.start_targets(s)) or "unresolved"
            starts.append(f"{path}:{s.site.span[0]} {s.kind.value} -> {got}")
        return {
            "process entries": entries,
            "publishers reaching no bag read": silent,
            "process starts": sorted(starts),
            "functions reaching a bag read": len(a.reaches_read),
        }

    def pins(self, program: Program) -> dict[str, Any]:
        a = analysis(program)
        return {q: NO_READ for q in a.own if q not in a.reaches_read}

    def fix_guard(self, program: Program) -> FixGuard:
        return guard_until(program, runs_unpublished(program))  # a read added there: a finding

    def _pin_sites(self, a: Analysis) -> dict[str, PinSite]:
        sites: dict[str, PinSite] = {}
        for q in a.own:
            fn = a.funcs[q]
            site = next((e.site for e in fn.events if e.kind is PUBLISH and e.site), None)
            if site is not None:
                sites[q] = PinSite(fn.path, short(q, fn.module), site.snippet, site.span)
        return sites

    def check(self, program: Program) -> Iterable[RawFinding]:
        a = analysis(program)
        yield from pin_findings(ID, program, self.pins(program), self._pin_sites(a))
        for q in sorted(a.entries):
            if q in a.funcs:
                yield from self._entry(a, q)
        # only a constructor handed the record can assert_published(server_args)
        for q in a.unreached_constructors():
            yield from self._constructor(a, q)

    def _entry(self, a: Analysis, q: str) -> Iterable[RawFinding]:
        fn = a.funcs[q]
        steps, publish = a.first_steps(q)
        if not steps:
            return
        name = short(q, fn.module)
        if publish is not None:
            when = (
                f"before publish at line {publish.line}: no bag exists yet there; read it "
                "after the publish, or take the value as an argument"
            )
        else:
            when = "in a process entry that never publishes (add publish(...) at its top)"
        start = a.entry_start.get(q)
        for event, hit in steps:
            path_text = _path(a, name, hit)
            msg = f"{path_text} {when}"
            if event.site is not None:
                yield RawFinding(ID, fn.path, name, event.site.snippet, event.site.span, msg)
            elif start is not None:  # the entry's module anchored nothing: the start site
                spath, s = start
                site = s.site
                yield RawFinding(ID, spath, s.scope, site.snippet, site.span, f"{msg} (entry {q})")
                return

    def _constructor(self, a: Analysis, q: str) -> Iterable[RawFinding]:
        """One finding per constructor, on its first statement leading to a read."""
        fn = a.funcs[q]
        found = a.first_steps(q, stop_at=(PUBLISH, EventKind.ASSERT), same_module=True)[0]
        steps = [(e.site, hit) for e, hit in found if e.site is not None]
        if not steps:
            return
        name = short(q, fn.module)
        site, hit = steps[0]
        more = f" (and {len(steps) - 1} more statements reading bags)" if len(steps) > 1 else ""
        yield RawFinding(
            ID,
            fn.path,
            name,
            site.snippet,
            site.span,
            f"{_path(a, name, hit)}{more} in a constructor handed the record that no "
            "publishing entry reaches and that does not call assert_published first: a "
            "process that forgot to publish fails here, far from the cause",
        )


def _path(a: Analysis, name: str, hit: Hit) -> str:
    parts = [name]
    for q in hit.chain:
        f = a.funcs[q]
        parts.append(short(q, f.module))
    where = f" ({hit.path}:{hit.line})" if hit.chain and hit.line else ""
    return " -> ".join(parts) + f" -> {hit.accessor}(){where}"


RULE = PublishBeforeRead()
