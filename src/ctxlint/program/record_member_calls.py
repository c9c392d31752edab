"""Which methods the code calls on a record instance: `server_args.method(...)`,
with what it is called on (records' one holder classifier, settled once the
class is complete), and the record classes' members the call must find.

A record instance is one CTX201/CTX202 know, plus `self` inside the record
class. `<expr>.server_args` off an object of unknown type is a record only by
its name (a spec's `req.server_args.items()` is a dict): a member call is a
claim about the class, so only holders whose class is known (or named by the
codebase's record convention) count. Dunder names are the object protocol's,
which every class has: never gathered.

Asked by CTX204 (record-member-call), whose visitor gathers the calls and the
record classes' members under its id (KEY); `record_members` joins the members
over the record's lineage.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext
from ctxlint.facts.typed import Site, site
from ctxlint.facts.visitor import FileVisitor
from ctxlint.program.classes import class_index
from ctxlint.program.core import Program
from ctxlint.program.holders import Holder, HolderKind
from ctxlint.program.record_conventions import record_convention, record_names
from ctxlint.program.record_members import (
    Members,
    RecordMembers,
    class_members,
    is_record_class,
    record_members,
)

KEY = "CTX204"  # the rule whose facts these are
# the model parts it reads (the asking rule's requires): the record tracker, and
# the class index for the record's lineage
REQUIRES = ("classes", "records")
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


def called_members(program: Program) -> RecordMembers:
    """The record's members over its lineage, from the classes the visitor gathered."""
    return record_members(program, KEY, MemberCallFacts)


def wanted_tokens(program: Program) -> set[str]:
    """What the question still needs parsed (the rule's more_tokens): files naming
    a record holder, and the class statements of the record's ancestors."""
    lineage = class_index(program).linearization(program.vocab.record_class)
    return record_names(program) | {f"class {q.rpartition('.')[2]}" for q in lineage[1:]}


def member_calls(program: Program) -> Iterator[tuple[str, MemberCall]]:
    """(path, call) for each method call on a record instance: a named holder
    only where the codebase's record convention holds its name."""
    holders = record_convention(program)
    for path, module, facts in program.typed_facts(KEY, MemberCallFacts):
        for c in facts.calls:
            b = c.base
            if b.kind in NAMED and not holders.holds(b.name, module):  # type: ignore[arg-type]
                continue
            yield path, c
