"""Which fields a remedy may tell the code to declare: the whitelist, as the
checked tree declares it.

A hint that says "declare it with `run_post_process_pass(server_args, fn)`"
is right only for a field on the whitelist (program.resolvable: the fields
declared `resolvable=True`): where the declaration function checks it (a
function at most GATE_DEPTH calls below it names the whitelist: SGLang
0.5.17's `validate_declarations`) any other field raises at its slot, and the
design limits declarations to it everywhere. Where no whitelist is derived (a
tree with no `resolvable=True` field), every field may be named. Asked by
CTX103, CTX201 and CTX202, over CTX105's facts (program.declared_names).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ctxlint.program.core import Program
from ctxlint.program.declared_names import KEY as FACTS
from ctxlint.program.declared_names import declarable, gated
from ctxlint.program.resolution import resolution

KEY = "declarable"
# the facts this question reads (another rule's visitor gathers them)
FACTS_READ = (FACTS,)


@dataclass(frozen=True, slots=True)
class Declarable:
    whitelist: frozenset[str]  # empty: none derived, every field may be declared
    fields: frozenset[str]  # the record's fields (a call's other keywords are no field)
    gate: str | None  # the function that refuses another field at its slot
    call: str  # the declaration call as the tree's def spells it

    def refused(self, fields: Iterable[str]) -> list[str]:
        """The fields a declaration may not name (sorted): off the whitelist."""
        if not self.whitelist:
            return []
        return sorted({f for f in fields if f in self.fields and f not in self.whitelist})

    def not_fields(self, names: Iterable[str], own: frozenset[str] | None) -> list[str]:
        """The names an edit sets that are no field of the record (sorted): no
        declaration carries them (a declaration names fields; SGLang's writer
        refuses another name at its slot), so only a constructor argument can.
        `own`: the edit method's own parameters, which are no field it sets
        (`source`); None where the method is not known: nothing is judged."""
        if not self.fields or own is None:
            return []
        return sorted({n for n in names if n not in self.fields and n not in own})

    def _no_field(self, names: list[str]) -> str:
        said = ", ".join(f"`{n}`" for n in names)
        one = len(names) == 1
        return (
            f"{said} {'is' if one else 'are'} no field of the record, "
            f"so no declaration can carry {'it' if one else 'them'}"
        )

    def why(self, refused: Iterable[str]) -> str:
        """Why a declaration of `refused` is no remedy yet, and the step before it."""
        names = list(refused)
        said = ", ".join(f"`{f}`" for f in names) + (" is" if len(names) == 1 else " are")
        it = "it" if len(names) == 1 else "them"
        if self.gate is not None:
            why = f"`{self.call}` would raise at its slot (`{self.gate.rpartition('.')[2]}` "
            why += "checks the whitelist)"
        else:
            why = "the design limits declarations to the whitelist"
        return (
            f"{said} not declared resolvable, so {why}: mark {it} `Arg(..., resolvable=True)` "
            f"first, then declare {it} with {self.call}"
        )

    def declare(self, field: str) -> tuple[str, str]:
        """(what to do, details) for a new value of `field` inside resolution
        (CTX103's in-place edit): its declaration, or, off the whitelist, that
        none can carry it yet, with the step before it."""
        refused = self.refused([field])
        if refused:
            why = "the field is not declared resolvable yet, so no declaration can carry it"
            return why, f"{self.why(refused)}."
        return f"declare the new value with {self.call}", ""

    def remedy(
        self, fields: Iterable[str] = (), first: str = "", own: frozenset[str] | None = None
    ) -> str:
        """CTX202's remedies, naming the declaration function as the tree's def
        spells it (a release without the design's `declare_resolution` gets its
        own writer), and offering it only where every field is on the whitelist;
        `own`: the edit method's own parameters (None: the method is not known,
        so no keyword is judged a non-field)."""
        tail = "test doubles use get_context().override_server_args(...)."
        fields = list(fields)
        if off := self.not_fields(fields, own):
            keep = (
                "Keep the value off the record: pass it to what uses it as a constructor argument"
            )
            return f"{first}{keep}; {self._no_field(off)}; {tail}"
        refused = self.refused(fields)
        if refused:
            return f"{first}Pass a per-runner value as a constructor argument; {self.why(refused)}; {tail}"
        return (
            f"{first}Declare a decision on the record you hold with {self.call}; pass a "
            f"per-runner value as a constructor argument; {tail}"
        )

    def copy_remedy(self, fields: Iterable[str] | None, own: frozenset[str] | None = None) -> str:
        """CTX202's remedies for a copy (`fields`: those it is given, None where no
        call names them): a copy exists to differ from the record every holder
        shares, so the value another runner owns travels as a constructor argument,
        and a declaration on the held record (it changes it for every holder) is
        named only for fields the whitelist allows (`own`: as `not_fields`)."""
        tail = "test doubles use get_context().override_server_args(...)."
        lead = "Pass a value another runner owns as a constructor argument"
        shared = (
            f"a decision every holder shares is declared on the record you hold with {self.call}"
        )
        if off := self.not_fields(fields or (), own):
            return f"{lead}; {self._no_field(off)}; {tail}"
        refused = self.refused(fields or ())
        if refused:
            said = ", ".join(f"`{f}`" for f in refused)
            return f"{lead}; {said} cannot be declared ({self._limit()}); {tail}"
        if fields is None and self.whitelist:
            return f"{lead}; {shared}, for a field declared resolvable only; {tail}"
        return f"{lead}; {shared}; {tail}"

    def _limit(self) -> str:
        """What refuses a field off the whitelist, as this tree does."""
        if self.gate is not None:
            return (
                f"not declared resolvable: `{self.gate.rpartition('.')[2]}` refuses it at its slot"
            )
        return "not declared resolvable: the design limits declarations to the whitelist"


def declarable_fields(program: Program) -> Declarable:
    """The run's answer, built once."""
    return program.memo(KEY, lambda: _build(program))


def _build(program: Program) -> Declarable:
    gates = gated(program)
    return Declarable(
        frozenset(declarable(program)),
        frozenset(program.vocab.fields),
        gates[0] if gates else None,
        resolution(program).declaration_hint(),
    )
