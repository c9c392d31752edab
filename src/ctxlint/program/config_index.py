"""The config index: every config leaf and namespace, where it is declared, and
every place that names it (the server's hover, definition and references).

Built once per state of the program's files (`Program.memo`) from the side part
"config_sites" (program/config_sites.py) and what the program derives already:

- a leaf's declaration is the one the vocabulary places it by: the record and
  its bases first (in the vocabulary's order), then the field classes, then any
  other class whose fields carry `NS()` markers; a namespace's is its field class
  (`_NS_PATH`), else the first field a marker places in it;
- a record read counts where the record rules would count it: the seed, a new
  record, an annotated name, `self` in the record's own classes, and a name (or
  attribute) the codebase's record convention gives the record
  (program/record_conventions.py);
- a call keyword counts when the callee writes leaves by name: the declaration
  function (program/resolution.py), a public function of the runtime module
  taking `**` (`override`, `override_server_args`), or a function handing its
  own `**` parameter on to one of those (`record_config_updates`);
- a key of a returned dict counts when the function is one resolution calls
  for declarations: a registered model override or a post-process pass
  (program/resolution.py);
- a string literal counts when the callee reads a leaf by name: the runtime's
  `config_leaf`, or a function handing its own parameter on to one, where every
  function of that simple name in the program does (CTX603's rule for wrappers);
- the role table is the runtime module's, or the one it imports (CTX302's).
"""

from __future__ import annotations

import bisect
import gc
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from ctxlint.program.calls import summaries
from ctxlint.program.core import Program
from ctxlint.program.parts import CONFIG_SITES
from ctxlint.program.record_conventions import RecordConvention, record_convention
from ctxlint.program.resolution import resolution

READER = "config_leaf"  # the design's read side of `override`

# what a site is
DECLARATION = "declaration"
NAMESPACE_CLASS = "namespace class"
ACCESSOR = "accessor"  # `get_exec()`: its namespace
ACCESSOR_DEF = "accessor definition"
HOP = "sub-namespace"  # `.moe` in `get_exec().moe.x`
BAG_READ = "bag read"
RECORD_READ = "record read"
LEAF_NAME = "config_leaf literal"
OVERRIDE = "override keyword"
DECLARE = "declaration keyword"
RETURNED = "returned declaration key"  # a registered override's or a pass's returned key
ROLE_ENTRY = "role table entry"

Span = tuple[int, int, int, int]  # line (1-based), column, end line, end column (0-based)


@dataclass(frozen=True, slots=True)
class Site:
    """One place that names a leaf (`field`) or a namespace (`field` None)."""

    path: str
    span: Span
    kind: str
    namespace: str | None
    field: str | None = None
    detail: str = ""  # the accessor, the callee, the role, the holder


@dataclass(frozen=True, slots=True)
class Declaration:
    """Where a leaf is declared, and what its declaration says."""

    field: str
    namespace: str  # "" when no namespace places it
    cls: str  # the qualified class declaring it
    path: str
    span: Span
    type: str
    default: str | None
    help: str | None
    resolvable: bool
    derived: str | None  # the function computing a Derived leaf at publish
    marker: bool  # placed by its own NS("path") marker, not by its class


@dataclass(frozen=True, slots=True)
class Namespace:
    path: str
    cls: str | None  # its field class (`_NS_PATH`), if any
    site: tuple[str, Span] | None  # where it is declared: the class, else a marked field
    accessor: str | None  # the bag accessor of its top namespace


@dataclass
class RoleTable:
    name: str
    path: str
    span: Span
    roles: dict[str, frozenset[str] | None]

    def readers(self, namespace: str) -> tuple[list[str], list[str]]:
        """(roles whose set names the top namespace, roles reading the full tree)."""
        top = namespace.partition(".")[0]
        named = sorted(r for r, s in self.roles.items() if s is not None and top in s)
        full = sorted(r for r, s in self.roles.items() if s is None)
        return named, full


