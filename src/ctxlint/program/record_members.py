"""What the record class and its ancestors define: every member, by kind.

The class index keeps methods and typed attributes; the record's guardrails
(CTX203 no public non-field slot, CTX204 member calls resolve) need every name
a class body binds: methods (with their decorator kind), properties, class
attributes and fields. A rule's visitor gathers them with `class_members` for
the classes the vocabulary derived as the record and its bases; `record_members`
joins them over the class index's C3 lineage of the record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, dotted, string_value
from ctxlint.facts.declarations import PROPERTY_DECORATORS, field_name
from ctxlint.facts.typed import Span
from ctxlint.program.classes import class_index
from ctxlint.program.core import Program

# member kinds (the facts' values)
FIELD, ATTR, METHOD, STATIC, CLASSMETHOD, PROPERTY = (
    "field",
    "attr",
    "method",
    "staticmethod",
    "classmethod",
    "property",
)
# the one ancestor every class has, whose members are the object protocol (dunders)
ROOTS = {"object", "builtins.object"}


@dataclass(frozen=True, slots=True)
class Member:
    """A name a class body binds: its kind (FIELD, ATTR, METHOD...) and where."""

    kind: str
    span: Span


# a class's members, by name
Members = dict[str, Member]


class ClassesFacts(Protocol):
    """A rule's typed facts holding the record classes' members (CTX203, CTX204)."""

    @property
    def classes(self) -> dict[str, Members]: ...  # qualified class -> its members


def _kind(fn: cst.FunctionDef) -> str:
    names = {dotted(d.decorator) or "" for d in fn.decorators}
    if names & PROPERTY_DECORATORS or any(
        n.rpartition(".")[2] == "cached_property" or n.endswith((".setter", ".deleter"))
        for n in names
    ):
        return PROPERTY
    if "staticmethod" in names:
        return STATIC
    if "classmethod" in names:
        return CLASSMETHOD
    return METHOD


def class_members(ctx: FileContext, node: cst.ClassDef) -> Members:
    """Every name the class body binds (the first binding wins, except that a def
    after a field of its name is what the class ends up with)."""
    out: Members = {}

    def bind(name: str, kind: str, where: cst.CSTNode) -> None:
        if name not in out:
            out[name] = Member(kind, ctx.anchor(where))  # type: ignore[arg-type]

    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    for stmt in body:
        if isinstance(stmt, cst.FunctionDef):
            bind(stmt.name.value, _kind(stmt), stmt.name)
        elif isinstance(stmt, cst.ClassDef):
            bind(stmt.name.value, ATTR, stmt.name)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                    kind = FIELD if field_name(small, ctx.module_node) else ATTR
                    bind(small.target.value, kind, small)
                elif isinstance(small, cst.Assign):
                    for t in small.targets:
                        if isinstance(t.target, cst.Name):
                            bind(t.target.value, ATTR, small)
    return out


def is_record_class(ctx: FileContext, node: cst.ClassDef) -> bool:
    """A module-level class the vocabulary derived as the record or one of its bases."""
    vocab = ctx.vocab
    if vocab is None or len(ctx.scopes) != 2:  # the module's, then this class's
        return False
    q = f"{ctx.module}.{node.name.value}"
    return q == vocab.record_class or q in vocab.record_classes


@dataclass(frozen=True, slots=True)
class RecordMembers:
    lineage: list[str]  # the record and its ancestors, C3 order
    # name -> (kind, defining class, path, span), nearest class in the lineage first
    defined: dict[str, tuple[str, str, str, list[int]]]
    unknown: list[str]  # ancestors whose members no fact gives (outside the tree)

    @property
    def members(self) -> set[str]:
        return set(self.defined)


def record_members(program: Program, facts_key: str, kind: type[ClassesFacts]) -> RecordMembers:
    """The record's members over its lineage, from the `classes` of the typed facts
    (`kind`) a rule's visitor filed under `facts_key`."""

    def build() -> RecordMembers:
        found: dict[str, tuple[str, Members]] = {}
        for path, _, facts in program.typed_facts(facts_key, kind):
            for q, members in facts.classes.items():
                found.setdefault(q, (path, members))
        record = program.vocab.record_class
        if record not in found:
            return RecordMembers([], {}, [])
        lineage = class_index(program).linearization(record)
        defined: dict[str, tuple[str, str, str, list[int]]] = {}
        unknown = []
        for q in lineage:
            if q in ROOTS:
                continue
            if q not in found:
                unknown.append(q)
                continue
            path, members = found[q]
            for name, m in members.items():
                defined.setdefault(name, (m.kind, q, path, m.span))
        return RecordMembers(lineage, defined, unknown)

    return program.memo(f"record members {facts_key}", build)


def _self_names(fn: cst.FunctionDef, receiver: str) -> set[str] | None:
    """What a method's body reads off its receiver (`self.x`, a literal
    `getattr`/`hasattr`); None when it hands `self` on any other way (then it
    may read anything). A walk, not a CSTVisitor subclass: a class body here
    would load LibCST when the rules are imported on a warm run."""
    names: set[str] = set()
    seen: set[int] = set()  # the receiver's Name nodes accounted for
    stack: list[cst.CSTNode] = [fn.body]
    while stack:
        node = stack.pop()  # parents before their children, as a visitor
        if isinstance(node, cst.Attribute):
            if isinstance(node.value, cst.Name) and node.value.value == receiver:
                names.add(node.attr.value)
                seen.add(id(node.value))
        elif isinstance(node, cst.Call):
            if dotted(node.func) in ("getattr", "hasattr") and len(node.args) >= 2:
                obj, key = node.args[0].value, string_value(node.args[1].value)
                if isinstance(obj, cst.Name) and obj.value == receiver and key is not None:
                    names.add(key)
                    seen.add(id(obj))
        elif isinstance(node, cst.Name) and node.value == receiver and id(node) not in seen:
            return None
        stack.extend(reversed(node.children))
    return names


def properties_reading_nothing(node: cst.ClassDef, fields: set[str]) -> list[str]:
    """The class's properties that read no configuration: their body touches the
    receiver only for names that are neither fields nor members of the class
    (SGLang's provenance `launch_command`), and hands it nowhere else."""
    return list(_unbacked(node, fields))


def provenance_slots(node: cst.ClassDef, fields: set[str]) -> dict[str, str]:
    """Slot -> property, for each property reading no configuration that reads
    one slot alone: it returns what was written there, from no other input
    (SGLang's `launch_command` is `getattr(self, "_launch_command", None)`)."""
    return {next(iter(u)): p for p, u in _unbacked(node, fields).items() if len(u) == 1}


def _unbacked(node: cst.ClassDef, fields: set[str]) -> dict[str, set[str]]:
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    defs = [s for s in body if isinstance(s, cst.FunctionDef)]
    members = {d.name.value for d in defs} | fields
    out = {}
    for d in defs:
        if _kind(d) != PROPERTY or not d.params.params:
            continue
        used = _self_names(d, d.params.params[0].name.value)
        if used is not None and not used & members:
            out[d.name.value] = used
    return out
