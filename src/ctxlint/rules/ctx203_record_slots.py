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
from dataclasses import dataclass
from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, dotted, string_value
from ctxlint.facts.typed import Site, site
from ctxlint.facts.visitor import FileVisitor
from ctxlint.facts.vocab import Vocabulary
from ctxlint.program.classes import class_index
from ctxlint.program.core import Program
from ctxlint.program.record_members import (
    ATTR,
    FIELD,
    Members,
    class_members,
    is_record_class,
    record_members,
)
from ctxlint.program.rule import RawFinding, Rule

ID = "CTX203"


def public_slot_name(name: str) -> bool:
    """A name the rule holds to the contract: public, not the object protocol,
    not an UPPER_CASE constant."""
    return not name.startswith("_") and not name.isupper()


@dataclass(frozen=True, slots=True)
class SlotWrite:
    """A public attribute a method of a record class stores on its receiver."""

    cls: str
    name: str
    site: Site


@dataclass(frozen=True, slots=True)
class SlotFacts:
    classes: dict[str, Members]  # record class (or base) -> its members
    writes: tuple[SlotWrite, ...]


class RecordSlotsVisitor(FileVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.classes: dict[str, Members] = {}
        self.writes: list[SlotWrite] = []  # instance attributes written in methods
        self._class: list[str | None] = []  # the record class whose body we are in
        self._self: list[str | None] = []  # the receiver's name per open function

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        if is_record_class(self.ctx, node):
            q = f"{self.ctx.module}.{node.name.value}"
            members = class_members(self.ctx, node)
            # a class-body binding of a callable (`f = staticmethod(g)`) is no data slot
            self.classes[q] = members
            self._class.append(q)
        else:
            self._class.append(None)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self._class.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        params = [*node.params.posonly_params, *node.params.params]
        outer = self.ctx.scopes[-2] if len(self.ctx.scopes) > 1 else None
        direct = outer is not None and outer.kind == "class" and self._class and self._class[-1]
        decorators = {dotted(d.decorator) or "" for d in node.decorators}
        if direct and params and not decorators & {"staticmethod", "classmethod"}:
            self._self.append(params[0].name.value)
        else:
            self._self.append(self._self[-1] if self._self and not direct else None)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._self.pop()

    def _cls(self) -> str | None:
        return next((c for c in reversed(self._class) if c), None)

    def _write(self, node: cst.CSTNode, name: str) -> None:
        cls = self._cls()
        if cls is None or not public_slot_name(name):
            return
        self.writes.append(SlotWrite(cls, name, site(self.ctx, node)))

    def _target(self, node: cst.CSTNode, target: cst.BaseExpression) -> None:
        me = self._self[-1] if self._self else None
        if (
            me is not None
            and isinstance(target, cst.Attribute)
            and isinstance(target.value, cst.Name)
            and target.value.value == me
        ):
            self._write(node, target.attr.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for e in target.elements:
                self._target(node, e.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._target(node, t.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._target(node, node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node, node.target)

    def visit_Call(self, node: cst.Call) -> None:
        me = self._self[-1] if self._self else None
        if me is None or len(node.args) < 3:
            return
        if dotted(node.func) not in ("setattr", "object.__setattr__"):
            return
        first, second = node.args[0].value, node.args[1].value
        name = string_value(second)
        if isinstance(first, cst.Name) and first.value == me and name is not None:
            self._write(node, name)

    def finish(self) -> SlotFacts | None:
        if not self.classes and not self.writes:
            return None
        return SlotFacts(self.classes, tuple(self.writes))


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
        m = record_members(program, ID, SlotFacts)
        return {
            "record lineage": m.lineage,
            "public non-field members": sorted(
                f"{n} ({d[0]})"
                for n, d in m.defined.items()
                if public_slot_name(n) and n not in program.vocab.fields and d[0] != FIELD
            ),
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
        m = record_members(program, ID, SlotFacts)
        if not m.lineage:
            return
        fields = set(program.vocab.fields)
        record = program.vocab.record_name
        lineage = set(m.lineage)
        for path, _, facts in program.typed_facts(ID, SlotFacts):
            for q, members in facts.classes.items():
                if q not in lineage:
                    continue
                for name, d in members.items():
                    if d.kind != ATTR or name in fields or not public_slot_name(name):
                        continue
                    yield RawFinding(
                        ID,
                        path,
                        q.rpartition(".")[2],
                        f"{name} = ...",
                        d.span,
                        f"class attribute `{name}` on {record} is not a field: a public data "
                        f"slot on the record reads as config; make it `_{name}` or move it "
                        "off the record",
                        data={"member": name},
                    )
            for w in facts.writes:
                name = w.name
                if w.cls not in lineage or name in fields:
                    continue
                if name in m.defined and m.defined[name][0] not in (ATTR, FIELD):
                    continue  # a property's setter: computed, not a slot
                yield RawFinding(
                    ID,
                    path,
                    w.site.scope,
                    w.site.snippet,
                    w.site.span,
                    f"`{name}` stored on {record} is not a field: state the record keeps "
                    f"outside its fields is private (`_{name}`), so nothing reads it as config",
                    data={"member": name},
                )


RULE = RecordSlots()
