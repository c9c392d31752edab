"""What the resolution pipeline reads raw: a record field read directly, or a bag
read, where resolution has not decided yet (CTX103 asks).

Resolution writes nothing onto the record (a handler declares into the stash),
so inside the pipeline (program.resolution) a direct field read answers with
the raw input, and no bag exists before publish. Outside the views (the view
functions and the methods of the view classes) and the declaration function:

- `raw_field_reads`: a field read off a record holder (annotated with the
  record, a method's receiver in a record class, or a parameter the codebase's
  record convention names, program.record_conventions);
- `pipeline_bag_reads`: a bag accessor call (the vocabulary's derived bag
  accessors, never a `get_*` pattern), with the pipeline's call chain to it.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from dataclasses import dataclass

from ctxlint.program.call_model import EventKind
from ctxlint.program.calls import short
from ctxlint.program.core import Program
from ctxlint.program.reach import backward
from ctxlint.program.record_conventions import record_convention
from ctxlint.program.resolution import Resolution, resolution
from ctxlint.program.resolution_schema import FieldAccess
from ctxlint.program.view_handed import view_params


@dataclass(frozen=True, slots=True)
class PipelineBagRead:
    """A bag accessor call in pipeline function `scope` (shortened); `chain`: the
    calls from the pipeline's entry to it (`a -> b`)."""

    path: str
    scope: str
    snippet: str
    span: list[int]
    accessor: str
    chain: str


def _holds_record(program: Program, res: Resolution, module: str, read: FieldAccess) -> bool:
    if read.kind == "ann":
        return True
    if read.kind == "recv":
        return res.graph.funcs[read.fn].cls in program.vocab.record_classes
    return record_convention(program).holds(read.holder, module)


def views(res: Resolution) -> set[str]:
    """The view functions, and the methods of the view classes."""
    g = res.graph
    return res.view_functions | {q for q, fn in g.funcs.items() if fn.cls in res.view_classes}


def undeclared_prefixes(res: Resolution, methods: bool = False) -> dict[str, int]:
    """Per `__post_init__` entry: how many of its calls run before the first that
    may declare. The record is being built there, so nothing can have declared on
    it yet: a read before that call answers what a view would (the stash is
    empty). A method entry has no such prefix: a caller may declare before it
    runs (a launcher before `resolve_once`), or it runs after resolution; with
    `methods`, the same count per method entry instead (`early_in_method_entry`)."""
    g = res.graph
    if res.declaration is None:
        return {}
    reach = set(backward(g, [res.declaration]))
    tops = {m.partition(".")[0] for m in g.modules}

    def may_declare(callee: str, fn: str) -> bool:
        if callee == "field":
            return False
        if callee.startswith("self:"):
            found = g.method(g.funcs[fn].cls or "", callee[5:])
            return not found or any(q in reach for q in found)
        found = g.resolve_global(callee) if callee != "?" else []
        if found:
            return any(q in reach for q in found)
        here = g.funcs[fn].module + "."
        if callee.startswith(here) and _builtin(callee[len(here) :].partition(".")[0]):
            return False  # `getattr(...)`, `RuntimeError(...)`, `object.__setattr__(...)`
        return callee == "?" or callee.partition(".")[0] in tops  # outside: cannot

    out: dict[str, int] = {}
    for _, _, facts in res.files:
        for q, calls in facts.record_calls.items():
            if q in res.entries and q.endswith(".__post_init__") != methods and q in g.funcs:
                out[q] = next((i for i, c in enumerate(calls) if may_declare(c, q)), len(calls))
    for q in res.entries:  # an entry making no call declares nothing itself
        if q.endswith(".__post_init__") != methods and q in g.funcs:
            out.setdefault(q, 0)
    return out


def _builtin(name: str) -> bool:
    return hasattr(builtins, name)


def _callees(res: Resolution, fn: str, callee: str) -> list[str]:
    """The functions one of a record method's calls runs (as may_declare reads it)."""
    g = res.graph
    if callee.startswith("self:"):
        return g.method(g.funcs[fn].cls or "", callee[5:])
    return g.resolve_global(callee) if callee not in ("?", "field") else []


