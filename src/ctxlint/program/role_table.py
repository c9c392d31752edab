"""A role table: read from its literal (`{"role": None | {namespaces}}`, as
CTX302 finds it in the runtime module), and how its entries are spelled in
CTX302's derived sets: the rule writes them, `ctxlint roles` (report/roles.py)
reads them back."""

from __future__ import annotations

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import string_value
from ctxlint.program.config_sites import namespace_set

FULL = "(full tree)"  # a role the table does not restrict (`None`), as the sets show it


def set_text(members: frozenset[str] | None) -> str:
    """A role's namespace set as a message shows it: `{a, b}`, or the full tree."""
    return FULL if members is None else "{" + ", ".join(sorted(members)) + "}"


def allowed(shown: str | list[str]) -> frozenset[str] | None:
    """A role's namespace set as the sets show it, read back (None: the full tree)."""
    return None if shown == FULL else frozenset(shown)


def _namespace_set(expr: cst.BaseExpression) -> list[str] | bool | None:
    """The strings of `None` / `{...}` / `frozenset({...})` / `set([...])`; False
    when `expr` is none of those shapes (None stands for the full tree)."""
    nodes = namespace_set(expr)
    if not isinstance(nodes, list):
        return nodes
    return sorted({value for n in nodes if (value := string_value(n)) is not None})


def role_table_literal(expr: cst.BaseExpression) -> dict[str, list[str] | None] | None:
    """`{"role": None | set of strings, ...}`, bare or wrapped in one call
    (`MappingProxyType({...})`); None for any other value."""
    if isinstance(expr, cst.Call) and len(expr.args) == 1 and expr.args[0].keyword is None:
        expr = expr.args[0].value
    if not isinstance(expr, cst.Dict) or not expr.elements:
        return None
    table: dict[str, list[str] | None] = {}
    for el in expr.elements:
        if not isinstance(el, cst.DictElement):
            return None
        role = string_value(el.key)
        members = _namespace_set(el.value)
        if role is None or members is False:
            return None
        table[role] = members  # type: ignore[assignment]
    return table
