"""What names and `self` attributes hold, question by question: the values the
binding model (program.bindings) tracks for the parts and rules that ask.

A visitor registers a question with `Bindings.track(names, attrs)`; the model
hands each classifier a Bound at every binding it makes (after the value, as
Python binds) with the fact the name had before, and keeps the answers per
scope (names) and per class (`self` attributes) in the question's Tracked.
Importing this module loads no LibCST (rules import these names on warm runs).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import MODULE_SCOPE

if TYPE_CHECKING:
    from ctxlint.program.bindings import Bindings


@dataclass(frozen=True, slots=True)
class Bound:
    """A binding as a Tracked value's classifier sees it.

    kind: a Site kind (assignment, annotated assignment, augmented assignment,
    for target, with target, except target, walrus, parameter, import, def,
    nested def, class). value: what is bound: an assignment's or walrus's
    value, a with statement's context expression (not what `__enter__`
    returns: the classifier decides), None where there is none or a target
    unpacks it (`a, b = ...`)."""

    kind: str
    value: cst.BaseExpression | None = None
    target: cst.Name | None = None  # the name an assignment binds (to quote it)


# Bindings after which a name holds the bound value itself (a with target holds
# what `__enter__` returns: a question that knows better adds "with target")
VALUE_KINDS = frozenset(("assignment", "annotated assignment", "walrus"))
IMPORTED = Bound("import")
PARAMETER = Bound("parameter")
# (the binding, the name's or attribute's fact in that scope before it) -> its fact now
Classify = Callable[[Bound, Any], Any]


class Tracked:
    """What names and `self` attributes hold for one question, binding by binding.

    `names`: scope qualname -> name -> the classifier's fact for every name
    the scope binds (None: bound, to nothing the question cares about; an
    entry shadows outer scopes). `attrs`: class qualname -> attribute -> fact,
    for `self.X = value` in its methods (only when `attrs` classifies; None
    is no entry, so the order is that of the first facts)."""

    def __init__(self, model: Bindings, names: Classify | None, attrs: Classify | None) -> None:
        self.model = model
        self.classify = names
        self.classify_attr = attrs
        self.names: dict[str, dict[str, Any]] = {}
        self.attrs: dict[str, dict[str, Any]] = {}

    def here(self, name: str) -> Any:
        """The fact of `name` in the current scope only (a function's `global`
        names in the module's)."""
        return self.get(self.model.ctx.qualname, name)

    def get(self, scope: str, name: str) -> Any:
        """The fact of `name` in the scope `scope` (qualname in the module), or
        the module's where that function declared it `global`."""
        declared = self.model.globals_decl  # (mostly empty: the common path is two lookups)
        if declared and name in declared.get(scope, ()):
            scope = MODULE_SCOPE
        table = self.names.get(scope)
        return None if table is None else table.get(name)

    def lookup(self, name: str) -> Any:
        """The fact of `name` from the current scope out to the first class body
        (which methods see here, as records always read it), then the module's
        unless the current function binds the name itself (asked only of a
        fact: Python's local rule costs a pass over the function)."""
        scopes = self.model.ctx.scopes
        for s in reversed(scopes[1:]):
            table = self.names.get(s.qualname)
            if table is not None and name in table:
                return table[name]
            if s.kind == "class":
                break
        fact = self.names.get(MODULE_SCOPE, {}).get(name)
        if fact is not None and fact is not False and self.model.local_here(name):
            return None
        return fact

    def attr(self, cls: str | None, attr: str) -> Any:
        """The fact of `self.<attr>` in the class `cls` (qualname in the module)."""
        return None if cls is None else self.attrs.get(cls, {}).get(attr)
