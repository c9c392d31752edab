"""A read-only pre/post-order walk of a LibCST tree.

`CSTNode.visit` rebuilds every node through `_visit_and_replace_children`
(dataclass construction and validation per node), which costs as much as the
parse even for a visitor that changes nothing. This walk reads the same
children in the same order straight off the fields, and skips whitespace,
comment and punctuation nodes, which no rule visits.

The child order per node class is read once from LibCST's own
`_visit_and_replace_children` (the field names it passes, in source order), so
the walk follows LibCST's order without a hand-kept table; a test compares the
two walks node for node.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
import typing
from collections.abc import Callable
from typing import Any

import libcst as cst

# Node classes that carry layout only (whitespace, comments, brackets, commas,
# operators' tokens): never visited, never descended into.
_TRIVIA_BASES: tuple[type, ...] = (
    cst.BaseParenthesizableWhitespace,
    cst.EmptyLine,
    cst.TrailingWhitespace,
    cst.Newline,
    cst.Comment,
    cst.LeftParen,
    cst.RightParen,
    cst.LeftSquareBracket,
    cst.RightSquareBracket,
    cst.LeftCurlyBrace,
    cst.RightCurlyBrace,
    cst.Comma,
    cst.Dot,
    cst.Colon,
    cst.Semicolon,
    cst.AssignEqual,
    cst.ImportStar,
)


def _subclasses(base: type) -> set[type]:
    out = {base}
    for sub in base.__subclasses__():
        out |= _subclasses(sub)
    return out


TRIVIA: frozenset[type] = frozenset().union(*(_subclasses(b) for b in _TRIVIA_BASES))
# Node classes the walk descends into. Exact type lookups: CSTNode is an ABC, and
# isinstance against an ABC costs a slow __instancecheck__ per call.
WALKED: frozenset[type] = frozenset(_subclasses(cst.CSTNode) - TRIVIA)
_SEQUENCES = (list, tuple)

_FIELDS: dict[type, tuple[str, ...]] = {}
_REVERSED: dict[type, tuple[str, ...]] = {}  # the walk pushes children last first


def _field_order(cls: type) -> tuple[str, ...]:
    """The field names `_visit_and_replace_children` visits, in its order."""
    try:
        source = textwrap.dedent(inspect.getsource(cls._visit_and_replace_children))  # type: ignore[attr-defined]
    except (OSError, TypeError):  # no source: fall back to the declared order
        return tuple(f for f in cls.__dataclass_fields__)  # type: ignore[attr-defined]
    calls = [
        node
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id.startswith("visit_")
        and len(node.args) >= 2
        and isinstance(node.args[1], ast.Constant)
        and isinstance(node.args[1].value, str)
    ]
    calls.sort(key=lambda c: (c.lineno, c.col_offset))
    names: list[str] = []
    for c in calls:
        name = c.args[1].value  # type: ignore[attr-defined]
        if name not in names:
            names.append(name)
    return tuple(names)


def _may_hold_nodes(hint: object) -> bool:
    """False only for a type hint that admits nothing but layout, None, str or
    MaybeSentinel (`Sequence[LeftParen]`, `BaseParenthesizableWhitespace`); a
    hint left as a string (a forward reference) may hold anything."""
    args = typing.get_args(hint)
    if args:
        return any(_may_hold_nodes(arg) for arg in args)
    if hint in (type(None), str, cst.MaybeSentinel):
        return False
    return not (isinstance(hint, type) and issubclass(hint, _TRIVIA_BASES))


def walked_fields(cls: type) -> tuple[str, ...]:
    """fields_of(cls) less the fields whose declared type is layout only: about
    two thirds of them, which the walk need not read at all."""
    declared = getattr(cls, "__dataclass_fields__", {})
    return tuple(
        name
        for name in fields_of(cls)
        if name not in declared or _may_hold_nodes(declared[name].type)
    )


def fields_of(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = _field_order(cls)
    return names


_LEAVE = object()  # on the stack above a node whose children are done


def walk(
    node: cst.CSTNode,
    on_visit: Callable[[cst.CSTNode], object],
    on_leave: Callable[[cst.CSTNode], object],
) -> None:
    """Call on_visit before and on_leave after each non-trivia node's children.

    Iterative, with its own stack: valid code nests deeper than Python's
    recursion limit (a thousand `elif`s, concatenated strings or `and`s). A
    node goes back on the stack under a leave marker, then its children in
    reverse, so they come off in LibCST's order."""
    stack: list[Any] = [node]
    pop, push = stack.pop, stack.append
    walked, sequences, fields, leave = WALKED, _SEQUENCES, _REVERSED, _LEAVE
    while stack:
        item = pop()
        if item is leave:
            on_leave(pop())
            continue
        on_visit(item)
        push(item)
        push(leave)
        names = fields.get(type(item))
        if names is None:
            names = fields[type(item)] = walked_fields(type(item))[::-1]
        for name in names:
            value = getattr(item, name)
            kind = type(value)
            if kind in walked:
                push(value)
            elif kind in sequences:
                for child in reversed(value):
                    if type(child) in walked:
                        push(child)


def descend(node: cst.CSTNode, on_visit: Callable[[cst.CSTNode], object]) -> None:
    """Call on_visit on each non-trivia node, before its children, which are
    skipped where it returns False (as a LibCST visitor's `visit_X`): `walk`
    with no leave and the same children, not LibCST's rebuilding `visit`."""
    stack: list[Any] = [node]
    pop, push = stack.pop, stack.append
    walked, sequences, fields = WALKED, _SEQUENCES, _REVERSED
    while stack:
        item = pop()
        if on_visit(item) is False:
            continue
        names = fields.get(type(item))
        if names is None:
            names = fields[type(item)] = walked_fields(type(item))[::-1]
        for name in names:
            value = getattr(item, name)
            kind = type(value)
            if kind in walked:
                push(value)
            elif kind in sequences:
                for child in reversed(value):
                    if type(child) in walked:
                        push(child)
