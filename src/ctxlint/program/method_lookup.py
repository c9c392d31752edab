"""Does `x.name` find a method: the class index's answer for a receiver as one
file's walk saw it.

A visitor keeps the receiver of a member use as a MemberReceiver (the binding
model's Receiver, serialised: `self`, `super()`, a typed local, `self.attr`, a
qualified name); a rule asks `find_method` of the class index (program.classes)
once the whole program is known: a class of the tree that defines the method
(C3 MRO, re-exports, inheritance), one outside the tree (a library type, which
may), or where the lookup fails and why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ctxlint.core.lazy_libcst import cst
from ctxlint.program.bindings import Bindings
from ctxlint.program.classes import ClassIndex

# what the receiver is: a method's `self` ("class"), `super()`, a local typed by
# its value ("types"), `self.attr`, a qualified name ("ref"), or not known
ReceiverKind = Literal["class", "super", "types", "selfattr", "ref", "unknown"]
# why a lookup fails: the receiver's types, the class named, an instance's class
# or the module named define no such method, or the receiver's class is unknown
Missing = Literal["types", "class", "instance", "module", "unknown"]


@dataclass(frozen=True, slots=True)
class MemberReceiver:
    kind: ReceiverKind
    via: str = ""  # how the code spells it (quoted in messages)
    cls: str | None = None  # class, super, selfattr: the (enclosing) class
    attr: str | None = None  # selfattr: the attribute
    types: list[str] = field(default_factory=list)  # types: its classes or callees
    name: str | None = None  # ref: the qualified name


def member_receiver(model: Bindings, expr: cst.BaseExpression) -> MemberReceiver:
    """The receiver `expr` of a member use, as the binding model tells it here
    (names bound at module level by qualified name: the class index types a
    module-level instance)."""
    r = model.receiver(expr, module=False)
    if r.kind in ("self", "super"):
        return MemberReceiver("class" if r.kind == "self" else "super", r.via, cls=r.cls)
    if r.kind == "local" and r.binding is not None:
        types = [*r.binding.instances, *r.binding.factories]
        if types:
            return MemberReceiver("types", r.via, types=types)
    elif r.kind == "selfattr":
        return MemberReceiver("selfattr", r.via, cls=r.cls, attr=r.attr)
    elif r.kind == "name" and r.name is not None:
        return MemberReceiver("ref", r.via, name=r.name)
    return MemberReceiver("unknown", r.via or model.ctx.snippet(expr))


@dataclass(frozen=True, slots=True)
class MethodLookup:
    """found: the use may call a method (a class defining it, a library type or
    class); else `missing` says where the lookup failed, `owner` names what
    lacks it, and `classes` holds the tree's classes (bases included) an object
    of the receiver's types is (a rule may know attributes they declare)."""

    found: bool
    missing: Missing | None = None
    owner: str | None = None
    classes: frozenset[str] = frozenset()


FOUND = MethodLookup(True)


def has_method(index: ClassIndex, types: list[str], name: str) -> str:
    """ "yes"/"maybe"/"no": does an object of one of `types` (classes, or
    callees: a function's return class) have method `name`."""
    verdicts = []
    for t in types:
        classes = index.instances(t)
        if classes:
            verdicts += [index.defines(c, name) for c in classes]
        else:
            verdicts.append("maybe" if index.external(t) else "no")
    return "yes" if "yes" in verdicts else "maybe" if "maybe" in verdicts else "no"


def find_method(index: ClassIndex, recv: MemberReceiver, name: str) -> MethodLookup:
    """Whether `recv.name` can find a method (see MethodLookup)."""
    if recv.kind == "super":
        cls = recv.cls
        assert cls is not None
        if index.definer(cls, name, skip_self=True) is not None:
            return FOUND
        if index.defines(cls, name) == "maybe":  # an ancestor outside the tree
            return FOUND
        return MethodLookup(False, "types", cls)
    types: list[str] = []
    if recv.kind == "class":
        types = [recv.cls]  # type: ignore[list-item]
    elif recv.kind == "types":
        types = recv.types
    elif recv.kind == "selfattr" and recv.cls is not None:
        types = index.attr_types(recv.cls, recv.attr)  # type: ignore[arg-type]
    if types:
        if has_method(index, types, name) != "no":
            return FOUND  # a class defining it, or a library type (`tensor.get_device()`)
        classes = frozenset(a for t in types for c in index.instances(t) for a in index.mro(c))
        return MethodLookup(False, "types", types[0], classes)
    if recv.kind == "ref":
        return _find_on_name(index, recv.name, name)  # type: ignore[arg-type]
    return MethodLookup(False, "unknown")


def _find_on_name(index: ClassIndex, q: str, name: str) -> MethodLookup:
    """`q.name` for a qualified name `q`: a class, a module-level instance, a
    library's name or a module of the tree."""
    cls = index.resolve(q)
    if cls is not None:
        return FOUND if index.defines(cls, name) != "no" else MethodLookup(False, "class", cls)
    typed = index.instance(q)
    if typed is not None:
        if has_method(index, [typed], name) != "no":
            return FOUND
        return MethodLookup(False, "instance", typed)
    if index.external(q):
        return FOUND  # a library's own API (`torch.get_device`)
    if q in index.modules:
        return MethodLookup(False, "module", q)
    return MethodLookup(False, "unknown")


def defining(index: ClassIndex, names: set[str]) -> dict[str, list[str]]:
    """Method name -> the tree's classes defining a method of that name."""
    out: dict[str, list[str]] = {}
    for q, c in sorted(index.classes.items()):
        for m in sorted(set(c.methods) & names):
            out.setdefault(m, []).append(q)
    return out
