"""CTX502 readback-surfaces: the sibling surfaces of a readback report the same keys.

Derived (rules/CTX502.md says how): the readback primitives (the record's
whole-object readback, the context's name-driven leaf read, and what returns
their results, matched by called name), the surfaces (functions returning a dict
that spreads a readback or holds a primitive's result), and their groups by
readback name. A surface lacking a key its siblings report is a finding; each
group's surfaces and keys are pinned in the baseline, as CTX501 pins hooks.
A key a sibling reports about itself (its transport) is no field the others lose.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.core import Program
from ctxlint.program.readback_surfaces import Model, ReadbackVisitor, disagreements, readback_model
from ctxlint.program.rule import PinSite, RawFinding, Rule, pin_findings

ID = "CTX502"


class ReadbackSurfaces(Rule):
    id = ID
    name = "readback-surfaces"
    summary = (
        "Sibling surfaces of a readback (HTTP, RPC, in-process) report the same keys; "
        "each group's surfaces and keys are pinned in the baseline"
    )
    visitor = ReadbackVisitor
    requires = (BINDINGS, "calls")  # what a function's locals hold; who calls a helper
    needs = (BAGS,)  # a readback answers from the bags (`config_leaf`)

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return {"resolved_dict", "config_leaf", f"module:{vocab.record_module}"}

    def more_tokens(self, program: Program) -> set[str]:
        model = Model(program)  # not memoised: the facts grow each round
        return set(model.primitives)

    def derive(self, program: Program) -> dict[str, Any]:
        model = readback_model(program)
        return {
            "whole-object readback": model.whole_seeds,
            "name-driven leaf reads": model.leaf_seeds,
            "readback primitives": sorted(model.primitives),
            "parts": sorted(model.parts),
            "groups": {
                g: {q: model.keys[q] for q in quals} for g, quals in sorted(model.groups.items())
            },
        }

    def partial(self, sets: dict[str, Any]) -> str | None:
        # a name-driven read with no whole-object readback beside it: the record's
        # readback method was not recognised (a codebase with neither has no
        # readback to guard yet)
        if sets.get("name-driven leaf reads") and not sets.get("whole-object readback"):
            return (
                "no whole-object readback: the record class has no method of no arguments "
                "annotated to return a dict"
            )
        return None

    def pins(self, program: Program) -> dict[str, Any]:
        model = readback_model(program)
        return {
            f"{g}: {q}": ", ".join(model.keys[q])
            for g, quals in model.groups.items()
            for q in quals
        }

    def check(self, program: Program) -> Iterable[RawFinding]:
        model = readback_model(program)
        out: list[RawFinding] = []
        for group, qual, name, having in disagreements(program, model):
            path, scope, f = model.fns[qual]
            missing = list(having)
            who = sorted({w for v in having.values() for w in v})
            plural = "s" if len(who) > 1 else ""
            # the message names two keys and counts the siblings; the details name each
            shown = ", ".join(f"`{k}`" for k in missing[:2])
            more = f" and {len(missing) - 2} more" if len(missing) > 2 else ""
            sibs = f"{len(who)} `{group}` siblings report" if len(who) > 1 else ""
            sibs = sibs or f"`{group}` sibling reports"
            out.append(
                RawFinding(
                    ID,
                    path,
                    scope,
                    f"readback {group}: {f.name}",
                    f.span,  # type: ignore[arg-type]
                    f"`{name}` does not report {shown}{more}, which its {sibs}: its users "
                    "lose the field",
                    f"report the same keys from every surface; its `{group}` sibling{plural}: "
                    f"{', '.join(f'`{w}`' for w in who)}\n"
                    + "\n".join(f"  - {k}: reported by {', '.join(v)}" for k, v in having.items()),
                )
            )
        if ID in program.pinned:
            sites: dict[str, PinSite] = {}
            for group, quals in model.groups.items():
                for qual in quals:
                    path, scope, f = model.fns[qual]
                    sites[f"{group}: {qual}"] = PinSite(path, scope, f"def {f.name}", f.span)  # type: ignore[arg-type]
            out.extend(pin_findings(ID, program, self.pins(program), sites))
        return out


RULE = ReadbackSurfaces()
