"""Where a publish precedes: the functions a process may run after it publishes.

A bag accessor answers only once its process has published, so a hint that
sends a read to its bag is right only where a publish comes first. From every
function that publishes (directly, or by calling one that does, in any module),
the calls its body makes after the publishing statement are followed, with
everything they run: calls, names they reference, and the methods of a class
they build or name (an object runs its methods wherever it is handed, as
CTX301's reach from publishers counts them). A function that has callers and
that none of that reaches has no publish before it on any path the call graph
knows: a launcher that starts the server in another process, a benchmark's
helper. One with no known caller at all (a hook run by dispatch) is not
claimed either way, and neither is a tree that publishes nowhere (a legacy
codebase before its migration: the bag is where its reads are going).
"""

from __future__ import annotations

from collections.abc import Iterator

from ctxlint.program.call_model import EventKind
from ctxlint.program.calls import call_graph
from ctxlint.program.core import Program
from ctxlint.program.reach import backward, forward, steps

KEY = "published-after"


def published_after(program: Program) -> frozenset[str]:
    """Functions that may run after their process publishes (memoized per program)."""
    return program.memo(KEY, lambda: _build(program))


def no_publish_before(program: Program, q: str) -> bool:
    """Whether `q` (module-qualified) runs only where no publish came first: no
    publishing function reaches it, and each of its caller chains starts at
    import-time code."""
    g = call_graph(program)
    if not g.doing(EventKind.PUBLISH) or q not in g.funcs or not g.callers.get(q):
        return False
    if q in published_after(program):
        return False
    # every way in must be known: each caller chain ends at a function that
    # import-time code runs (a script's `__main__` block), not at one with no
    # caller the graph sees (a call it did not resolve, a hook run by dispatch)
    roots = [c for c in backward(g, [q]) if not g.callers.get(c)]
    return bool(roots) and all(r in g.module_refs.get(g.funcs[r].module, ()) for r in roots)


def _build(program: Program) -> frozenset[str]:
    g = call_graph(program)
    publishers = set(backward(g, g.doing(EventKind.PUBLISH)))
    seeds: list[str] = []
    for q in sorted(publishers):
        after = False
        for event, targets in steps(g, q):
            if after:
                seeds.extend(targets)
            elif event.kind is EventKind.PUBLISH or (targets and set(targets) <= publishers):
                after = True  # the statements below run on the published bags
    methods: dict[str, list[str]] = {}
    for q, fn in sorted(g.funcs.items()):
        if fn.cls is not None:
            methods.setdefault(fn.cls, []).append(q)

    def instance(cls: str) -> Iterator[str]:
        for c in g.mro(cls):
            yield from methods.get(c, ())

    def more(q: str) -> Iterator[str]:
        fn = g.funcs[q]
        if fn.cls is not None and q == f"{fn.cls}.__init__":
            yield from instance(fn.cls)
        for name in fn.refs:
            cls = g.resolve_class(name)
            if cls is not None:
                yield from instance(cls)
            yield from g.resolve_global(name)

    return frozenset(forward(g, sorted(set(seeds)), more=more))
