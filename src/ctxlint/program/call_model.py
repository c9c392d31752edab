"""The call graph's vocabulary: typed call targets, events, and one module's summary.

A module's summary is what the part "calls" extracts from one file: its
definitions (functions with their events and parameters, classes with their
bases and the attributes their methods park on `self`), its process starts, its
import table and the names its import-time code references. It is made of the
module alone, so it is cached with the file's facts and reused by every run
whose file is unchanged; resolving its calls against other modules is the
whole-program side's (program.calls.CallGraph).

Facts are plain JSON: each type here has `to_json`/`from_json`, and the graph
decodes a summary once per run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from functools import lru_cache
from sys import intern
from typing import Any, NamedTuple


def _text(raw: str | None) -> str | None:
    """One object per distinct name across the program's summaries (facts.typed
    interns the same way: json.loads makes a new str for each occurrence)."""
    return None if raw is None else intern(raw)


def _texts(raw: list[str] | None) -> tuple[str, ...]:
    return tuple(map(intern, raw)) if raw else ()


# -- targets: what `expr(...)` runs, as far as one file can tell --------------------------
@dataclass(frozen=True, slots=True)
class Global:
    """A qualified name (through the import table, a module-level name, a nested
    def, a callable parameter default or a local alias of one)."""

    name: str


@dataclass(frozen=True, slots=True)
class SelfMethod:
    """`self.meth(...)`: a method of the class, or a callable parked on `self`."""

    name: str


@dataclass(frozen=True, slots=True)
class SuperMethod:
    """`super().meth(...)`: the method after the class in its MRO."""

    name: str


@dataclass(frozen=True, slots=True)
class HeldMethod:
    """`self.attr.meth(...)`, where some method set `self.attr = Cls(...)`."""

    attr: str
    name: str


Target = Global | SelfMethod | SuperMethod | HeldMethod
_TAGS: dict[type, str] = {Global: "g", SelfMethod: "s", SuperMethod: "S", HeldMethod: "i"}


def target_json(t: Target) -> list[str]:
    if isinstance(t, HeldMethod):
        return ["i", t.attr, t.name]
    return [_TAGS[type(t)], t.name]


@lru_cache(maxsize=1 << 16)
def _target(tag: str, name: str, method: str | None) -> Target:
    """One shared object per target (a program names the same ones again and again)."""
    name = intern(name)
    if tag == "g":
        return Global(name)
    if tag == "s":
        return SelfMethod(name)
    if tag == "S":
        return SuperMethod(name)
    assert method is not None
    return HeldMethod(name, intern(method))


def target_from_json(raw: list[str]) -> Target:
    return _target(raw[0], raw[1], raw[2] if len(raw) > 2 else None)


def targets_json(ts: list[Target]) -> list[list[str]]:
    return [target_json(t) for t in ts]


def targets_from_json(raw: list[list[str]]) -> tuple[Target, ...]:
    return tuple([_target(t[0], t[1], t[2] if len(t) > 2 else None) for t in raw])


# -- events: what a function body does, in execution order ----------------------------------
# in an event's `when`: it runs on some paths through its function only
# (program.flag_facts marks it), so it is no step every run takes; GUARD: it
# runs exactly when the `when` conjuncts hold (the `if` tests around it, all spelled)
BRANCH = "|"
GUARD = "&"


class EventKind(Enum):
    READ = "r"  # a bag accessor call
    PUBLISH = "p"  # the runtime's publish(...)
    ASSERT = "a"  # the runtime's assert_published(...)
    CALL = "c"  # any other call with a target


_EVENT_KINDS = {k.value: k for k in EventKind}


class Site(NamedTuple):
    """Where an event is in its file (positions cost a pass: only some are kept)."""

    snippet: str
    span: Any  # [line, column, end_line, end_column]; an Anchor until the walk's end


class Event(NamedTuple):
    """One event of a function body (a named tuple: a program has hundreds of
    thousands, decoded once per run)."""

    kind: EventKind
    targets: tuple[Target, ...] = ()  # CALL
    accessor: str | None = None  # READ: the bag accessor's name
    site: Site | None = None  # set when the event can become a finding's site
    role: str | None = None  # PUBLISH: the literal `role=` it publishes under
    # READ: the attribute taken straight off the accessor's result
    # (`get_parallel().world_group` -> "world_group"); None when the object goes on
    member: str | None = None
    # READ: the classes the handlers of the `try` bodies it sits in (in its own
    # function; handlers that do not raise again) catch, qualified as the file
    # names them (a builtin by its plain name; a bare `except:` BaseException);
    # program.leaf_reads compares them with what the accessor raises before publish
    caught: tuple[str, ...] = ()
    # what must be true for the event to run: the operands of the `and`s of the
    # `if` tests around it in its own function, as program.unset_flags spells
    # a value (`n:name`, `a:attr` off self, `g:qualified`, `=` a falsy literal,
    # `~x` a negation: program.flag_facts), and BRANCH (or GUARD) where it runs
    # on some paths only
    when: tuple[str, ...] = ()
    # CALL: every argument it passes so spelled (`p:SPELLING` positional in
    # order, `kw=SPELLING`, `*` for a star or a call of a call)
    args: tuple[str, ...] = ()

    @property
    def branch(self) -> bool:
        """It runs on some paths through its function only."""
        return BRANCH in self.when or GUARD in self.when

    @property
    def line(self) -> int:
        """The line of the event's site (0: none kept)."""
        return self.site.span[0] if self.site is not None else 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"k": self.kind.value}
        if self.targets:
            out["t"] = targets_json(list(self.targets))
        if self.accessor is not None:
            out["r"] = self.accessor
        if self.site is not None:
            out["at"] = [self.site.snippet, self.site.span]
        if self.role is not None:
            out["role"] = self.role
        if self.member is not None:
            out["m"] = self.member
        if self.caught:  # only when set: a read outside a `try` keeps its form
            out["g"] = list(self.caught)
        if self.when:
            out["w"] = list(self.when)
        if self.args:
            out["x"] = list(self.args)
        return out

    @staticmethod
    def from_json(raw: dict[str, Any]) -> Event:
        at = raw.get("at")
        targets = raw.get("t")
        return Event(
            _EVENT_KINDS[raw["k"]],
            targets_from_json(targets) if targets else (),
            _text(raw.get("r")),
            Site(at[0], at[1]) if at else None,
            _text(raw.get("role")),
            _text(raw.get("m")),
            _texts(raw.get("g")),
            _texts(raw.get("w")),
            _texts(raw.get("x")),
        )


