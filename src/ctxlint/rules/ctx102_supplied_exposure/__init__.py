"""CTX102 supplied-exposure: a field read off a record instance the code was handed.

The instance a function receives is the same object the process published, so
a field read off it answers with the operator's raw input: a value resolution
decided, or a post-publish override set, passes it by. The design pins these
reads at zero outside named exemptions. Spellings: `server_args.f` on a
parameter (the codebase's record-parameter names, or one annotated with the
record class), `self.server_args.f`, literal `getattr(server_args, "f"[, d])`,
the parked form (`self.x = server_args` in a method taking it, read as
`self.x.f` anywhere in the class), and chains through another object's record
(`runner.server_args.f`). Reads off the seed are CTX101's.

A record property that reads no configuration (its body touches `self` only
for slots that are neither fields nor members, SGLang's provenance
`launch_command`) has no bag behind it and no leaf to read instead: reading it
off a handed record is not exposure. Where a property does read fields and no
leaf answers it, the finding says the runtime lacks the accessor.

A whole-object pass of a field nothing declares or overrides keeps the
supplied-instance contract: kept apart (`ctxlint sets`), never a finding; a
raw read CTX103 reports in the pipeline is CTX103's (program/whole_object.py).

Which reads are off a handed record, how it is held, and which the design
keeps, is the model's question (program/handed_reads.py); every exemption is
decided in check() so that config changes never invalidate cached facts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, ClassVar

from ctxlint.facts.vocab import Vocabulary
from ctxlint.program import whole_object as whole
from ctxlint.program.core import Program
from ctxlint.program.handed_reads import REQUIRES, ExposureVisitor, Handed, handed_reads
from ctxlint.program.record_conventions import record_names
from ctxlint.program.rule import RawFinding, Rule, field_data

ID = "CTX102"
ALLOWED_CLASSES = "exposure-allowed-classes"
FACTORIES = "exposure-factories"
# fields the design keeps on the instance's own record ("What genuinely stays
# per-instance ...: `base_gpu_id`"): a read off `self.<record>` is not exposure
PER_INSTANCE = "exposure-per-instance-fields"
# Factories whose contract is "build X from the record you are handed".
BUILTIN_FACTORIES = ("from_server_args", "create_*_from_server_args")


class SuppliedExposure(Rule):
    id = ID
    name = "supplied-exposure"
    summary = (
        "A field read off a record instance the code was handed (a parameter, self.server_args, "
        "a parked alias, another object's record) instead of its bag"
    )
    fixes = ("unsafe",)  # ctxlint fix (docs/fix.md)
    fix_guards = ("CTX301",)  # a read it rewrites must not come before publish
    visitor = ExposureVisitor
    requires = REQUIRES  # the call graph: whether a publish precedes a read decides its hint
    reads_facts = whole.FACTS_READ  # declarations (CTX105's) and overrides (CTX303's)
    options: ClassVar[dict[str, Any]] = {ALLOWED_CLASSES: [], FACTORIES: [], PER_INSTANCE: []}

    def fixers(self) -> tuple[Callable[..., None], ...]:
        from ctxlint.rules.ctx102_supplied_exposure.fix import fix_supplied_reads

        return (fix_supplied_reads,)

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return {vocab.record_name, "publish"}

    def more_tokens(self, program: Program) -> set[str]:
        return record_names(program)

    def _option(self, program: Program, key: str) -> list[str]:
        value = program.config.options.get(key, self.options[key])
        return [str(v) for v in value]

    def _per_instance(self, program: Program, field: str, held: Handed) -> bool:
        return held.kind == "self" and field in self._option(program, PER_INSTANCE)

    def derive(self, program: Program) -> dict[str, Any]:
        handed = handed_reads(program)
        allowed = self._option(program, ALLOWED_CLASSES)
        factories = [*BUILTIN_FACTORIES, *self._option(program, FACTORIES)]
        return {
            **whole.exposure(program).sets(program, whole.kept_apart(program, factories, allowed)),
            "record parameter names": sorted(handed.names.names),
            "parked record attributes": sorted(
                f"{path}:{cls}.{attr} = {n}" for (path, cls, attr), n in handed.parked.items()
            ),
            "exempt factory patterns": factories,
            "per-instance fields": self._option(program, PER_INSTANCE),
            "per-instance reads off the instance's own record (kept apart)": sorted(
                f"{p}:{r.site.span[0]} {r.site.scope} `{r.field}`"
                for p, _, r, h, v in whole.judged(program, factories, allowed)
                if v == "report" and self._per_instance(program, r.field, h)
            ),
            "allowed classes": allowed,
            # a stale allow-list entry passes green forever: show it
            "allowed classes with no read": sorted(
                a
                for a in allowed
                if not any(whole.class_matches(a, m, c) for m, c in handed.classes)
            ),
        }

    def partial(self, sets: dict[str, Any]) -> str | None:
        return whole.NOTE if sets.get(whole.NOTE_KEY) == whole.NOTE else None

    def check(self, program: Program) -> Iterable[RawFinding]:
        handed = handed_reads(program)
        seen = whole.exposure(program)
        rname = program.vocab.record_name
        factories = [*BUILTIN_FACTORIES, *self._option(program, FACTORIES)]
        allowed = self._option(program, ALLOWED_CLASSES)
        for path, module, r, held, verdict in whole.judged(program, factories, allowed):
            if verdict != "report" or self._per_instance(program, r.field, held):
                continue  # kept apart (the sets list it), or CTX103's
            spelled = " (literal getattr)" if r.form == "getattr" else ""
            details = seen.view_remedy(module, r)
            if details is None:
                details = handed.remedy(program, path, module, r)
            yield RawFinding(
                ID,
                path,
                r.site.scope,
                r.site.snippet,
                r.site.span,
                f"`{r.field}` read off a handed {rname}{spelled} through {_how(held)}: "
                + seen.holds(r.field),
                details=held.parked() + seen.where(r.field) + details,
                data=field_data(program.vocab, r.field),
            )


def _how(h: Handed) -> str:
    if h.kind == "param":
        return f"parameter `{h.name}`"
    if h.kind == "chain":
        return f"`{h.via}.{h.name}`"  # another object's record
    return f"`self.{h.name}`"


RULE = SuppliedExposure()
