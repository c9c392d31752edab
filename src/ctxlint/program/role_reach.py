"""Which bag reads each role's process reaches: the role table the runtime
declares, the process entries per role (each past its publish, and callers of a
publisher running on under its role), and a breadth-first reach from them along
calls and callables handed on, each read with its shortest call path. CTX302
checks the reads against the table; its visitor gathers the tables and the
handed callables (kept under its id): `RoleTableVisitor`, here.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import MODULE_SCOPE, FileContext
from ctxlint.facts.typed import Span
from ctxlint.facts.visitor import FileVisitor
from ctxlint.program.binding_values import Bound
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.call_model import Event, EventKind, SelfMethod
from ctxlint.program.calls import call_graph, short
from ctxlint.program.core import Program
from ctxlint.program.reach import Walk, called_names, first_call, module_tokens, spread_to_callers
from ctxlint.program.role_table import role_table_literal

KEY = "CTX302"  # the rule whose facts these are
PUBLISH, READ = EventKind.PUBLISH, EventKind.READ


@dataclass(frozen=True, slots=True)
class RoleTable:
    roles: dict[str, list[str] | None]  # role -> its namespaces (None: all)
    span: Span


@dataclass(frozen=True, slots=True)
class RoleFacts:
    tables: dict[str, RoleTable]  # module-level name -> the table it holds
    # function -> the callables it hands: ("s", method of self) or ("g", global)
    handed: dict[str, list[tuple[str, str]]]
    imports: dict[str, str] = field(default_factory=dict)  # the runtime's imported constants


# the module-level bindings a role table is read from (`ROLES = {...}`, annotated or not)
TABLE_KINDS = frozenset(("assignment", "annotated assignment"))


class RoleTableVisitor(FileVisitor):
    """Module-level role tables; for the runtime module, its imports too (the
    table may be defined elsewhere and imported there); per function, the
    callables it hands to a call as an argument (`Thread(target=self.loop)`,
    `executor.submit(fn)`, a callback): they run in the same process."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        assert ctx.vocab is not None
        self.runtime = ctx.module == ctx.vocab.runtime_module
        # module names -> the role table they hold, asked of the binding model
        self.tables = ctx.parts[BINDINGS].track(self._holds_table)
        self.handed: dict[str, list[tuple[str, str]]] = {}

    def visit_Call(self, node: cst.Call) -> None:
        scope = self.ctx.scope
        if scope.kind != "function":
            return
        out = self.handed.setdefault(f"{self.ctx.module}.{scope.qualname}", [])
        for arg in node.args:
            value = arg.value
            if (
                isinstance(value, cst.Attribute)
                and isinstance(value.value, cst.Name)
                and scope.self_name is not None
                and value.value.value == scope.self_name
            ):
                item = ("s", value.attr.value)
            elif isinstance(value, (cst.Name, cst.Attribute)):
                name = self.ctx.resolve(value)
                if name is None:
                    continue
                item = ("g", name)
            else:
                continue
            if item not in out:
                out.append(item)

    def _holds_table(self, bound: Bound, before: Any) -> RoleTable | None:
        """The role table a module-level name is assigned, if any."""
        value, target = bound.value, bound.target
        if len(self.ctx.scopes) != 1 or bound.kind not in TABLE_KINDS or value is None:
            return None
        table = role_table_literal(value)
        if table is None or target is None:
            return None
        return RoleTable(table, self.ctx.anchor(target))  # type: ignore[arg-type]

    def finish(self) -> RoleFacts | None:
        # a name that can name no function of the program (a local) is not kept
        may_name = self.ctx.may_name_program_code
        handed = {
            q: kept
            for q, h in self.handed.items()
            if (kept := [i for i in h if i[0] == "s" or may_name(i[1])])
        }
        module = self.tables.names.get(MODULE_SCOPE, {})
        tables = {name: table for name, table in module.items() if table is not None}
        if not tables and not self.runtime and not handed:
            return None
        # the runtime's imported constants: where a table defined elsewhere comes from
        imports = {k: v for k, v in self.ctx.imports.items() if k.isupper()} if self.runtime else {}
        return RoleFacts(tables, handed, imports)