# -- definitions ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class FuncSummary:
    qual: str  # module-qualified
    cls: str | None  # module-qualified class of a method
    events: tuple[Event, ...]
    params: tuple[str, ...] = ()  # parameter names, the receiver left out
    record_annotated: bool = False  # a parameter annotated with the record class
    refs: tuple[str, ...] = ()  # in-package names referenced, not called
    flags: Flags | None = None  # what its names, self attributes and globals are bound to

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"cls": self.cls, "events": [e.to_json() for e in self.events]}
        if self.params:
            out["params"] = list(self.params)
        if self.record_annotated:
            out["record"] = True
        if self.refs:
            out["refs"] = list(self.refs)
        if self.flags is not None:
            out["flags"] = self.flags.to_json()
        return out

    @staticmethod
    def from_json(qual: str, raw: dict[str, Any]) -> FuncSummary:
        return FuncSummary(
            qual,
            _text(raw["cls"]),
            tuple([Event.from_json(e) for e in raw["events"]]),
            _texts(raw.get("params")),
            bool(raw.get("record")),
            _texts(raw.get("refs")),
            Flags.from_json(raw["flags"]) if "flags" in raw else None,
        )


Spellings = dict[str, tuple[str, ...]]


@dataclass(frozen=True, slots=True)
class Flags:
    """What a function binds, in the spellings of `Event.when` (program.unset_flags):
    its parameters with a falsy literal default (`+p`: a truthy one; `*a`,
    `**k`: its star parameters), what each name its tests and
    arguments spell is bound to (`^`: the value handed in), each `self.attr =`
    and each `global` name it assigns (qualified). Kept only for a function
    whose events spell such a value, or that assigns a self attribute or a global."""

    defaults: tuple[str, ...] = ()
    names: Spellings = field(default_factory=dict)
    attrs: Spellings = field(default_factory=dict)
    globals: Spellings = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in (("d", self.defaults), ("n", self.names), ("a", self.attrs)):
            if value:
                out[key] = list(value) if isinstance(value, tuple) else _lists(value)
        if self.globals:
            out["g"] = _lists(self.globals)
        return out

    @staticmethod
    def from_json(raw: dict[str, Any]) -> Flags:
        def read(key: str) -> Spellings:
            return {k: _texts(v) for k, v in raw.get(key, {}).items()}

        return Flags(_texts(raw.get("d")), read("n"), read("a"), read("g"))