INDEX = "config index"  # its Program.memo key
CARRIED = "config index carry"  # the Program.memo key of what a front end carries in


@dataclass(frozen=True)
class Held:
    """What the index takes from the whole-program model: the resolution
    model's declaration function and the functions whose returned keys it
    declares, the record convention, and the leaf readers by name (which ask
    the call graph's functions), under the key of the facts those are derived
    from (`Carry.key`; None: not known)."""

    key: str | None
    declaration_function: str | None
    returning: frozenset[str]
    convention: RecordConvention
    readers: frozenset[str] | None = None


# what decides which of a file's candidate sites count: the leaf readers and
# writers by name, the returning functions, the declaration function and the
# record convention
Decided = tuple[frozenset[str], frozenset[str], frozenset[str], str | None, RecordConvention]


# the parts of a file's config sites that the index reads together with every
# other file's (declarations, namespaces, the role table, the writers and
# readers by name); the rest (reads, literals, keywords) make that file's sites
_WHOLE_KEYS = (
    "decls",
    "classes",
    "accessor_defs",
    "tables",
    "imports",
    "star_defs",
    "forwards",
    "handoffs",
)


@dataclass(slots=True)
class _FileSites:
    """One file's sites, as the last index built them from its facts entry."""

    digest: bytes  # the entry's (Carry.digests)
    vocab: str  # the vocabulary's key they were built with
    fixed: list[Site]
    maybe: list[tuple[Site, str, str]]
    handoffs: Any  # its config_sites "handoffs" (the leaf readers by name ask them)
    module: str
    decided: Decided | None  # what `kept` was kept by
    kept: list[Site]  # sorted; the role table's entries not among them
    whole: tuple[Any, ...] = ()  # its _WHOLE_KEYS parts

    @classmethod
    def of(
        cls,
        digest: bytes,
        vocab: str,
        fixed: list[Site],
        maybe: list[tuple[Site, str, str]],
        f: dict[str, Any],
        module: str,
        decided: Decided | None,
        kept: list[Site],
    ) -> _FileSites:
        handoffs = f.get("handoffs")
        return cls(digest, vocab, fixed, maybe, handoffs, module, decided, kept, _whole_parts(f))


@dataclass
class _Whole:
    """What the last index built with a carry made of all its files together,
    for the next index to patch where only some files' own sites changed. Not
    the index itself: that holds its program, which a carry must not keep
    alive once a newer check replaced it."""

    digests: dict[str, bytes]  # every file's entry digest (Carry.digests)
    vocab: str
    decided: Decided
    leaves: dict[str, Declaration]
    declarations: dict[str, list[Declaration]]
    namespaces: dict[str, Namespace]
    role_table: RoleTable | None
    table_facts: tuple[str, Any] | None
    by_path: dict[str, list[Site]]
    by_field: dict[str, list[Site]]
    by_namespace: dict[str, list[Site]]
    writers: set[str]
    readers: set[str]
    declaration_function: str | None
    returning: set[str]
    accessor_sites: dict[str, tuple[str, Span]]


@dataclass
class Carry:
    """What a resident front end carries from one program's index to the next
    (`carry_into`): each file's sites by its facts entry's digest, and what
    the index took from the whole-program model while the facts that is
    derived from are the same. Building it then costs the edited files' sites
    and a pass over every file's, not the call graph and the resolution model
    (seconds on sglang 0.5.23, when the check replayed the rules asking them).

    `digests(program)`: path -> the digest of its facts entry, for every file
    of the program (None: not known, nothing is carried). `key(program)`: a
    digest of every file's facts that the resolution model, the call graph's
    functions and the record convention are derived from, positions left out
    (they answer names: program.resolution, program.calls), with the file
    list and the vocabulary (None: not known)."""

    digests: Callable[[Program], dict[str, bytes] | None]
    key: Callable[[Program], str | None]
    files: dict[str, _FileSites] = field(default_factory=dict)
    held: Held | None = None
    whole: _Whole | None = None
    built: int = 0  # indexes built with it (for the tests and the log)
    reused: int = 0  # of those, the ones that took `held` as it was
    patched: int = 0  # of those, the ones made by patching the last one's files


