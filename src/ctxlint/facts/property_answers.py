"""What a property answers: the values its returns give, a getter defined inside
it followed (`return self._v("dcp_enabled", getter)` answers what `getter`
returns). A visitor feeds it its defs and returns; a property's answers come
back when its def closes."""

from __future__ import annotations

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import dotted
from ctxlint.facts.declarations import PROPERTY_DECORATORS


class PropertyAnswers:
    def __init__(self) -> None:
        self._defs: list[tuple[str, bool]] = []  # (enclosing property or "", is a property)
        self._nested: dict[str, set[str]] = {}  # property -> functions defined inside it
        self._returns: dict[str, list[cst.BaseExpression]] = {}

    def enter(self, node: cst.FunctionDef) -> None:
        prop = any(dotted(d.decorator) in PROPERTY_DECORATORS for d in node.decorators)
        outer = self._defs[-1][0] if self._defs else ""
        if prop:
            self._defs.append((node.name.value, True))
            return
        if outer:
            self._nested.setdefault(outer, set()).add(node.name.value)
        self._defs.append((outer, False))

    def returned(self, node: cst.Return) -> None:
        prop = self._defs[-1][0] if self._defs else ""
        if not prop:
            return
        value = node.value if node.value is not None else cst.Name("None")
        if isinstance(value, cst.Call):  # a getter defined inside, called or handed on
            named = [value.func, *(a.value for a in value.args)]
            if any(
                isinstance(n, cst.Name) and n.value in self._nested.get(prop, ()) for n in named
            ):
                return
        self._returns.setdefault(prop, []).append(value)

    def leave(self) -> tuple[str, list[cst.BaseExpression]] | None:
        """(the property, every value it answers) when the def closing is a property."""
        name, prop = self._defs.pop()
        if not prop:
            return None
        self._nested.pop(name, None)
        return name, self._returns.pop(name, [])