def _lists(spellings: Spellings) -> dict[str, list[str]]:
    return {k: list(v) for k, v in spellings.items()}


@dataclass(frozen=True, slots=True)
class ClassSummary:
    bases: tuple[str, ...]  # qualified names, as the module spells them
    parked: dict[str, tuple[Target, ...]] = field(default_factory=dict)  # self.attr = callable
    held: dict[str, tuple[str, ...]] = field(default_factory=dict)  # self.attr = Cls(...)

    def to_json(self) -> dict[str, Any]:
        return {
            "bases": list(self.bases),
            "parked": {a: targets_json(list(ts)) for a, ts in self.parked.items()},
            "held": {a: list(cs) for a, cs in self.held.items()},
        }

    @staticmethod
    def from_json(raw: dict[str, Any]) -> ClassSummary:
        return ClassSummary(
            _texts(raw["bases"]),
            {a: targets_from_json(ts) for a, ts in raw["parked"].items()},
            {a: _texts(cs) for a, cs in raw["held"].items()},
        )


class StartKind(Enum):
    PROCESS = "process"  # multiprocessing's Process(target=...)
    SUBMIT = "submit"  # a process pool's submit/map
    RAY = "ray"  # a Ray task or actor


@dataclass(frozen=True, slots=True)
class Start:
    """A process start: the targets it runs in a new process."""

    kind: StartKind
    targets: tuple[Target, ...]
    scope: str  # the qualname the start is in, within its module
    fn: str | None  # the module-qualified function it is in
    cls: str | None  # the module-qualified class of that function
    site: Site

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "targets": targets_json(list(self.targets)),
            "scope": self.scope,
            "fn": self.fn,
            "cls": self.cls,
            "at": [self.site.snippet, self.site.span],
        }

    @staticmethod
    def from_json(raw: dict[str, Any]) -> Start:
        return Start(
            StartKind(raw["kind"]),
            targets_from_json(raw["targets"]),
            intern(raw["scope"]),
            _text(raw["fn"]),
            _text(raw["cls"]),
            Site(raw["at"][0], raw["at"][1]),
        )


@dataclass(frozen=True, slots=True)
class ModuleSummary:
    """One module's part of the call graph, made of that module alone."""

    module: str
    funcs: dict[str, FuncSummary]
    classes: dict[str, ClassSummary]
    starts: tuple[Start, ...]
    imports: dict[str, str]  # local name -> qualified name
    refs: tuple[str, ...]  # names import-time code references
    # module-level names import-time code binds to a falsy literal only (qualified)
    falsy: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out = {
            "module": self.module,
            "funcs": {q: f.to_json() for q, f in self.funcs.items()},
            "classes": {q: c.to_json() for q, c in self.classes.items()},
            "starts": [s.to_json() for s in self.starts],
            "imports": dict(self.imports),
            "module_refs": list(self.refs),
        }
        if self.falsy:
            out["falsy"] = list(self.falsy)
        return out

    @staticmethod
    def from_json(raw: dict[str, Any]) -> ModuleSummary:
        return ModuleSummary(
            raw["module"],
            {q: FuncSummary.from_json(q, f) for q, f in raw["funcs"].items()},
            {q: ClassSummary.from_json(c) for q, c in raw["classes"].items()},
            tuple(Start.from_json(s) for s in raw["starts"]),
            {local: intern(name) for local, name in raw["imports"].items()},
            _texts(raw["module_refs"]),
            _texts(raw.get("falsy")),
        )
