"""Where the record class and its bases keep public data beside their fields
(asked by CTX203).

A *data slot* is a public name (no leading underscore, not an UPPER_CASE
constant) that a class of the record's lineage (program/record_members) keeps
as data and that is no field: a class attribute bound to a value, or an
instance attribute one of its methods stores on its receiver (`self.x = ...`,
`setattr(self, "x", ...)`, `object.__setattr__(self, "x", ...)`). A store to a
property's name is its setter, computed: no slot.

`RecordSlotsVisitor` gathers the record classes' members and their methods'
stores; `data_slots` answers from them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, dotted, string_value
from ctxlint.facts.typed import Site, Span, site
from ctxlint.facts.visitor import FileVisitor
from ctxlint.program.core import Program
from ctxlint.program.record_members import (
    ATTR,
    FIELD,
    Members,
    RecordMembers,
    class_members,
    is_record_class,
    record_members,
)


def public_slot_name(name: str) -> bool:
    """A name held to the contract: public, not the object protocol, not an
    UPPER_CASE constant."""
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


@dataclass(frozen=True, slots=True)
class ClassSlot:
    """A public class attribute of a record class that is no field."""

    cls: str
    name: str
    span: Span


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
            self.classes[q] = class_members(self.ctx, node)
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

    def _write(self, node: cst.CSTNode, name: str) -> None:
        cls = next((c for c in reversed(self._class) if c), None)
        if cls is not None and public_slot_name(name):
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


def slot_members(program: Program, key: str) -> RecordMembers:
    """The record's members over its lineage, from the facts under `key`."""
    return record_members(program, key, SlotFacts)


def public_non_fields(program: Program, key: str) -> list[str]:
    """`name (kind)` of each public member of the lineage that is no field."""
    m = slot_members(program, key)
    return sorted(
        f"{n} ({d[0]})"
        for n, d in m.defined.items()
        if public_slot_name(n) and n not in program.vocab.fields and d[0] != FIELD
    )


def data_slots(program: Program, key: str) -> Iterator[tuple[str, ClassSlot | SlotWrite]]:
    """(path, slot) of every data slot of the record's lineage, by file: its
    classes' attributes, then its methods' stores."""
    m = slot_members(program, key)
    if not m.lineage:
        return
    fields = set(program.vocab.fields)
    lineage = set(m.lineage)
    for path, _, facts in program.typed_facts(key, SlotFacts):
        for q, members in facts.classes.items():
            if q not in lineage:
                continue
            for name, d in members.items():
                if d.kind == ATTR and name not in fields and public_slot_name(name):
                    yield path, ClassSlot(q, name, d.span)
        for w in facts.writes:
            if w.cls not in lineage or w.name in fields:
                continue
            if w.name in m.defined and m.defined[w.name][0] not in (ATTR, FIELD):
                continue  # a property's setter: computed, not a slot
            yield path, w