@dataclass(frozen=True)
class Table:
    name: str  # qualified
    path: str
    line: int
    roles: dict[str, frozenset[str] | None]

    def restricted(self) -> list[str]:
        return sorted(r for r, s in self.roles.items() if s is not None)


@dataclass(frozen=True)
class Entry:
    role: str
    qual: str  # the function that runs on under the role
    after: int  # index of the event (the publish, or the call of a publisher) it runs after
    path: str
    line: int

    def text(self) -> str:
        """`role: function (path:line)`, as CTX302's sets list an entry."""
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{self.role}: {self.qual} ({where})"


@dataclass(frozen=True)
class Read:
    role: str
    namespace: str
    accessor: str
    qual: str  # the reading function
    event: Event
    chain: tuple[str, ...]  # qualnames from the entry to the reading function


def _facts(program: Program) -> Iterator[tuple[str, str, RoleFacts]]:
    return program.typed_facts(KEY, RoleFacts)


def imported_table_modules(program: Program) -> set[str]:
    """Modules the runtime module imports constants from, while no table is known."""
    runtime = program.vocab.runtime_module
    for _, module, facts in _facts(program):
        if module == runtime and not facts.tables:
            return {q.rpartition(".")[0] for q in facts.imports.values()}
    return set()


def find_table(program: Program) -> tuple[Table | None, str]:
    """The role table, or None and why not."""
    runtime = program.vocab.runtime_module
    by_module = {module: (path, facts) for path, module, facts in _facts(program)}
    if runtime not in by_module:
        return None, f"the runtime module {runtime} was not parsed"
    path, facts = by_module[runtime]
    found = [(f"{runtime}.{n}", path, t) for n, t in sorted(facts.tables.items())]
    if not found:
        for qual in sorted(facts.imports.values()):
            module, _, name = qual.rpartition(".")
            if module in by_module and name in by_module[module][1].tables:
                where = by_module[module][0]
                found.append((qual, where, by_module[module][1].tables[name]))
    if len(found) > 1:  # several role-shaped constants: the one named for roles
        named = [f for f in found if "ROLE" in f[0].rpartition(".")[2]]
        found = named if len(named) == 1 else found
    if not found:
        return None, (
            f"{runtime} defines or imports no mapping from role names to a set of "
            "namespaces or None"
        )
    if len(found) > 1:
        return None, f"{runtime} has several role tables: {', '.join(f[0] for f in found)}"
    name, where, t = found[0]
    roles = {r: None if s is None else frozenset(s) for r, s in t.roles.items()}
    return Table(name, where, t.span[0], roles), ""


