"""CTX204 record-member-call: a method called on a record is one the record defines.

`server_args.method(...)` on a record instance must name a member of the record
class or of a class it inherits from (the class index's C3 lineage): a method,
a property, a field or a class attribute. A removed `override`/`derive`, or a
typo, is an `AttributeError` only when that path runs. Record instances are the
ones CTX201/CTX202 know (records' one holder classifier), plus `self` inside the
record class. Dunder names are the object protocol's, never reported. When the
lineage has an ancestor outside the parsed tree (other than `object`) its
members are unknown, and the rule says so (partial) instead of passing.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext
from ctxlint.facts.typed import Site, site
from ctxlint.facts.visitor import FileVisitor
from ctxlint.facts.vocab import Vocabulary
from ctxlint.program.classes import class_index
from ctxlint.program.core import Program
from ctxlint.program.holders import Holder, HolderKind
from ctxlint.program.record_conventions import record_convention, record_names
from ctxlint.program.record_members import (
    Members,
    class_members,
    is_record_class,
    record_members,
)
from ctxlint.program.rule import RawFinding, Rule

ID = "CTX204"
# holders that are a record only if the codebase names its records so
NAMED = (HolderKind.NAME, HolderKind.ATTR)


@dataclass(frozen=True, slots=True)
class MemberCall:
    method: str
    base: Holder  # what it is called on (records' verdict, settled)
    site: Site


@dataclass(frozen=True, slots=True)
class MemberCallFacts:
    calls: tuple[MemberCall, ...]
    classes: dict[str, Members]  # record class (or base) -> its members


class RecordMemberCallVisitor(FileVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        vocab = ctx.vocab
        assert vocab is not None
        self.record_local = vocab.record_name if ctx.module == vocab.record_module else None
        self.calls: list[MemberCall] = []
        self.classes: dict[str, Members] = {}

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if is_record_class(self.ctx, node):
            self.classes[f"{self.ctx.module}.{node.name.value}"] = class_members(self.ctx, node)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        name = func.attr.value
        if name.startswith("__") and name.endswith("__"):
            return  # the object protocol: every class has it
        holder = self.ctx.records.holder(func.value)
        if holder is None or holder.kind is HolderKind.ATTR:
            # `<expr>.server_args` off an object of unknown type is a record only
            # by its name: a spec's `req.server_args.items()` is a dict (SGLang
            # 0.5.23's kernel plugins). A member call is a claim about the class,
            # so only holders whose class is known (or conventional) count.
            return
        if holder.kind is HolderKind.RECEIVER and not (
            self.record_local is not None and self.ctx.enclosing_class() == self.record_local
        ):
            return
        self.calls.append(MemberCall(name, holder, site(self.ctx, node)))

    def finish(self) -> MemberCallFacts | None:
        if not self.calls and not self.classes:
            return None
        rec = self.ctx.records
        calls = (replace(c, base=Holder.of_fact(rec.settle(c.base.fact()))) for c in self.calls)
        return MemberCallFacts(tuple(calls), self.classes)


class RecordMemberCall(Rule):
    id = ID
    name = "record-member-call"
    summary = "A method called on a record is one the record class (or a base) defines"
    visitor = RecordMemberCallVisitor
    requires = ("classes", "records")

    def tokens(self, vocab: Vocabulary) -> set[str]:
        modules = {vocab.record_module, *(q.rpartition(".")[0] for q in vocab.field_classes)}
        return {*vocab.seed_accessors, vocab.record_name, *(f"module:{m}" for m in modules)}

    def more_tokens(self, program: Program) -> set[str]:
        lineage = class_index(program).linearization(program.vocab.record_class)
        return record_names(program) | {f"class {q.rpartition('.')[2]}" for q in lineage[1:]}

    def derive(self, program: Program) -> dict[str, Any]:
        m = record_members(program, ID, MemberCallFacts)
        return {
            "record lineage": m.lineage,
            "record members (methods, properties, class attributes)": sorted(m.members),
            "ancestors outside the tree": m.unknown,
        }

    def partial(self, sets: dict[str, Any]) -> str | None:
        unknown = sets.get("ancestors outside the tree")
        if unknown:
            return (
                f"the record inherits from {', '.join(unknown)}, outside the parsed tree: "
                "calls of names the tree does not define are not checked"
            )
        if sets.get("record lineage") == []:
            return "the record class is not in the parsed tree: no call is checked"
        return None

    def check(self, program: Program) -> Iterable[RawFinding]:
        m = record_members(program, ID, MemberCallFacts)
        if not m.lineage or m.unknown:
            return
        record = program.vocab.record_name
        fields = set(program.vocab.fields)
        known = m.members | fields
        public = sorted(n for n in known if not n.startswith("_"))
        holders = record_convention(program)
        for path, module, facts in program.typed_facts(ID, MemberCallFacts):
            for c in facts.calls:
                b = c.base
                if b.kind in NAMED and not holders.holds(b.name, module):  # type: ignore[arg-type]
                    continue
                name = c.method
                if name in known:
                    continue
                close = difflib.get_close_matches(name, public, n=1, cutoff=0.8)
                hint = f"; did you mean `{close[0]}`?" if close else ""
                yield RawFinding(
                    ID,
                    path,
                    c.site.scope,
                    c.site.snippet,
                    c.site.span,
                    f"`.{name}()` called on a record: {record} (with its bases) defines no "
                    f"`{name}`, so this raises AttributeError when the path runs{hint}",
                    details="record lineage: " + " -> ".join(m.lineage),
                    data={"member": name},
                )


RULE = RecordMemberCall()
