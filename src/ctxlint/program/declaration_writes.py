"""Who writes the declaration stash, and where a declaration cannot take effect
(CTX104 asks).

Built on program.resolution (the stash, its declaration function, the pass
runners, registered callables and passes) and the call graph:

- `declaring`: the functions reaching the declaration function other than
  through a pass runner (a pass returning nothing is a validation, legal on
  the published record);
- `stray_stash_writes`: an append to, or assignment of, a stash slot outside
  the declaration function and the configured copy helpers;
- `assigning_overrides`: a registered callable or a pass assigning a record
  field instead of returning its declaration;
- `late_declarations`: a call reaching the declaration function after `publish`
  in a function that publishes (directly or through a helper of its module);
- `replaced_after`: a stash replacement the pipeline runs after a function,
  which drops what that function declares (CTX201's remedy names it).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ctxlint.facts.typed import Site
from ctxlint.program.call_model import EventKind
from ctxlint.program.calls import short
from ctxlint.program.core import Program
from ctxlint.program.reach import after_publish, backward, first_call, same_module_publishers
from ctxlint.program.record_conventions import copy_helper_scopes, in_helper
from ctxlint.program.resolution import Resolution, resolution
from ctxlint.program.resolution_schema import FieldAccess, StashWrite


@dataclass(frozen=True, slots=True)
class LateDeclaration:
    """A call in publishing function `scope` (shortened) reaching the declaration
    after its publish; `via`: the function reached first, shortened, unless it is
    the declaration function itself."""

    path: str
    scope: str
    snippet: str
    span: list[int]
    via: str | None


def declaring(res: Resolution) -> set[str]:
    """Functions reaching the declaration function other than through a pass runner."""
    if res.declaration is None:
        return set()
    runners = res.pass_runners
    return set(backward(res.graph, [res.declaration], through=lambda c, _: c not in runners))


def stray_stash_writes(program: Program) -> Iterator[tuple[str, StashWrite]]:
    """(path, write) of each stash write outside the declaration function."""
    res = resolution(program)
    helpers = copy_helper_scopes(program)
    for path, module, facts in res.files:
        for s in facts.stash:
            if s.how not in ("append", "assign") or res.slot(s.slot) not in res.stash:
                continue
            if s.fn != res.declaration and not in_helper(helpers, module, s.site.scope):
                yield path, s


def assigning_overrides(program: Program) -> Iterator[tuple[str, FieldAccess, str]]:
    """(path, write, "registered callable" or "pass") of each record field a
    registered callable or a pass assigns."""
    res = resolution(program)
    for path, _, facts in res.files:
        for w in facts.writes:
            if w.fn in res.registered:
                yield path, w, "registered callable"
            elif w.fn in res.passes:
                yield path, w, "pass"


def late_declarations(program: Program) -> Iterator[LateDeclaration]:
    """Each call reaching the declaration function after its caller publishes."""
    res = resolution(program)
    g = res.graph
    reaching = declaring(res)
    publishers = set(same_module_publishers(program))
    for q in sorted(publishers):
        fn = g.funcs[q]
        for event, targets in after_publish(g, q, publishers):
            if event.kind is not EventKind.CALL or event.site is None:
                continue
            hit = sorted(set(targets) & reaching)
            if hit:
                via = None if hit[0] == res.declaration else short(hit[0], fn.module)
                site = event.site
                yield LateDeclaration(fn.path, short(q, fn.module), site.snippet, site.span, via)


@dataclass(frozen=True, slots=True)
class LaterReplacement:
    """A stash replacement the pipeline runs after a function: what a declaration
    made in that function is dropped by (CTX201's remedy names it first)."""

    scope: str  # the replacing function, shortened
    path: str
    line: int

    def before(self) -> str:
        return (
            f"`{self.scope}` replaces the declarations after this runs ({self.path}:{self.line}, "
            "CTX104), so a declaration made here is dropped: that replacement must keep the earlier declarations first"
        )


def replaced_after(program: Program, q: str) -> LaterReplacement | None:
    """The first stash replacement (an assignment of the stash outside the
    declaration function) that the pipeline runs after `q`: where the call paths
    from the pipeline's entry to `q` and to the replacing function part, the
    replacing side's call comes later in that function's statement order
    (0.5.17's `__post_init__` runs `_handle_model_specific_adjustments`, which
    assigns `_resolved_overrides`, after `_handle_npu_backends` ran the NPU
    defaults)."""
    res = resolution(program)
    if q not in res.pipeline:
        return None
    mine, g = res.chain(q), res.graph
    found: list[tuple[int, LaterReplacement]] = []
    for path, s in stray_stash_writes(program):
        if s.how != "assign" or s.fn is None or s.fn not in res.pipeline:
            continue
        theirs = res.chain(s.fn)
        k = 0  # the first place the two call paths part
        while k < min(len(mine), len(theirs)) and mine[k] == theirs[k]:
            k += 1
        if k == 0 or k >= len(mine) or k >= len(theirs):
            continue  # other entries, or one runs inside the other: no order to tell
        at = first_call(g, mine[k - 1], theirs[k])
        if at > first_call(g, mine[k - 1], mine[k]):
            fn = g.funcs[s.fn]
            found.append((at, LaterReplacement(short(s.fn, fn.module), path, s.site.span[0])))
    return min(found, key=lambda f: (f[0], f[1].line))[1] if found else None


def dropped_after(program: Program, module: str, where: Site) -> str:
    """CTX201's remedy tail for a write at `where` inside resolution: the later
    replacement that would drop a declaration made there, or nothing."""
    later = replaced_after(program, f"{module}.{where.scope}")
    return f"; but {later.before()}" if later is not None else ""
