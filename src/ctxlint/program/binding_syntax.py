"""What the syntax binds: the names a target, a parameter list or a whole
function binds, read off the tree without any scope state.

The pieces of the scope model (program.bindings) that need no walk: the
binding visitor asks them statement by statement. Importing this module
loads no LibCST (rules import the model's names on warm runs too).
"""

from __future__ import annotations

from collections.abc import Iterator

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import dotted


def target_names(target: cst.BaseExpression) -> Iterator[cst.Name]:
    """The names an assignment target binds (through tuples, lists, stars)."""
    if isinstance(target, cst.Name):
        yield target
    elif isinstance(target, (cst.Tuple, cst.List)):
        for e in target.elements:
            yield from target_names(e.value)
    elif isinstance(target, cst.StarredElement):
        yield from target_names(target.value)


def attribute_targets(target: cst.BaseExpression) -> Iterator[cst.Attribute]:
    """The attributes an assignment target binds (`self.x`, `a.b, c.d = ...`)."""
    if isinstance(target, cst.Attribute):
        yield target
    elif isinstance(target, (cst.Tuple, cst.List)):
        for e in target.elements:
            yield from attribute_targets(e.value)
    elif isinstance(target, cst.StarredElement):
        yield from attribute_targets(target.value)


def dynamic_base(call: cst.Call) -> cst.BaseExpression | None:
    """The first base of a class made by `type(name, (Base, ...), namespace)`."""
    args = [a.value for a in call.args if a.keyword is None and not a.star]
    if dotted(call.func) != "type" or len(args) != 3 or not isinstance(args[1], cst.Tuple):
        return None
    bases = args[1].elements
    if bases and isinstance(bases[0].value, (cst.Name, cst.Attribute)):
        return bases[0].value
    return None


def all_params(params: cst.Parameters) -> list[cst.Param]:
    return [
        *params.posonly_params,
        *params.params,
        *params.kwonly_params,
        *(p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)),
    ]


def decorator_names(node: cst.FunctionDef | cst.ClassDef) -> set[str]:
    """Last parts of the decorators' names (`abstractmethod` for `abc.abstractmethod`)."""
    return {(dotted(d.decorator) or "").rpartition(".")[2] for d in node.decorators}
