"""The whole-program call graph (the part "calls"), built once per run.

Every parsed file contributes its module summary (program.call_facts, decoded
once per file entry); the graph joins them: functions, classes and process
starts of the whole program, each call's targets resolved across modules
(re-exports, the class hierarchy, callables and instances parked on `self`),
and the reverse edges. Every rule that walks calls shares the one graph:
`call_graph(program)`.

Whether a function is handed the record is a whole-program question too: a
parameter annotated with the record class, or one named like the codebase's
record parameters (program.record_conventions.record_names, derived from annotations).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ctxlint.program.call_model import (
    ClassSummary,
    Event,
    EventKind,
    Flags,
    Global,
    HeldMethod,
    ModuleSummary,
    SelfMethod,
    Start,
    SuperMethod,
    Target,
)
from ctxlint.program.classes import ClassIndex, class_index
from ctxlint.program.core import Program
from ctxlint.program.record_conventions import record_names

# the part's key: its facts in program.files[path]["facts"] (a ModuleSummary once read)
KEY = "calls"


@dataclass(frozen=True, slots=True)
class Func:
    qual: str
    path: str
    module: str
    cls: str | None
    events: tuple[Event, ...]
    takes_record: bool = False
    refs: tuple[str, ...] = ()
    params: tuple[str, ...] = ()  # the receiver left out
    flags: Flags | None = None  # what it binds (program.unset_flags)

    def does(self, kind: EventKind) -> bool:
        return any(e.kind is kind for e in self.events)


def summaries(program: Program) -> dict[str, ModuleSummary]:
    """path -> module summary, for every file with call facts (by path)."""
    return {path: program.per_file(KEY, path, read_summary) for path, _, _ in program.facts(KEY)}


def read_ahead(entry: dict[str, Any]) -> None:
    """The entry's summary read now, in place, if it has call facts: the engine
    does it while the pool parses an edit, so the graph finds it read."""
    if entry.get("facts", {}).get(KEY):
        read_summary(entry)


def read_summary(entry: dict[str, Any]) -> ModuleSummary:
    """The entry's summary, which then stands in the entry for the part's JSON:
    it is all the model reads of the part, and the JSON is three times its size
    (on sglang 0.5.23, 113 MiB of a run's peak beside the summaries' 37)."""
    facts = entry["facts"]
    raw = facts[KEY]
    if isinstance(raw, ModuleSummary):
        return raw
    facts[KEY] = summary = ModuleSummary.from_json(raw)
    return summary


def call_graph(program: Program) -> CallGraph:
    """The program's call graph, built once per run (and fixed-point round)."""
    return program.memo(
        KEY, lambda: CallGraph(summaries(program), record_names(program), class_index(program))
    )


