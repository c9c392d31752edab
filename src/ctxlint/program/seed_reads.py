"""Where a field is read off the seed record, and by which spelling.

The seed is what the seed accessor (`get_server_args()`) answers: the
operator's raw input. A read off it is the direct read, a literal `getattr`,
the accessor under another name or through its module, a local or
module-level alias and its copies (respecting local shadowing), or an alias
parked on `self` read in any method of the class (records' seed tracker
decides each; a read through `self.<attr>` waits until the class is complete).
The runtime module is where the seed lives: not gathered there.

Asked by CTX101 (seed-read), whose visitor gathers the reads under its id.
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext
from ctxlint.facts.typed import Site, site
from ctxlint.program.reads import ReadVisitor

REQUIRES = ("records",)  # the model parts it reads: the record tracker's seed


@dataclass(frozen=True, slots=True)
class SeedReadFact:
    """A field read off the seed record."""

    field: str
    form: str  # ReadVisitor's: "attr", "getattr"...
    via: str  # "call" (the accessor's), "alias", or "self.<attr>" (an alias parked there)
    site: Site


class SeedReadVisitor(ReadVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.reads: list[SeedReadFact] = []
        # (class, attr, read): a read through `self.<attr>`, its site still to take
        self.pending: list[tuple[str | None, str, tuple[str, str, str, cst.CSTNode]]] = []

    def _record(self, node: cst.CSTNode, base: cst.BaseExpression, field: str, form: str) -> None:
        rec = self.ctx.records
        if rec.is_seed(base):
            via = "call" if rec.is_seed_call(base) else "alias"
            self.reads.append(SeedReadFact(field, form, via, site(self.ctx, node)))
            return
        attr = rec.self_attr(base)
        if attr is not None:
            # Only known to be the seed once the class is complete; anchoring
            # (which costs a positions pass) waits until it is confirmed.
            read = (field, form, self.ctx.qualname, node)
            self.pending.append((self.ctx.enclosing_class(), attr, read))

    def finish(self) -> list[SeedReadFact]:
        rec = self.ctx.records
        for cls, attr, (field, form, scope, node) in self.pending:
            if rec.parked(cls, attr):
                where = Site(scope, self.ctx.snippet(node), self.ctx.anchor(node))  # type: ignore[arg-type]
                self.reads.append(SeedReadFact(field, form, f"self.{attr}", where))
        return self.reads
