"""Which process role a function runs under, from the call graph.

A process entry is a function whose `publish(...)` call names a literal
`role=`; a caller of a publisher (that does not publish itself) runs on under
the publisher's role after the call. A role's reach is everything the events
after its entries' publish run, closed over calls. A process start is not a
call (the call graph keeps starts apart), so a spawned worker counts under the
role it publishes itself. This is CTX302's derivation of the role reach, less
the callables handed to a call, kept here so rules that ask "which process does
this run in" share it; `class_process` answers which process runs a class's
methods (CTX303's manager).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from ctxlint.program.call_model import EventKind
from ctxlint.program.calls import call_graph
from ctxlint.program.core import Program

PUBLISH = EventKind.PUBLISH


def role_reach(program: Program) -> dict[str, frozenset[str]]:
    """role -> the functions its process entries reach (memoised per run)."""
    return program.memo("process_roles", lambda: _reach(program))


@dataclass(frozen=True, slots=True)
class ClassProcess:
    """The process that runs some classes' methods."""

    classes: frozenset[str]  # the classes and those in their MROs (their mixins)
    roles: frozenset[str]  # the roles that reach a method of one of the classes
    only: frozenset[str]  # the functions those roles reach and no other role does


def class_process(program: Program, classes: Iterable[str]) -> ClassProcess:
    g = call_graph(program)
    given = set(classes)
    reach = role_reach(program)
    methods = {q for q, fn in g.funcs.items() if fn.cls in given}
    roles = {r for r, fns in reach.items() if fns & methods}
    mine = set().union(*(reach[r] for r in roles)) if roles else set()
    others = set().union(*(fns for r, fns in reach.items() if r not in roles))
    mro = frozenset(c for cls in given for c in g.mro(cls))
    return ClassProcess(mro, frozenset(roles), frozenset(mine - others))


def _reach(program: Program) -> dict[str, frozenset[str]]:
    g = call_graph(program)
    entries: dict[str, list[tuple[str, int]]] = {}  # role -> (function, event index)
    roles_of: dict[str, set[str]] = {}
    publishing = g.doing(PUBLISH)
    for q in sorted(publishing):
        for i, e in enumerate(g.funcs[q].events):
            if e.kind is PUBLISH and e.role is not None:
                entries.setdefault(e.role, []).append((q, i))
                roles_of.setdefault(q, set()).add(e.role)
    todo = deque(sorted(roles_of))
    while todo:
        q = todo.popleft()
        for c in sorted(g.callers.get(q, ())):
            if c in publishing:
                continue
            for i, targets in enumerate(g.edges[c]):
                if q in targets:
                    for role in sorted(roles_of[q] - roles_of.get(c, set())):
                        entries.setdefault(role, []).append((c, i))
                        roles_of.setdefault(c, set()).add(role)
                        todo.append(c)
                    break
    out: dict[str, frozenset[str]] = {}
    for role, starts in sorted(entries.items()):
        seen: set[str] = set()
        queue: deque[str] = deque()
        for q, after in starts:
            seen.add(q)
            for targets in g.edges[q][after + 1 :]:
                queue.extend(t for t in targets if t not in seen)
        while queue:
            q = queue.popleft()
            if q in seen:
                continue
            seen.add(q)
            for targets in g.edges[q]:
                queue.extend(t for t in targets if t not in seen)
        out[role] = frozenset(seen)
    return out