class Analysis:
    """The table, the entries per role and the static reach (once per Program)."""

    def __init__(self, program: Program) -> None:
        self.vocab = program.vocab
        self.table, self.why = find_table(program)
        self.graph = g = call_graph(program)
        self.entries: list[Entry] = []
        self.unknown: list[tuple[str, Event]] = []  # (function, publish) of an unknown role
        self.computed: list[str] = []  # functions publishing with a non-literal role
        roles_of: dict[str, set[str]] = {}  # function -> roles it publishes under
        publishing = g.doing(PUBLISH)
        for q in sorted(publishing):
            fn = g.funcs[q]
            for i, e in enumerate(fn.events):
                if e.kind is not PUBLISH:
                    continue
                if e.role is None:
                    self.computed.append(f"{q} ({fn.path}:{e.line})")
                    continue
                self.entries.append(Entry(e.role, q, i, fn.path, e.line))
                roles_of.setdefault(q, set()).add(e.role)
                if self.table is not None and e.role not in self.table.roles:
                    self.unknown.append((q, e))
        # a caller of a publisher runs on under the publisher's role after its
        # first call of it (one that publishes itself keeps its own role)
        for c, q, role in spread_to_callers(g, roles_of, lambda c, _: c not in publishing):
            fn = g.funcs[c]
            i = first_call(g, c, q)
            self.entries.append(Entry(role, c, i, fn.path, fn.events[i].line))
        # callables handed to a call run in this process; a process start's run in
        # another, under the role it publishes
        started = {t for _, s in g.starts for t in g.start_targets(s)}
        self.handed: dict[str, list[str]] = {}
        for _, _, facts in _facts(program):
            for q, items in facts.handed.items():
                fn = g.funcs.get(q)
                if fn is None:
                    continue
                found: list[str] = []
                for kind, name in items:
                    if kind == "s":
                        found += g.targets(fn, [SelfMethod(name)])
                    elif name in g.funcs:  # a function, not a class or a value
                        found.append(name)
                found = [t for t in dict.fromkeys(found) if t not in started]
                if found:
                    self.handed[q] = found
        self.reads: dict[str, list[Read]] = {}
        self.reached: dict[str, set[str]] = {}
        for role in sorted({e.role for e in self.entries}):
            self._walk(role, sorted((e for e in self.entries if e.role == role), key=_order))

    def _walk(self, role: str, entries: list[Entry]) -> None:
        """Breadth first from the role's entries (each past its publish): every
        read reached, by the shortest call path; a callable handed on runs too."""
        bags = self.vocab.bag_accessors
        reads: list[Read] = []

        def read(q: str, event: Event) -> None:
            if event.kind is READ and event.accessor in bags:
                chain = tuple(walk.path(q))
                reads.append(Read(role, bags[event.accessor], event.accessor, q, event, chain))

        walk = Walk(self.graph, more=lambda q: self.handed.get(q, []), on_event=read)
        for e in entries:
            walk.start(e.qual, after=e.after)
        self.reached[role] = set(walk.run())
        self.reads[role] = reads

    def reach(self) -> dict[str, dict[str, Read]]:
        """role -> namespace -> its first read (the shortest path)."""
        out: dict[str, dict[str, Read]] = {}
        for role, reads in sorted(self.reads.items()):
            per = out.setdefault(role, {})
            for r in reads:
                per.setdefault(r.namespace, r)
        return out

    def outside(self) -> list[Read]:
        """Reads of restricted roles outside their set, one per role and read site."""
        if self.table is None:
            return []
        out: list[Read] = []
        seen: set[tuple[str, str, int, str]] = set()
        for role in self.table.restricted():
            allowed = self.table.roles[role] or frozenset()
            for r in self.reads.get(role, ()):
                key = (role, r.qual, r.event.line, r.event.site.snippet if r.event.site else "")
                if r.namespace not in allowed and key not in seen:
                    seen.add(key)
                    out.append(r)
        return out

    def wanted_tokens(self) -> set[str]:
        """Modules of unresolved calls on the restricted roles' paths (a helper in a
        file no other token selected would hide a read)."""
        if self.table is None:
            return set()
        g = self.graph
        names = [
            name
            for role in self.table.restricted()
            for q in sorted(self.reached.get(role, ()))
            for name in called_names(g.funcs[q].events)
        ]
        return module_tokens(g, names)


def _order(e: Entry) -> tuple[str, int, str]:
    return (e.path, e.line, e.qual)


def analysis(program: Program) -> Analysis:
    return program.memo(KEY, lambda: Analysis(program))


def path_text(a: Analysis, r: Read, where: bool = True) -> str:
    """`entry -> helper -> get_x()`, and where the read is (a finding is there already)."""
    names = [short(q, a.graph.funcs[q].module) for q in r.chain]
    text = " -> ".join([*names, f"{r.accessor}()"])
    return f"{text} ({a.graph.funcs[r.qual].path}:{r.event.line})" if where else text
