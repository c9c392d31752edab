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
  in a function that publishes (directly or through a helper of its module).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ctxlint.program.call_model import EventKind
from ctxlint.program.calls import short
from ctxlint.program.core import Program
from ctxlint.program.reach import after_publish, backward, same_module_publishers
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
