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

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext
from ctxlint.facts.vocab import SEED, Vocabulary
from ctxlint.program.core import Program
from ctxlint.program.reads import ReadVisitor, bag_spelling, namespace_hint
from ctxlint.program.rule import RawFinding, Rule, field_data

ID = "CTX101"


class SeedReadVisitor(ReadVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        vocab = ctx.vocab
        assert vocab is not None
        self.active = ctx.module != vocab.runtime_module
        self.readable = set(vocab.fields) | set(vocab.properties)
        self.reads: list[dict[str, Any]] = []
        self.pending: list[tuple[str | None, str, dict[str, Any]]] = []

    def _record(self, node: cst.CSTNode, base: cst.BaseExpression, field: str, form: str) -> None:
        rec = self.ctx.records
        if rec.is_seed(base):
            entry = self._entry(node, field, form)
            if rec.is_seed_call(base):
                entry["via"] = "call"
            else:
                entry["via"] = "alias"
            self.reads.append(entry)
            return
        attr = rec.self_attr(base)
        if attr is not None:
            # Only known to be the seed once the class is complete; anchoring
            # (which costs a positions pass) waits until it is confirmed.
            pending = {"field": field, "form": form, "scope": self.ctx.qualname, "node": node}
            pending["via"] = f"self.{attr}"
            self.pending.append((self.ctx.enclosing_class(), attr, pending))

    def _entry(self, node: cst.CSTNode, field: str, form: str) -> dict[str, Any]:
        return {
            "field": field,
            "form": form,
            "scope": self.ctx.qualname,
            "snippet": self.ctx.snippet(node),
            "span": self.ctx.anchor(node),
        }

    def finish(self) -> Any:
        rec = self.ctx.records
        for cls, attr, pending in self.pending:
            if rec.parked(cls, attr):
                node = pending.pop("node")
                pending["snippet"] = self.ctx.snippet(node)
                pending["span"] = self.ctx.anchor(node)
                self.reads.append(pending)
        return self.reads


class SeedRead(Rule):
    id = ID
    name = "seed-read"
    summary = "A field read off the process-global seed record (get_server_args()) in business code"
    visitor = SeedReadVisitor
    requires = ("records",)
    needs = (SEED,)
    fixes = ("safe", "unsafe")  # ctxlint fix (docs/fix.md)

    def fixers(self) -> tuple[Callable[..., None], ...]:
        from ctxlint.rules.ctx101_seed_read.fix import fix_seed_reads

        return (fix_seed_reads,)

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return set(vocab.seed_accessors)

    def derive(self, program: Program) -> dict[str, Any]:
        return {
            "seed accessors": [program.vocab.qualified(a) for a in program.vocab.seed_accessors],
            "files reading the seed": sorted({p for p, _, _ in program.facts(ID)}),
        }

    def check(self, program: Program) -> Iterable[RawFinding]:
        for path, _, reads in program.facts(ID):
            for r in reads:
                how = {"call": "", "alias": " through an alias"}.get(
                    r["via"], f" through self.{r['via'][5:]}"
                )
                where = bag_spelling(program.vocab, r["field"])
                fix = f"read {where}" if where else namespace_hint(program.vocab, r["field"])
                yield RawFinding(
                    ID,
                    path,
                    r["scope"],
                    r["snippet"],
                    r["span"],
                    f"`{r['field']}` read off the seed record{how}: it is the operator's raw "
                    f"input and misses resolution and overrides; {fix}",
                    data=field_data(program.vocab, r["field"]),
                )


RULE = SeedRead()