def vocabulary_key(program: Program) -> str:
    """The program's vocabulary's full key, once per program (and once per
    vocabulary: a resident's checks may hand on the same one)."""
    return program.memo("vocabulary key", lambda: _full_key(program.vocab))


_LAST_VOCAB: list[tuple[Any, str]] = []  # the last vocabulary keyed, and its key


def _full_key(vocab: Any) -> str:
    if _LAST_VOCAB and _LAST_VOCAB[0][0] is vocab:
        return _LAST_VOCAB[0][1]
    key = vocab.full_key()
    _LAST_VOCAB[:] = [(vocab, key)]
    return key


def carry_into(program: Program, carry: Carry) -> None:
    """The index of `program` (built on the first question) starts from `carry`."""
    program.memo(CARRIED, lambda: carry)


def config_index(program: Program) -> ConfigIndex:
    """The index, once per state of the program's files."""
    return program.memo(INDEX, lambda: _build(program))


def _build(program: Program) -> ConfigIndex:
    # The cyclic GC is paused, as the engine pauses it for a run: the index adds
    # tens of thousands of small objects beside the program's millions, and each
    # collection they set off would traverse all of them (13 s of a 15 s build on
    # sglang 0.5.23, against 0.4 s with it paused).
    paused = gc.isenabled()
    gc.disable()
    try:
        carry = program.memo(CARRIED, lambda: None)
        return ConfigIndex(program, carry=carry)
    finally:
        if paused:
            gc.enable()


def _span(raw: list[int]) -> Span:
    """A fact's span (columns 1-based, as findings show them) as LibCST gives it."""
    line, col, end_line, end_col = raw
    return (line, col - 1, end_line, end_col - 1)


