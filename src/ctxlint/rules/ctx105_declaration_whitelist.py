"""CTX105 declaration-whitelist: a declaration names a field that may be declared.

Every name handed to the declaration function (derived, program.resolution:
SGLang's `declare_resolution(server_args, source, **fields)`) must be a field of
the record: the function refuses anything else at its slot, which is a crash
only when that path runs. The keys a registered model-override callable or a
post-process pass returns (`return {"page_size": 64}`) must name a field on the
whitelist, the fields whose declaration says `resolvable=True` (`Arg(...,
resolvable=True)`, `arg(..., resolvable=True)` or `field(metadata={"resolvable":
True})` in the record or its field classes): the gate validates those returns
against it before publish. A direct declaration is held to the whitelist too
when the declaration function itself consults it (it, or what it calls two
deep, names `resolvable`): ctxrt does, SGLang 0.5.23 checks field names only.

The whitelist, the declaration function, the registered callables and the
passes are all derived; one of them missing where the rule needs it is a
partial run with the reason, never a silent pass.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Any

from ctxlint.facts.vocab import Vocabulary
from ctxlint.program.core import Program
from ctxlint.program.declared_names import (
    KEY,
    DeclarationWhitelistVisitor,
    declarable,
    declarations,
    gated,
    returned_keys,
)
from ctxlint.program.resolution import resolution
from ctxlint.program.resolvable import WORD
from ctxlint.program.rule import RawFinding, Rule, field_data

ID = KEY
NOTE = "no declaration function derived (no stash a view reads): no declaration is checked"


class DeclarationWhitelist(Rule):
    id = ID
    name = "declaration-whitelist"
    summary = (
        "A declaration names a record field; an override's or pass's returned keys "
        "name a field declared resolvable"
    )
    visitor = DeclarationWhitelistVisitor
    requires = ("calls", "classes", "resolution")  # resolution() reads the class index too

    def tokens(self, vocab: Vocabulary) -> set[str]:
        modules = {vocab.record_module, *(q.rpartition(".")[0] for q in vocab.field_classes)}
        return {f"module:{m}" for m in modules} | {WORD}

    def more_tokens(self, program: Program) -> set[str]:
        res = resolution(program)
        out = res.wanted_tokens() | {q.rpartition(".")[2] for q in res.registrars}
        if res.declaration is not None:
            out.add(res.declaration.rpartition(".")[2])
            out.add(f"module:{res.graph.funcs[res.declaration].module}")
        return out

    def derive(self, program: Program) -> dict[str, Any]:
        res = resolution(program)
        return {
            "declaration function": [res.declaration] if res.declaration else [],
            "whitelist (resolvable fields)": sorted(declarable(program)),
            "whitelist checks below the declaration function": gated(program),
            "registered callables and passes": sorted(res.registered | res.passes),
            **({"note": NOTE} if res.declaration is None else {}),
        }

    def partial(self, sets: dict[str, Any]) -> str | None:
        if not sets.get("declaration function") and sets.get("registered callables and passes"):
            return "no declaration function derived: direct declarations are not checked"
        if not sets.get("whitelist (resolvable fields)") and (
            sets.get("registered callables and passes")
            or sets.get("whitelist checks below the declaration function")
        ):
            return (
                "no field declares resolvable=True: the whitelist is empty, so returned "
                "override and pass keys are checked against the record's fields only"
            )
        return None

    def check(self, program: Program) -> Iterable[RawFinding]:
        res = resolution(program)
        vocab = program.vocab
        fields = set(vocab.fields)
        whitelist = declarable(program)
        record = vocab.record_name

        def problem(name: str, held: bool) -> str | None:
            if name not in fields:
                close = difflib.get_close_matches(name, sorted(fields), n=1, cutoff=0.8)
                hint = f" (did you mean `{close[0]}`?)" if close else ""
                return f"`{name}` is not a {record} field{hint}"
            if held and whitelist and name not in whitelist:
                return (
                    f"a {record} field not declared `resolvable=True`, which the whitelist refuses"
                )
            return None

        short = (res.declaration or "").rpartition(".")[2]
        has_gate = bool(gated(program))
        for path, c in declarations(program):
            for k in c.keywords:
                why = problem(k.name, has_gate)
                if why is not None:
                    yield RawFinding(
                        ID,
                        path,
                        c.scope,
                        c.snippet,
                        k.span,
                        f"declaration `{short}(..., {k.name}=...)`: {why}; refused at its "
                        "slot when this path runs",
                        data=field_data(vocab, k.name),
                    )
        for path, scope, is_pass, k in returned_keys(program):
            why = problem(k.key, True)
            if why is not None:
                what = "pass" if is_pass else "registered override"
                yield RawFinding(
                    ID,
                    path,
                    scope,
                    k.snippet,
                    k.span,
                    f"{what} `{scope}` returns `{k.key}`: {why}",
                    "the gate refuses the declaration before publish",
                    data=field_data(vocab, k.key),
                )


RULE = DeclarationWhitelist()