class CallGraph:
    """Functions, classes, process starts and resolved call edges of a program."""

    def __init__(
        self, modules: dict[str, ModuleSummary], record_params: set[str], index: ClassIndex
    ) -> None:
        self.funcs: dict[str, Func] = {}
        self.classes: dict[str, ClassSummary] = {}
        self.class_path: dict[str, str] = {}
        self.modules: dict[str, dict[str, str]] = {}  # module -> import table
        self.module_refs: dict[str, tuple[str, ...]] = {}  # module -> names import-time code uses
        self.starts: list[tuple[str, Start]] = []
        # module-level names bound to falsy literals only at import (program.unset_flags)
        self.falsy: set[str] = set()
        self._doing: dict[EventKind, set[str]] = {k: set() for k in EventKind}
        call, calling = EventKind.CALL, self._doing[EventKind.CALL]
        for path, m in modules.items():
            self.modules[m.module] = m.imports
            for q, f in m.funcs.items():
                takes = f.record_annotated or any(p in record_params for p in f.params)
                self.funcs[q] = Func(
                    q, path, m.module, f.cls, f.events, takes, f.refs, f.params, f.flags
                )
                for e in f.events:  # (hundreds of thousands: calls, the most, hash nothing)
                    if e.kind is call:
                        calling.add(q)
                    else:
                        self._doing[e.kind].add(q)
            self.module_refs[m.module] = m.refs
            self.falsy.update(m.falsy)
            for q, c in m.classes.items():
                self.classes[q] = c
                self.class_path[q] = path
            self.starts += [(path, s) for s in m.starts]
        self._global: dict[str, list[str]] = {}
        self.index = index
        # per function, per event: the functions the event's call may run
        targets = self.targets
        self.edges: dict[str, list[list[str]]] = {
            q: [targets(f.cls, e.targets) if e.kind is call else [] for e in f.events]
            for q, f in self.funcs.items()
        }
        self.callers: dict[str, set[str]] = {}
        for q, per_event in self.edges.items():
            for found in per_event:
                for t in found:
                    self.callers.setdefault(t, set()).add(q)

    def reaching(self, seed: Iterable[str]) -> set[str]:
        """`seed` and every function that reaches one of it along calls."""
        out, todo = set(seed), list(seed)
        while todo:
            for c in self.callers.get(todo.pop(), ()):
                if c not in out:
                    out.add(c)
                    todo.append(c)
        return out

    def doing(self, kind: EventKind) -> set[str]:
        """Functions whose own body has an event of `kind` (a copy: callers grow it)."""
        return set(self._doing[kind])

    # -- resolution -----------------------------------------------------------
    def resolve_global(self, name: str, depth: int = 0) -> list[str]:
        """Functions a qualified name runs when called (a class runs its __init__)."""
        if name in self._global:
            return self._global[name]
        self._global[name] = []  # cycles in re-exports
        out: list[str] = []
        if name in self.funcs:
            out = [name]
        elif name in self.classes:
            out = self.method(name, "__init__")
        elif depth < 8:
            prefix, _, attr = name.rpartition(".")
            cls = self.resolve_class(prefix, depth + 1) if prefix else None
            if cls is not None:
                out = self.method(cls, attr)
            else:
                out = self._reexport(name, depth)
        self._global[name] = out
        return out

    def reexported(self, name: str) -> str | None:
        """What `pkg.name` stands for when the nearest module on its path that has
        been seen imports `name` from elsewhere; None when it does not (or the
        import is the name itself)."""
        parts = name.split(".")
        for i in range(len(parts) - 1, 0, -1):
            imports = self.modules.get(".".join(parts[:i]))
            if imports is None:
                continue
            if parts[i] in imports:
                target = ".".join([imports[parts[i]], *parts[i + 1 :]])
                return target if target != name else None
            return None
        return None

    def _reexport(self, name: str, depth: int) -> list[str]:
        target = self.reexported(name)
        return self.resolve_global(target, depth + 1) if target else []

    # The class questions are the class index's (program.classes: C3, re-exports).
    def resolve_class(self, name: str, depth: int = 0) -> str | None:
        return self.index.resolve(name)

    def mro(self, cls: str) -> tuple[str, ...]:
        return self.index.mro(cls) or (cls,)

    def method(self, cls: str, name: str, skip_first: bool = False) -> list[str]:
        found = self.index.definer(cls, name, skip_self=skip_first)
        return [f"{found}.{name}"] if found is not None else []

    def overrides(self, cls: str, name: str) -> list[str]:
        return [
            f"{sub}.{name}" for sub in self.index.subclasses(cls) if f"{sub}.{name}" in self.funcs
        ]

    def _on_class(self, cls: str, pick: Any) -> Any:
        """The first class in `cls`'s MRO for which `pick(summary)` is truthy, and that."""
        for c in self.mro(cls):
            known = self.classes.get(c)
            found = pick(known) if known is not None else None
            if found:
                return found
        return None

    def targets(
        self, cls_of: Func | str | None, payload: Sequence[Target], depth: int = 0
    ) -> list[str]:
        """Functions the targets of a call in a method of `cls_of` (a Func, a
        class, or None outside a class) may run."""
        cls = cls_of.cls if isinstance(cls_of, Func) else cls_of
        if len(payload) == 1 and type(payload[0]) is Global:  # (most calls: one name)
            return list(self.resolve_global(payload[0].name))
        out: list[str] = []
        for t in payload:
            found: list[str] = []
            if isinstance(t, Global):
                found = self.resolve_global(t.name)
            elif cls is None:
                pass
            elif isinstance(t, SelfMethod):
                # the class's own method, else a subclass's (a hook the base calls)
                found = self.method(cls, t.name) or self.overrides(cls, t.name)
                if not found and depth < 3:  # a callable parked on self
                    parked = self._on_class(cls, lambda c, a=t.name: c.parked.get(a))
                    if parked:
                        found = self.targets(cls, parked, depth + 1)
            elif isinstance(t, SuperMethod):
                found = self.method(cls, t.name, skip_first=True)
            elif isinstance(t, HeldMethod):
                for h in self._on_class(cls, lambda c, a=t.attr: c.held.get(a)) or ():
                    # `Cls.from_string(...)`: an alternate constructor's class
                    real = self.resolve_class(h) or self.resolve_class(h.rpartition(".")[0])
                    if real is not None:
                        found += self.method(real, t.name)
            out += [f for f in found if f not in out]
        return out

    def start_targets(self, start: Start) -> list[str]:
        """Entry functions of one process start (a class starts at its __init__)."""
        fn = self.funcs.get(start.fn or "")
        return self.targets(fn.cls if fn else start.cls, start.targets)


def short(qual: str, module: str) -> str:
    """`Cls.method` for `pkg.mod.Cls.method`."""
    return qual[len(module) + 1 :] if qual.startswith(module + ".") else qual
