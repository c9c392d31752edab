"""CTX302 role-namespace: a bag read outside the namespace set of the role its process
publishes under.

Everything is derived from the code:

- the **role table**: the runtime module's module-level mapping from role names
  (string keys) to a set of namespaces or `None` (the full tree), defined there
  or imported from another module (SGLang's and ctxrt's `ROLE_NAMESPACE_SETS`;
  `MappingProxyType({...})` and `frozenset({...})` spellings included);
- each **entry's role**: the literal `role=` of a `publish` call (the call
  graph's PUBLISH events carry it); a function that publishes through a helper
  (the helper's caller, in any module) continues under the helper's role after
  the call;
- the **static reach** per role: from each entry, the events after its publish,
  and everything their calls run, over the program's call graph (the one CTX301
  walks; a process start is not a call, so a spawned worker counts under its own
  role).

A bag read reached from a restricted role's entry (a set in the table) whose
namespace is not in the set is reported at the read, with the call path from
the entry; a `publish` whose literal role is not a key of the table is reported
at the publish. `ctxlint roles` prints the reach per role and compares it with
the runtime's record-mode audit.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.calls import short
from ctxlint.program.core import Program
from ctxlint.program.role_reach import (
    KEY,
    RoleTableVisitor,
    analysis,
    imported_table_modules,
    path_text,
)
from ctxlint.program.role_table import FULL, set_text
from ctxlint.program.rule import RawFinding, Rule

ID = KEY


class RoleNamespace(Rule):
    id = ID
    name = "role-namespace"
    summary = (
        "A bag read reachable from a restricted role's process entry outside the role's "
        "namespace set, and a publish under a role the role table does not declare"
    )
    visitor = RoleTableVisitor
    needs = (BAGS,)
    requires = ("calls", "classes", "records", BINDINGS)  # the call graph, its class questions

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return set(vocab.bag_accessors) | {"publish", f"module:{vocab.runtime_module}"}

    def more_tokens(self, program: Program) -> set[str]:
        out = {f"module:{m}" for m in imported_table_modules(program)}
        return out | analysis(program).wanted_tokens()

    def derive(self, program: Program) -> dict[str, Any]:
        a = analysis(program)
        if a.table is None:  # the roles published under say whether one was expected
            roles = sorted({e.role for e in a.entries})
            return {"role table": f"(none: {a.why})", "roles published": roles}
        reach = a.reach()
        entries = [e.text() for e in sorted(a.entries, key=lambda e: (e.role, e.path, e.line))]
        return {
            "role table": {
                r: FULL if s is None else sorted(s) for r, s in sorted(a.table.roles.items())
            },
            "role table source": f"{a.table.name} ({a.table.path}:{a.table.line})",
            "restricted roles": a.table.restricted(),
            "role entries": entries,
            "roles without an entry": sorted(set(a.table.roles) - {e.role for e in a.entries}),
            "publishes with a non-literal role": sorted(a.computed),
            "reach": {role: sorted(per) for role, per in reach.items()},
            "reach paths": {
                f"{role} {ns}": path_text(a, r)
                for role, per in reach.items()
                for ns, r in sorted(per.items())
            },
        }

    def partial(self, sets: dict[str, Any]) -> str | None:
        # Processes publish under roles but no table declares them: nothing to
        # check their reads against. (No role anywhere is a tree before roles,
        # and a restricted role that no entry publishes is listed in the sets.)
        table = sets.get("role table")
        if isinstance(table, str) and sets.get("roles published"):
            return f"no role table: {table[7:-1]}"
        return None

    def check(self, program: Program) -> Iterable[RawFinding]:
        a = analysis(program)
        if a.table is None:
            return
        known = ", ".join(sorted(a.table.roles))
        for q, e in a.unknown:
            fn = a.graph.funcs[q]
            assert e.site is not None  # every publish is anchored
            yield RawFinding(
                ID,
                fn.path,
                short(q, fn.module),
                e.site.snippet,
                e.site.span,
                f"publish under role {e.role!r}, which {a.table.name.rpartition('.')[2]} does "
                "not declare: publish under one of its roles, or add this one to the table",
                f"its roles: {known}; a role added to the table comes with its namespace set",
            )
        for r in a.outside():
            fn = a.graph.funcs[r.qual]
            if r.event.site is None:
                continue  # a read in a function no reading helper anchors: not expected
            allowed = a.table.roles[r.role]
            path = path_text(a, r, where=False)  # the details: the message names its entry
            yield RawFinding(
                ID,
                fn.path,
                short(r.qual, fn.module),
                r.event.site.snippet,
                r.event.site.span,
                f"role {r.role!r} reads namespace {r.namespace!r} outside its set "
                f"{set_text(allowed)} (from {path.partition(' -> ')[0]})",
                f"{path}\nUnder the runtime's enforce mode this read "
                "aborts the process. Answer from the role's own namespaces, or widen the set "
                "once the role's record-mode audit shows the read.",
                data={"role": r.role, "namespace": r.namespace},
            )


RULE = RoleNamespace()