def undeclared_callees(res: Resolution) -> frozenset[str]:
    """The functions that run only inside a `__post_init__` entry's undeclared
    prefix: reached through its calls before the first that may declare
    (undeclared_prefixes), and from nowhere else, neither called nor handed by
    name by a function outside this set (nor by an entry after its prefix).
    None of them reaches the declaration function, so the stash is as empty
    in them as in the prefix itself: a view answers their reads the same."""
    g = res.graph
    prefixes = undeclared_prefixes(res)
    early: set[str] = set()
    late: set[str] = set()
    for _, _, facts in res.files:
        for q, calls in facts.record_calls.items():
            if q in prefixes:
                for i, c in enumerate(calls):
                    (early if i < prefixes[q] else late).update(_callees(res, q, c))
    if not early:
        return frozenset()
    declaring = set(backward(g, [res.declaration])) if res.declaration else set()
    handers: dict[str, set[str]] = {}
    for q in res.pipeline:
        for t in res.handed(q):
            handers.setdefault(t, set()).add(q)
    found, todo = set(), sorted(q for q in early if q in g.funcs)
    while todo:  # what they run: calls, and functions handed by name (as the pipeline)
        q = todo.pop()
        if q not in found:
            found.add(q)
            todo += [t for ts in g.edges.get(q, ()) for t in ts] + sorted(res.handed(q))
    found -= late | declaring | set(prefixes)
    changed = True
    while changed:  # drop a function with a way in from outside the set
        changed = False
        for q in sorted(found):
            ins = g.callers.get(q, set()) | handers.get(q, set())
            if any(c not in found and not (c in prefixes and q in early) for c in ins):
                found.discard(q)
                changed = True
    return frozenset(found)


def raw_field_reads(program: Program) -> Iterator[tuple[str, FieldAccess]]:
    """(path, read) of each record field read directly in the pipeline, but for a
    read in a `__post_init__` entry before its first call that may declare. A
    read in a function only that prefix runs is here too (it is resolution's,
    not a handed read CTX102 would take); `reported_raw_reads` leaves it out."""
    res = resolution(program)
    skip = views(res) | {res.declaration}
    prefixes = undeclared_prefixes(res)
    for path, module, facts in res.files:
        for r in facts.reads:
            if r.fn in res.pipeline and r.fn not in skip:
                if 0 <= r.calls_before <= prefixes.get(r.fn, -1):
                    continue  # nothing has declared yet: a view answers the same
                if _holds_record(program, res, module, r):
                    yield path, r


def reported_raw_reads(program: Program) -> Iterator[tuple[str, FieldAccess]]:
    """The raw reads CTX103 reports: raw_field_reads, less those in a function
    only the undeclared prefix runs (undeclared_callees: nothing has declared
    there yet, so a view answers the same), and those off a parameter every
    call from the pipeline hands a view (program.view_handed: it reads the
    view, as the design's `DllmConfig.from_server_args`)."""
    early = undeclared_callees(resolution(program))
    viewed = view_params(program)
    return (
        (path, r)
        for path, r in raw_field_reads(program)
        if r.fn not in early and r.holder not in viewed.get(r.fn, ())
    )


def pipeline_bag_reads(program: Program) -> Iterator[PipelineBagRead]:
    """Each bag accessor call in the pipeline, by function."""
    res = resolution(program)
    g = res.graph
    for q in sorted(res.pipeline):
        fn = g.funcs[q]
        for e in fn.events:
            if e.kind is not EventKind.READ or e.site is None:
                continue
            chain = " -> ".join(short(x, g.funcs[x].module) for x in res.chain(q))
            name = short(q, fn.module)
            yield PipelineBagRead(
                fn.path, name, e.site.snippet, e.site.span, e.accessor or "", chain
            )


def raw_read_misses(program: Program, r: FieldAccess) -> str:
    """Where a reported raw read is and what it misses, for CTX103's message. In
    a method entry before its first call that may declare (0.5.23's
    `ServerArgs.resolve_once` reading `device` before it runs the pipeline),
    only a declaration made on the record before the method ran (a launcher's)
    can have moved the field. Whether one does is not derived (a declaration
    spreading a dict, `**detected`, names keys the facts do not hold), so the
    read stays reported, and the message names that case."""
    res = resolution(program)
    prefixes = program.memo(
        "pipeline-reads:method-prefixes", lambda: undeclared_prefixes(res, True)
    )
    if 0 <= r.calls_before <= prefixes.get(r.fn, -1):
        entry = r.fn.rpartition(".")[2]
        return f"in `{entry}` before it declares is the raw input, missing a declaration made before it ran"
    return "inside the resolution pipeline is the raw input, not resolution's decision"