@dataclass
class ConfigIndex:
    program: Program
    leaves: dict[str, Declaration] = field(default_factory=dict)
    declarations: dict[str, list[Declaration]] = field(default_factory=dict)  # every one
    namespaces: dict[str, Namespace] = field(default_factory=dict)
    role_table: RoleTable | None = None
    by_path: dict[str, list[Site]] = field(default_factory=dict)  # sorted by span
    by_field: dict[str, list[Site]] = field(default_factory=dict)
    by_namespace: dict[str, list[Site]] = field(default_factory=dict)
    writers: set[str] = field(default_factory=set)  # callee names writing leaves by keyword
    readers: set[str] = field(default_factory=set)  # callee names reading a leaf by name
    declaration_function: str | None = None
    returning: set[str] = field(default_factory=set)  # registered overrides and passes
    accessor_sites: dict[str, tuple[str, Span]] = field(default_factory=dict)
    carry: Carry | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        program = self.program
        vocab = program.vocab
        carry = self.carry
        digests = carry.digests(program) if carry is not None else None
        if digests is None:  # nothing known to carry by: built afresh
            carry = None
        self._table_facts: tuple[str, Any] | None = None
        self._starts: dict[str, list[tuple[int, int]]] = {}  # path -> its sites' starts, asked
        if carry is not None and digests is not None and self._patched(carry, digests):
            return
        files = [
            (path, entry["module"], f)
            for path, entry in sorted(program.files.items())
            if (f := entry["facts"].get(CONFIG_SITES))
        ]
        known = carry.files if carry is not None else {}
        self._declarations(files)
        self._namespaces(files)
        self._role_table(files)
        held, decided = self._decide(files, self._held(carry), known, digests)
        vocab_key = vocabulary_key(program) if carry is not None else ""
        place = {**vocab.derived_leaves, **vocab.fields}
        built: dict[str, _FileSites] = {}
        for path, module, f in files:
            # what one file's facts make is built once per entry: an edit
            # rebuilds its own file's sites, and filters everyone's again
            # only when what decides them changed
            old = known.get(path)
            digest = digests[path] if digests is not None else b""
            if old is None or old.digest != digest or old.vocab != vocab_key:
                fixed, maybe = (
                    _sites(path, f, vocab, place)
                    if carry is not None
                    else program.per_file(
                        "config sites",
                        path,
                        lambda entry, path=path: _sites(
                            path, entry["facts"][CONFIG_SITES], vocab, place
                        ),
                    )
                )
                old = None
            else:
                fixed, maybe = old.fixed, old.maybe
            if old is not None and old.module == module and _same(old.decided, decided):
                kept = old.kept
            else:
                kept = sorted([*fixed, *self._kept(maybe, module, held.convention)], key=_by_place)
            if carry is not None:
                built[path] = _FileSites.of(
                    digest, vocab_key, fixed, maybe, f, module, decided, kept
                )
            kept = self._with_role_entries(path, kept)
            self.by_path[path] = kept
            for s in kept:
                if s.field is not None:
                    self.by_field.setdefault(s.field, []).append(s)
                elif s.namespace is not None:
                    self.by_namespace.setdefault(s.namespace, []).append(s)
        if carry is not None and digests is not None:
            carry.files, carry.held = built, held
            carry.whole = self._whole(digests, vocab_key, decided)
            carry.built += 1

    def _decide(
        self,
        files: list[tuple[str, str, dict[str, Any]]],
        held: Held,
        known: dict[str, _FileSites],
        digests: dict[str, bytes] | None,
    ) -> tuple[Held, Decided]:
        """The writers and readers by name, the model's answer (its readers
        derived again unless every file's handoffs are as when they were), and
        what decides which of a file's candidate sites count."""
        self.declaration_function = held.declaration_function
        self.returning = set(held.returning)
        self.writers = self._writers(files, held.declaration_function)
        same = held.readers is not None and all(
            (old := known.get(path)) is not None
            and (old.digest == digests[path] or old.handoffs == f.get("handoffs"))  # type: ignore[index]
            for path, _, f in files
        )
        if not (same and len(known) == len(files)):
            held = replace(held, readers=frozenset(self._readers(files)))
        self.readers = set(held.readers or ())
        decided: Decided = (
            frozenset(self.readers),
            frozenset(self.writers),
            held.returning,
            held.declaration_function,
            held.convention,
        )
        return held, decided

    def _whole(self, digests: dict[str, bytes], vocab_key: str, decided: Decided) -> _Whole:
        return _Whole(
            digests,
            vocab_key,
            decided,
            self.leaves,
            self.declarations,
            self.namespaces,
            self.role_table,
            self._table_facts,
            self.by_path,
            self.by_field,
            self.by_namespace,
            self.writers,
            self.readers,
            self.declaration_function,
            self.returning,
            self.accessor_sites,
        )

    def _patched(self, carry: Carry, digests: dict[str, bytes]) -> bool:
        """The index made from the last one with the same carry, where the files
        whose entries changed changed only their own sites: every part the index
        reads across files (`_WHOLE_KEYS`), each file's module, the vocabulary
        and what the whole-program model answers are as the last index had
        them, so its declarations, namespaces, role table, writers and readers
        hold, and only those files' sites are built again and put in their
        places (the sites of a leaf or a namespace are in path order). False
        (nothing set) when any of that differs: the index is built whole."""
        last, held = carry.whole, carry.held
        if last is None or held is None or held.readers is None:
            return False
        program = self.program
        if len(digests) != len(last.digests):
            return False
        changed = [p for p, d in digests.items() if last.digests.get(p, b"") != d]
        if len(changed) > _PATCHED or any(p not in last.digests for p in changed):
            return False
        if vocabulary_key(program) != last.vocab:
            return False
        key = carry.key(program)
        if key is None or held.key != key:
            return False
        now: dict[str, tuple[str, dict[str, Any] | None]] = {}
        for path in changed:
            entry = program.files[path]
            f = entry["facts"].get(CONFIG_SITES)
            old = carry.files.get(path)
            if old is None:
                if f and any(_whole_parts(f)):
                    return False
            elif not f or old.module != entry["module"] or old.whole != _whole_parts(f):
                return False
            now[path] = (entry["module"], f or None)
        self.leaves, self.declarations = last.leaves, last.declarations
        self.namespaces, self.accessor_sites = last.namespaces, last.accessor_sites
        self.role_table, self._table_facts = last.role_table, last.table_facts
        self.writers, self.readers = last.writers, last.readers
        self.declaration_function, self.returning = last.declaration_function, last.returning
        decided = last.decided
        vocab = program.vocab
        place = {**vocab.derived_leaves, **vocab.fields}
        files = dict(carry.files)
        by_path = dict(last.by_path)
        by_field = dict(last.by_field)
        by_namespace = dict(last.by_namespace)
        for path, (module, f) in sorted(now.items()):
            old_sites = by_path.pop(path, []) if not f else by_path.get(path, [])
            files.pop(path, None)
            kept: list[Site] = []
            if f:
                fixed, maybe = _sites(path, f, vocab, place)
                kept = sorted([*fixed, *self._kept(maybe, module, held.convention)], key=_by_place)
                files[path] = _FileSites.of(
                    digests[path], last.vocab, fixed, maybe, f, module, decided, kept
                )
                kept = self._with_role_entries(path, kept)
                by_path[path] = kept
            _replace_sites(by_field, path, old_sites, kept, lambda s: s.field)
            _replace_sites(
                by_namespace,
                path,
                old_sites,
                kept,
                lambda s: s.namespace if s.field is None else None,
            )
        if list(by_path) != sorted(by_path):  # (a file with sites for the first time)
            by_path = dict(sorted(by_path.items()))
        self.by_path, self.by_field, self.by_namespace = by_path, by_field, by_namespace
        carry.files = files
        carry.whole = self._whole(digests, last.vocab, decided)
        carry.built += 1
        carry.reused += 1
        carry.patched += 1
        return True

    def _held(self, carry: Carry | None) -> Held:
        """What the whole-program model answers: the carried answer while the
        facts it is derived from are the same, else derived now."""
        key = carry.key(self.program) if carry is not None else None
        held = carry.held if carry is not None else None
        if held is not None and key is not None and held.key == key:
            assert carry is not None
            carry.reused += 1
            return held
        res = resolution(self.program)
        return Held(
            key,
            res.declaration.rpartition(".")[2] if res.declaration else None,
            frozenset(res.registered | res.passes),
            record_convention(self.program),
        )

    # -- declarations ------------------------------------------------------------
    def _declarations(self, files: list[tuple[str, str, dict[str, Any]]]) -> None:
        vocab = self.program.vocab
        class_ns: dict[str, str | None] = {}
        for _, _, f in files:
            for q, c in f.get("classes", {}).items():
                class_ns[q] = c["ns"]
        order = {q: (0, i) for i, q in enumerate(vocab.record_classes)}
        for i, q in enumerate(vocab.field_classes):
            order.setdefault(q, (1, i))
        for path, _, f in files:
            for d in f.get("decls", ()):
                ns = d.get("ns") or class_ns.get(d["cls"]) or vocab.field_classes.get(d["cls"])
                self.declarations.setdefault(d["name"], []).append(
                    Declaration(
                        d["name"],
                        ns or "",
                        d["cls"],
                        path,
                        _span(d["span"]),
                        d["type"],
                        d.get("default"),
                        d.get("help"),
                        bool(d.get("resolvable")),
                        d.get("derived"),
                        bool(d.get("ns")),
                    )
                )
        for name, decls in self.declarations.items():
            placed = vocab.fields.get(name, vocab.derived_leaves.get(name))
            if placed is None:
                continue
            # the one the vocabulary placed the leaf by: same namespace, then
            # the record's classes in its order, then the field classes
            self.leaves[name] = min(
                decls,
                key=lambda d: (
                    d.namespace != placed,
                    order.get(d.cls, (2, 0)),
                    d.cls,
                    d.path,
                    d.span,
                ),
            )

    def _namespaces(self, files: list[tuple[str, str, dict[str, Any]]]) -> None:
        vocab = self.program.vocab
        classes: dict[str, tuple[str, str, Span]] = {}  # namespace -> (class, path, span)
        for path, _, f in files:
            for q, c in sorted(f.get("classes", {}).items()):
                ns = c["ns"] or vocab.field_classes.get(q)
                if ns and (ns not in classes or q in vocab.field_classes):
                    if ns not in classes or classes[ns][0] not in vocab.field_classes:
                        classes[ns] = (q, path, _span(c["span"]))
            for name, span in f.get("accessor_defs", {}).items():
                self.accessor_sites[name] = (path, _span(span))
        marked: dict[str, tuple[str, Span]] = {}
        for d in sorted(self.leaves.values(), key=lambda d: (d.path, d.span)):
            if d.namespace and d.marker:
                marked.setdefault(d.namespace, (d.path, d.span))
        top_accessor: dict[str, str] = {}
        for acc, top in sorted(vocab.bag_accessors.items()):
            top_accessor.setdefault(top, acc)
        for ns in vocab.namespaces:
            cls = classes.get(ns)
            site = (cls[1], cls[2]) if cls else marked.get(ns)
            self.namespaces[ns] = Namespace(
                ns, cls[0] if cls else None, site, top_accessor.get(ns.partition(".")[0])
            )

    def _role_table(self, files: list[tuple[str, str, dict[str, Any]]]) -> None:
        runtime = self.program.vocab.runtime_module
        by_module = {module: (path, f) for path, module, f in files}
        if runtime not in by_module:
            return
        path, f = by_module[runtime]
        found = [(f"{runtime}.{n}", path, t) for n, t in sorted(f.get("tables", {}).items())]
        if not found:
            for qual in sorted(f.get("imports", {}).values()):
                module, _, name = qual.rpartition(".")
                tables = by_module.get(module, ("", {}))[1].get("tables", {})
                if name in tables:
                    found.append((qual, by_module[module][0], tables[name]))
        if len(found) > 1:  # several role-shaped constants: the one named for roles
            named = [t for t in found if "ROLE" in t[0].rpartition(".")[2]]
            found = named if len(named) == 1 else found
        if len(found) != 1:
            return
        name, where, t = found[0]
        roles = {
            r: None if e["ns"] is None else frozenset(n for n, _ in e["ns"])
            for r, e in t["roles"].items()
        }
        self.role_table = RoleTable(name, where, _span(t["span"]), roles)
        self._table_facts = (where, t)

    # -- who writes and reads leaves by name ---------------------------------------
    def _writers(self, files: list[tuple[str, str, dict[str, Any]]], decl: str | None) -> set[str]:
        runtime = self.program.vocab.runtime_module
        writers = {decl} if decl else set()
        for _, module, f in files:
            if module == runtime:
                writers.update(f.get("star_defs", ()))
        forwards = [
            (q, callees) for _, _, f in files for q, callees in f.get("forwards", {}).items()
        ]
        return _closure(writers, forwards)

    def _readers(self, files: list[tuple[str, str, dict[str, Any]]]) -> set[str]:
        handoffs = [
            (q, callees) for _, _, f in files for q, callees in f.get("handoffs", {}).items()
        ]
        readers = _closure({READER}, handoffs)
        # a simple name reads a leaf only where every function of that name
        # does (the call graph's functions: its modules' summaries')
        reading = {q for q, callees in handoffs if set(callees) & readers}
        for summary in summaries(self.program).values():
            for q in summary.funcs:
                short = q.rpartition(".")[2]
                if short in readers and short != READER and q not in reading:
                    readers.discard(short)
        return readers

    # -- one file's sites ----------------------------------------------------------
    def _kept(
        self, maybe: list[tuple[Site, str, str]], module: str, convention: Any
    ) -> Iterator[Site]:
        """The sites that count, of those the program's derived sets decide: a
        record read by its holder, a literal by its callee, a keyword by its
        callee (a declaration keyword when that is the declaration function)."""
        for site, how, name in maybe:
            if how == RECORD_READ:
                if name in _RECORDS or (
                    name.partition(":")[0] in ("name", "attr")
                    and convention.holds(name.partition(":")[2], module)
                ):
                    yield site
            elif how == LEAF_NAME:
                if name in self.readers:
                    yield site
            elif how == RETURNED:
                if name in self.returning:
                    yield site
            elif name in self.writers:
                if name == self.declaration_function:
                    site = Site(site.path, site.span, DECLARE, site.namespace, site.field, name)
                yield site

    def _with_role_entries(self, path: str, kept: list[Site]) -> list[Site]:
        """A file's sites, with the role table's entries where it holds the table."""
        if self._table_facts is None or self._table_facts[0] != path:
            return kept
        return sorted([*kept, *self._role_entries(path)], key=_by_place)

    def _role_entries(self, path: str) -> list[Site]:
        return [
            Site(path, _span(span), ROLE_ENTRY, ns, None, role)
            for role, e in sorted(self._table_facts[1]["roles"].items())
            for ns, span in e["ns"] or ()
        ]

    # -- queries -------------------------------------------------------------------
    def at(self, path: str, line: int, column: int) -> Site | None:
        """The innermost site whose span holds (line, column) (its end included:
        a cursor just after a name is on it)."""
        sites = self.by_path.get(path)
        if not sites:
            return None
        starts = self._starts.get(path)
        if starts is None:  # (made for the files asked about, not at each build)
            starts = self._starts[path] = [s.span[:2] for s in sites]
        hi = bisect.bisect_right(starts, (line, column))
        best: Site | None = None
        for s in reversed(sites[:hi]):
            l0, c0, l1, c1 = s.span
            if (l1, c1) < (line, column):
                if l0 < line - 20:  # spans are names and literals: none is that long
                    break
                continue
            if (l0, c0) <= (line, column) and (
                best is None or ((l0, c0) >= best.span[:2] and (l1, c1) <= best.span[2:])
            ):
                best = s
        return best

    def references(self, site: Site) -> list[Site]:
        """Every site naming what `site` names: a leaf's declaration, reads,
        literals and keywords, then the role table entries naming its top
        namespace; a namespace's class, accessor calls, hops and entries."""
        if site.field is not None:
            leaf = self.leaves.get(site.field)
            ns = leaf.namespace if leaf else site.namespace
            return [*self.by_field.get(site.field, ()), *(self.role_entries(ns) if ns else ())]
        if site.namespace is None:
            return []
        return list(self.by_namespace.get(site.namespace, ()))

    def role_entries(self, namespace: str) -> list[Site]:
        top = namespace.partition(".")[0]
        return [s for s in self.by_namespace.get(top, ()) if s.kind == ROLE_ENTRY]


