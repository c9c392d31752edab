"""CTX101 seed-read: a field read off the process-global seed record.

`get_server_args()` answers with what the operator typed, not with what
resolution decided or what a post-publish override set; business code reads
the namespace bags instead. Forms: the direct read, literal `getattr`, the
accessor under another name or through its module, local aliases and their
copies, module-level aliases (respecting local shadowing), and an alias parked
on `self` read in any method of the class. The runtime module is exempt.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ctxlint.facts.vocab import SEED, Vocabulary
from ctxlint.program.core import Program
from ctxlint.program.materialised import FACTS_READ, materialiser, seed_holds
from ctxlint.program.reads import leaf_spelling, namespace_hint
from ctxlint.program.resolution import KEY as RESOLUTION
from ctxlint.program.resolution import resolution, start_tokens
from ctxlint.program.rule import RawFinding, Rule, field_data
from ctxlint.program.seed_reads import REQUIRES, SeedReadFact, SeedReadVisitor

ID = "CTX101"


class SeedRead(Rule):
    id = ID
    name = "seed-read"
    summary = "A field read off the process-global seed record (get_server_args()) in business code"
    visitor = SeedReadVisitor
    requires = (*REQUIRES, "calls", "classes", RESOLUTION)  # the pipeline: materialised?
    reads_facts = FACTS_READ
    needs = (SEED,)
    fixes = ("safe", "unsafe")  # ctxlint fix (docs/fix.md)

    def fixers(self) -> tuple[Callable[..., None], ...]:
        from ctxlint.rules.ctx101_seed_read.fix import fix_seed_reads

        return (fix_seed_reads,)

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return set(vocab.seed_accessors) | start_tokens(vocab)  # the pipeline's files too

    def more_tokens(self, program: Program) -> set[str]:
        return resolution(program).wanted_tokens()

    def derive(self, program: Program) -> dict[str, Any]:
        writer = materialiser(program)
        return {
            "seed accessors": [program.vocab.qualified(a) for a in program.vocab.seed_accessors],
            "files reading the seed": sorted({p for p, _, _ in program.facts(ID)}),
            "declarations written onto the fields by": [writer] if writer else [],
        }

    def check(self, program: Program) -> Iterable[RawFinding]:
        holds, written = seed_holds(program)
        for path, _, reads in program.typed_facts(ID, list[SeedReadFact]):
            for r in reads:
                how = {"call": "", "alias": " through an alias"}.get(r.via, f" through {r.via}")
                # a bag or Derived leaf where the runtime defines one; else the step
                # not taken (for a property: the accessor the runtime lacks), in the details
                where = leaf_spelling(program.vocab, r.field)
                lacks = "the runtime lacks an accessor deriving it"  # a record property
                fix = f"read {where}" if where else "no leaf answers it yet"
                if not where and r.field in program.vocab.properties:
                    fix = lacks
                more = "" if where else namespace_hint(program.vocab, r.field)
                yield RawFinding(
                    ID,
                    path,
                    r.site.scope,
                    r.site.snippet,
                    r.site.span,
                    f"`{r.field}` read off the seed record{how}: {holds}; {fix}",
                    "\n".join(x for x in (more, written) if x),
                    data=field_data(program.vocab, r.field),
                )


RULE = SeedRead()
