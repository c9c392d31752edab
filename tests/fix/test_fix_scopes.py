"""fix.scopes: LibCST's scope analysis over the read-only visit gives exactly
what the stock resolution gives, node for node and name for name (layout
nodes, which the read-only visit skips, get no scope)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, ScopeProvider
from test_walk_positions import AWKWARD

from ctxlint.facts.walk import TRIVIA
from ctxlint.fix.scopes import resolve_scopes

REPO = Path(__file__).resolve().parents[2]

SCOPES = """\
from os import path as p, sep
import a.b.c
from . import sibling
from .mod import *

G = 1
__all__ = ["G", "f"]


def f(x: "p.Sep", *args: int, y=G, **kw) -> "List[int]":
    global G
    G = x
    z = [x + i for i in args if (w := i)]
    del kw

    def inner():
        nonlocal z
        z = lambda q=w: q + sep
        return z

    class Local:
        attr = x
        other = [attr for _ in range(3)]

        def m(self):
            return attr, self.attr, Local

    try:
        pass
    except ValueError as err:
        print(err)
    with open(p.join("a")) as (fh, *rest):
        for i, (j, k) in enumerate(fh):
            print({k: v for k, v in kw.items()}, {m for m in rest}, (n for n in j))
    match x:
        case [1, *others] | {"k": others}:
            print(others)
        case Point(x=0, y=yy) as whole:
            print(yy, whole)
    return inner, Local, a.b.c.d, sibling


@decorator(G)
class C(Base[int], metaclass=Meta):
    field: "C" = None
    cast("C", field)
    typed: TypeVar("T")


type Alias[T] = list[T]


def generic[T: int, *Ts, **P](x: T) -> T:
    return x
"""


# ids of the nodes of the tree compared: ScopeProvider parses string annotations
# into trees of their own, new on each resolution, whose nodes go by their code
_TREE: set[int] = set()


def _id(node: Any) -> Any:
    if node is None or id(node) in _TREE:
        return id(node)
    return type(node).__name__, cst.Module([]).code_for_node(node)


def _key(scope: Any) -> tuple[Any, ...]:
    return (type(scope).__name__, _id(getattr(scope, "node", None)), getattr(scope, "name", None))


def _node(obj: Any) -> Any:
    return _id(getattr(obj, "node", None))


class _Nodes(cst.CSTVisitor):
    def on_visit(self, node: cst.CSTNode) -> bool:
        _TREE.add(id(node))
        return True


def _describe(scope: Any) -> tuple[Any, ...]:
    assignments = sorted(
        (a.name, type(a).__name__, _node(a), _key(a.scope), sorted(_node(r) for r in a.references))
        for a in scope.assignments
    )
    accesses = sorted(
        (
            _node(acc),
            _key(acc.scope),
            sorted((r.name, _node(r)) for r in acc.referents),
            acc.is_annotation,
            acc.is_type_hint,
        )
        for acc in scope.accesses
    )
    parent = getattr(scope, "parent", None)
    return assignments, accesses, _key(parent) if parent is not scope else None


def _sources() -> list[str]:
    files = sorted((REPO / "src").rglob("*.py")) + sorted((REPO / "examples").rglob("*.py"))
    return [SCOPES, AWKWARD] + [p.read_text() for p in files]


@pytest.mark.parametrize("index", range(0, 50, 10))
def test_scopes_equal_the_stock_resolution(index: int) -> None:
    checked = many = 0
    for source in _sources()[index : index + 10]:
        module = cst.parse_module(source)
        _TREE.clear()
        module.visit(_Nodes())
        stock = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider)
        mine = resolve_scopes(module)
        laid_out = {id(n) for n in stock if type(n) in TRIVIA}
        assert {id(n) for n in mine} & _TREE == ({id(n) for n in stock} & _TREE) - laid_out
        scopes: dict[tuple[Any, ...], tuple[Any, Any]] = {}
        for node, scope in stock.items():
            if id(node) not in _TREE or id(node) in laid_out:
                continue
            other = mine[node]
            assert (scope is None) == (other is None)
            if scope is not None:
                assert _key(other) == _key(scope)
                scopes[_key(scope)] = (scope, other)
                checked += 1
        for scope, other in scopes.values():
            assert _describe(other) == _describe(scope)
        many += len(scopes)
    assert checked > 500 and many > 20


def test_the_stock_visit_is_back_afterwards() -> None:
    """Outside resolve_scopes a visit rebuilds as LibCST's does (a transformer's
    changes are kept), and a transformer inside it is not read-only either."""
    module = cst.parse_module("x = 1\n")

    class Rename(cst.CSTTransformer):
        def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.Name:
            return updated.with_changes(value="y")

    resolve_scopes(module)
    assert module.visit(Rename()).code == "y = 1\n"
    assert cst.CSTNode.visit.__name__ == "visit"