_RECORDS = ("seed", "built", "annotated", "self")
_PATCHED = 8  # the most changed files an index is patched for; more: built whole


def _path_of(site: Site) -> str:
    return site.path


def _whole_parts(f: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(f.get(k) for k in _WHOLE_KEYS)


def _replace_sites(
    by: dict[str, list[Site]],
    path: str,
    old: list[Site],
    new: list[Site],
    key: Callable[[Site], str | None],
) -> None:
    """`path`'s `new` sites in place of its `old` ones in the lists of `by`
    (each list in path order, one file's sites in their order), the lists
    changed made anew (the last index's are left as they were)."""
    mine: dict[str, list[Site]] = {}
    for s in old:
        if (k := key(s)) is not None:
            mine.setdefault(k, [])
    for s in new:
        if (k := key(s)) is not None:
            mine.setdefault(k, []).append(s)
    for name, sites in mine.items():
        held = by.get(name, [])
        lo = bisect.bisect_left(held, path, key=_path_of)
        hi = bisect.bisect_right(held, path, lo=lo, key=_path_of)
        merged = [*held[:lo], *sites, *held[hi:]]
        if merged:
            by[name] = merged
        else:
            by.pop(name, None)  # holders that are records wherever they are


def _by_place(site: Site) -> tuple[Span, str]:
    return site.span, site.kind


def _same(old: Decided | None, new: Decided) -> bool:
    """Whether a file's sites were kept by what decides them now (the same
    convention: the one carried)."""
    return old is not None and old[:4] == new[:4] and old[4] is new[4]


def _sites(
    path: str, f: dict[str, Any], vocab: Any, place: dict[str, str]
) -> tuple[list[Site], list[tuple[Site, str, str]]]:
    """One file's sites: those that count whatever the program derives, and the
    candidates (site, what decides it, the holder or callee) it decides."""
    fixed: list[Site] = []
    maybe: list[tuple[Site, str, str]] = []
    for d in f.get("decls", ()):
        fixed.append(
            Site(path, _span(d["span"]), DECLARATION, place.get(d["name"]), d["name"], d["cls"])
        )
    for q, c in f.get("classes", {}).items():
        ns = c["ns"] or vocab.field_classes.get(q)
        if ns:
            fixed.append(Site(path, _span(c["span"]), NAMESPACE_CLASS, ns, None, q))
    for name, span in f.get("accessor_defs", {}).items():
        fixed.append(
            Site(path, _span(span), ACCESSOR_DEF, vocab.bag_accessors.get(name), None, name)
        )
    for b in f.get("bags", ()):
        if b["acc"] is not None:
            acc, span = b["acc"]
            fixed.append(Site(path, _span(span), ACCESSOR, vocab.bag_accessors.get(acc), None, acc))
        ns = b["base"]
        for name, span in reversed(b["hops"]):
            fixed.append(Site(path, _span(span), HOP, ns, None, name))
            ns = ns.rpartition(".")[0]
        if b.get("leaf"):
            name, span = b["leaf"]
            acc = b["acc"][0] if b["acc"] else ""
            fixed.append(Site(path, _span(span), BAG_READ, b["base"], name, acc))
    for r in f.get("records", ()):
        h = r["h"]
        holder = h["k"] if h["k"] in _RECORDS else f"{h['k']}:{h.get('n', '')}"
        site = Site(path, _span(r["span"]), RECORD_READ, place.get(r["f"]), r["f"], h["k"])
        maybe.append((site, RECORD_READ, holder))
    for lit in f.get("literals", ()):
        site = Site(
            path, _span(lit["span"]), LEAF_NAME, place.get(lit["f"]), lit["f"], lit["callee"]
        )
        maybe.append((site, LEAF_NAME, lit["callee"]))
    for r in f.get("returns", ()):
        site = Site(path, _span(r["span"]), RETURNED, place.get(r["f"]), r["f"], r["fn"])
        maybe.append((site, RETURNED, r["fn"]))
    for kw in f.get("keywords", ()):
        site = Site(path, _span(kw["span"]), OVERRIDE, place.get(kw["f"]), kw["f"], kw["callee"])
        maybe.append((site, OVERRIDE, kw["callee"]))
    return fixed, maybe


def _closure(seed: set[str], handing: Iterable[tuple[str, list[str]]]) -> set[str]:
    """`seed` and the simple names of the functions handing something on to one
    of them, transitively (dunders left out: nobody calls them by name)."""
    by_callee: dict[str, set[str]] = {}
    for q, callees in handing:
        short = q.rpartition(".")[2]
        if not short.startswith("__"):
            for c in callees:
                by_callee.setdefault(c, set()).add(short)
    out = set(seed)
    todo = sorted(seed)
    while todo:
        for short in sorted(by_callee.get(todo.pop(), ())):
            if short not in out:
                out.add(short)
                todo.append(short)
    return out
