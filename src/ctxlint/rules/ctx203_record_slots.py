"""CTX203 record-slots: the record stores its fields and nothing public besides.

`ServerArgs` holds the operator's raw input and nothing else. State the record
keeps outside its fields (resolution bookkeeping, a memo: SGLang's msgspec
record is `dict=True` for exactly that) is `_private`, so nothing reads it as
if it were config. Reported, on the record class and the classes it inherits
from (the class index's lineage): a public name that is not a field and that
the class stores as data, namely

- an instance attribute a method writes (`self.x = ...`, `setattr(self, "x",
  ...)`, `object.__setattr__(self, "x", ...)`);
- a class attribute bound to a value (`x = []`), which every instance shares
  and a reader takes for a field.

Methods and properties compute, they store nothing: not slots. Dunder names
are the object protocol's; UPPER_CASE class constants are constants, not
per-record state. A name that is a field (of the record or a field class) is
the record's own.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxlint.facts.vocab import Vocabulary
from ctxlint.program.classes import class_index
from ctxlint.program.core import Program
from ctxlint.program.record_slots import (
    ClassSlot,
    RecordSlotsVisitor,
    data_slots,
    public_non_fields,
    slot_members,
)
from ctxlint.program.rule import RawFinding, Rule

ID = "CTX203"


class RecordSlots(Rule):
    id = ID
    name = "record-slots"
    summary = "No public non-field data slot on the record: what it keeps besides is _private"
    visitor = RecordSlotsVisitor
    requires = ("classes", "records")

    def tokens(self, vocab: Vocabulary) -> set[str]:
        modules = {vocab.record_module, *(q.rpartition(".")[0] for q in vocab.record_classes)}
        return {f"module:{m}" for m in modules}

    def more_tokens(self, program: Program) -> set[str]:
        lineage = class_index(program).linearization(program.vocab.record_class)
        return {f"class {q.rpartition('.')[2]}" for q in lineage[1:]}

    def derive(self, program: Program) -> dict[str, Any]:
        m = slot_members(program, ID)
        return {
            "record lineage": m.lineage,
            "public non-field members": public_non_fields(program, ID),
            "ancestors outside the tree": m.unknown,
        }

    def partial(self, sets: dict[str, Any]) -> str | None:
        unknown = sets.get("ancestors outside the tree")
        if unknown:
            return f"the record inherits from {', '.join(unknown)}, outside the parsed tree"
        if sets.get("record lineage") == []:
            return "the record class is not in the parsed tree: nothing is checked"
        return None

    def check(self, program: Program) -> Iterable[RawFinding]:
        record = program.vocab.record_name
        for path, slot in data_slots(program, ID):
            name = slot.name
            if isinstance(slot, ClassSlot):
                yield RawFinding(
                    ID,
                    path,
                    slot.cls.rpartition(".")[2],
                    f"{name} = ...",
                    slot.span,
                    f"class attribute `{name}` on {record} is not a field: a public data "
                    f"slot on the record reads as config; make it `_{name}` or move it "
                    "off the record",
                    data={"member": name},
                )
                continue
            yield RawFinding(
                ID,
                path,
                slot.site.scope,
                slot.site.snippet,
                slot.site.span,
                f"`{name}` stored on {record} is not a field: state the record keeps "
                f"outside its fields is private (`_{name}`), so nothing reads it as config",
                data={"member": name},
            )


RULE = RecordSlots()
