"""CTX104 declaration-writer: the declaration stash has one writer.

Everything that decides configuration goes through the declaration function
(derived, program.resolution: the function appending to the stash a view reads,
through its parameter; SGLang's `declare_resolution`). Reported:

- a write to the stash anywhere else (an append, extend or `+=` on it, or an
  assignment of anything but a fresh or copied stash);
- a declaration made on the published record: a call reaching the declaration
  function after `publish` in a function that publishes (directly or through a
  helper of its module). The stash is projected at publish and never again, so
  the declaration is a silent no-op (CTX301's mirror image). A call reaching it
  only through the pass runner is not reported: a pass returning nothing is a
  validation, legal on the published record;
- a registered model-override callable or a pass handed to the pass runner that
  assigns a record field (`cfg.x = ...`, `setattr(cfg, "x", ...)`) instead of
  returning its declaration.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.call_model import EventKind
from ctxlint.program.calls import short
from ctxlint.program.core import Program
from ctxlint.program.reach import after_publish, backward, same_module_publishers
from ctxlint.program.record_conventions import copy_helper_scopes, in_helper
from ctxlint.program.resolution import KEY, Resolution, resolution
from ctxlint.program.rule import RawFinding, Rule, field_data

ID = "CTX104"
CALL = EventKind.CALL
NOTE = "no declaration function derived (no stash a view reads): nothing is checked"


def _declaring(res: Resolution) -> set[str]:
    """Functions reaching the declaration function other than through a pass runner."""
    if res.declaration is None:
        return set()
    runners = res.pass_runners
    return set(backward(res.graph, [res.declaration], through=lambda c, _: c not in runners))


class DeclarationWriter(Rule):
    id = ID
    name = "declaration-writer"
    summary = (
        "The declaration function is the stash's one writer; nothing declares on the "
        "published record; overrides and passes return their declarations"
    )
    # the stash is what publish projects into the bags: a codebase with no bags
    # yet has no declaration stash to guard
    needs = (BAGS,)
    requires = ("calls", "classes", KEY)

    def tokens(self, vocab: Vocabulary) -> set[str]:
        modules = {vocab.record_module, *(q.rpartition(".")[0] for q in vocab.field_classes)}
        return {f"module:{m}" for m in modules} | {"publish"}

    def more_tokens(self, program: Program) -> set[str]:
        res = resolution(program)
        return res.wanted_tokens() | res.slot_names

    def derive(self, program: Program) -> dict[str, Any]:
        res = resolution(program)
        return {
            "declaration function": [res.declaration] if res.declaration else [],
            "record methods resolving": res.entries,
            "stash slots": sorted(res.stash),
            "stash appenders (through a parameter)": res.appenders,
            "pass runners": sorted(res.pass_runners),
            "foreign-default wrappers": sorted(res.wrappers),
            "registered callables": sorted(res.registered),
            "passes handed to a pass runner": sorted(res.passes),
            "functions reaching the declaration (not through a pass runner)": len(_declaring(res)),
            **({"note": NOTE} if res.declaration is None else {}),
        }

    def partial(self, sets: dict[str, Any]) -> str | None:
        """Resolution code without a derived writer: nothing is checked (a codebase
        with neither has the note in its sets)."""
        if sets.get("declaration function") == [] and sets.get("record methods resolving"):
            return (
                "no declaration function derived: no function appends, through its "
                "parameter, to a record slot a view reads (no stash), so nothing is checked"
            )
        return None

    def check(self, program: Program) -> Iterable[RawFinding]:
        res = resolution(program)
        if res.declaration is None:
            return
        decl = res.declaration.rpartition(".")[2]
        # the call as this tree's def declares it: a hint that binds where it stands
        call = res.declaration_call() or decl
        helpers = copy_helper_scopes(program)
        for path, module, facts in res.files:
            for s in facts.stash:
                if s.how not in ("append", "assign") or res.slot(s.slot) not in res.stash:
                    continue
                if s.fn == res.declaration or in_helper(helpers, module, s.site.scope):
                    continue
                yield RawFinding(
                    ID,
                    path,
                    s.site.scope,
                    s.site.snippet,
                    s.site.span,
                    f"the declaration stash `{res.slot(s.slot)}` written outside `{decl}`: "
                    f"declare through `{call}`, the stash's one writer",
                )
            for w in facts.writes:
                if w.fn not in res.registered and w.fn not in res.passes:
                    continue
                what = "registered callable" if w.fn in res.registered else "pass"
                yield RawFinding(
                    ID,
                    path,
                    w.site.scope,
                    w.site.snippet,
                    w.site.span,
                    f"a {what} assigns `{w.holder}.{w.field}`: return the "
                    "declaration (`{field: value}`) instead; the runner declares it",
                    data=field_data(program.vocab, w.field),
                )
        yield from self._after_publish(program, res, decl)

    def _after_publish(self, program: Program, res: Resolution, decl: str) -> Iterable[RawFinding]:
        g = res.graph
        declaring = _declaring(res)
        publishers = set(same_module_publishers(program))
        for q in sorted(publishers):
            fn = g.funcs[q]
            for event, targets in after_publish(g, q, publishers):
                if event.kind is not CALL or event.site is None:
                    continue
                hit = sorted(set(targets) & declaring)
                if not hit:
                    continue
                via = "" if hit[0] == res.declaration else f" (through {short(hit[0], fn.module)})"
                yield RawFinding(
                    ID,
                    fn.path,
                    short(q, fn.module),
                    event.site.snippet,
                    event.site.span,
                    f"`{decl}` reached after publish{via}: the stash is projected at publish "
                    "and never again, so this declaration is a silent no-op; declare before "
                    "publish, or change the live value with get_context().override(...)",
                )


RULE = DeclarationWriter()
