"""Which parameters of pipeline functions hold a view, not the record: the
helpers and factories the resolution pipeline only ever hands a view.

The design keeps two shapes parameter-form on purpose: "a helper the
resolution pipeline calls with a resolved_view ..., and a factory whose
contract is build X from the record you are handed" (SGLang 0.5.17's
`DllmConfig.from_server_args`, called in the pipeline only by the pass
`_dllm_page_size(view)`). A read off such a parameter reads the view, so it is
no raw read of the record (CTX103).

Derived, as a least fixed point over the call graph:

- the first parameter of a function the pipeline hands by name only to
  functions that call their parameter with a view: a pass runner's passes, and
  0.5.17's passes, handed to the declaration function itself
  (`run_post_process_pass(self, _dllm_page_size)`, which calls
  `fn(ResolvedView(...))`), imported inside the method that hands them or not;
- a parameter of a pipeline function holds a view where every call into the
  function from the pipeline hands it one: the result of a view function
  (`f(resolved_view(self))`), a local every binding of which is one, or a
  parameter of the caller that holds a view. A function the pipeline hands
  by name elsewhere (no call site to read) is not claimed, nor one with no call
  from the pipeline at all (an entry, a registered override).

The values are spelled as the call facts spell them (program.flag_facts: `c:`
a call's result, `n:` a name of the caller, `^` a parameter's handed value).
"""

from __future__ import annotations

from ctxlint.program.call_binding import bound
from ctxlint.program.call_model import Event
from ctxlint.program.calls import Func
from ctxlint.program.core import Program
from ctxlint.program.flag_facts import HANDED
from ctxlint.program.resolution import Resolution, resolution

KEY = "view-handed"

Held = dict[str, frozenset[str]]  # function -> its parameters holding a view


def view_params(program: Program) -> Held:
    """The run's answer, built once."""
    return program.memo(KEY, lambda: _build(resolution(program)))


def view_params_shown(program: Program) -> dict[str, list[str]]:
    """The derived set as `ctxlint sets` shows it."""
    return {q: sorted(ps) for q, ps in sorted(view_params(program).items())}


def _view_passes(res: Resolution) -> set[str]:
    """Functions the pipeline hands by name, and only to functions that call a
    parameter with a view (program.resolution's `param_calls`), the
    declaration function included."""
    g = res.graph
    callers = {
        q
        for _, _, f in res.files
        for q, handed in f.param_calls.items()
        if any(res.is_view(n) for n in handed if n != "?")
    }
    ok: set[str] = set()
    other: set[str] = set()
    for _, _, f in res.files:
        for h in f.handed:
            if h.fn not in res.pipeline:
                continue
            to_view = bool(set(g.resolve_global(h.callee)) & callers)
            for r in h.refs:
                for t in g.resolve_global(r) if g.resolve_class(r) is None else ():
                    (ok if to_view else other).add(t)
    return (ok | res.passes) - other


def _build(res: Resolution) -> Held:
    g = res.graph
    held: dict[str, set[str]] = {}
    passes = {q for q in _view_passes(res) if q in g.funcs and g.funcs[q].params}
    handed_by_name = {t for q in res.pipeline for t in res.handed(q)} - passes
    calls: dict[str, list[tuple[str, Event]]] = {}  # callee -> the pipeline's calls into it
    for c in sorted(res.pipeline):
        for event, targets in zip(g.funcs[c].events, g.edges[c], strict=True):
            for t in targets:
                if t in res.pipeline and t not in handed_by_name:
                    calls.setdefault(t, []).append((c, event))
    changed = True
    while changed:
        changed = False
        for q in sorted(set(calls) | passes):
            fn, into = g.funcs[q], calls.get(q, [])
            for p in fn.params:
                # a pass's first parameter: its runner hands a view (and so must
                # every direct call); any other: every call from the pipeline
                if p in held.get(q, ()) or not (into or (q in passes and p == fn.params[0])):
                    continue
                if all(_hands_view(res, held, c, e, fn, p) for c, e in into):
                    held.setdefault(q, set()).add(p)
                    changed = True
    return {q: frozenset(ps) for q, ps in held.items()}


def _hands_view(
    res: Resolution, held: dict[str, set[str]], c: str, e: Event, fn: Func, p: str
) -> bool:
    """The call `e` of `c` hands parameter `p` of `fn` a view."""
    value = dict(bound(e, fn)).get(p)
    return value is not None and _is_view(res, held, c, value, frozenset())


def _is_view(
    res: Resolution, held: dict[str, set[str]], c: str, value: str, seen: frozenset[str]
) -> bool:
    if value.startswith("c:"):
        return res.is_view(value[2:])
    if not value.startswith("n:") or value in seen:
        return False
    name, fn = value[2:], res.graph.funcs[c]
    values = fn.flags.names.get(name, ()) if fn.flags is not None else ()
    if not values:  # a parameter the facts kept no binding for
        return name in fn.params and name in held.get(c, ())
    return all(
        name in held.get(c, ()) if v == HANDED else _is_view(res, held, c, v, seen | {value})
        for v in values
    )
