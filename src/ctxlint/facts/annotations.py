"""The one annotation unwrapper: which classes an annotation names, and how.

`Optional[X]`, `X | None`, `Union[X, Y]`, `"X"` strings, `Annotated[X, ...]`,
`Final[X]` and `ClassVar[X]` name instances of X; `type[X]`/`Type[X]` names
the class X itself (a factory: calling it makes an X); a mapping whose values
are `type[X]` (`dict[str, type[X]]`) is a registry of X factories. Any other
subscript (a container) names nothing. Names are returned as expressions for
the caller to resolve in its own scope.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import dotted, string_value

UNION_HEADS = frozenset(("Optional", "Union"))
FIRST_HEADS = frozenset(("Annotated", "Final", "ClassVar"))  # the first element is the type
TYPE_HEADS = frozenset(("type", "Type"))
MAPPING_HEADS = frozenset(
    ("dict", "Dict", "Mapping", "MutableMapping", "OrderedDict", "defaultdict")
)
_MAX_DEPTH = 5


@dataclass
class Named:
    """The class expressions an annotation names, by role."""

    instances: list[cst.BaseExpression] = field(default_factory=list)
    factories: list[cst.BaseExpression] = field(default_factory=list)  # type[X]
    registries: list[cst.BaseExpression] = field(default_factory=list)  # dict[..., type[X]]

    def extend(self, other: Named) -> None:
        self.instances += other.instances
        self.factories += other.factories
        self.registries += other.registries


def parse_string(ann: cst.BaseExpression) -> cst.BaseExpression | None:
    """A string annotation's expression (`"X | None"`), the annotation itself
    when it is not a string, None when the string does not parse."""
    text = string_value(ann)
    if text is None:
        return ann
    try:
        return cst.parse_expression(text)
    except (cst.ParserSyntaxError, ValueError):
        return None


def head(sub: cst.Subscript) -> str:
    """`Optional` for `typing.Optional[...]`."""
    return (dotted(sub.value) or "").rpartition(".")[2]


def elements(sub: cst.Subscript) -> list[cst.BaseExpression]:
    return [e.slice.value for e in sub.slice if isinstance(e.slice, cst.Index)]


def is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def unwrap(ann: cst.BaseExpression, depth: int = 0) -> Named:
    """What an annotation names (see the module docstring)."""
    out = Named()
    if depth > _MAX_DEPTH:
        return out
    parsed = parse_string(ann)
    if parsed is None:
        return out
    ann = parsed
    if isinstance(ann, cst.BinaryOperation) and isinstance(ann.operator, cst.BitOr):
        out.extend(unwrap(ann.left, depth + 1))
        out.extend(unwrap(ann.right, depth + 1))
    elif isinstance(ann, cst.Subscript):
        name, elems = head(ann), elements(ann)
        if name in UNION_HEADS:
            for e in elems:
                out.extend(unwrap(e, depth + 1))
        elif name in FIRST_HEADS and elems:
            out.extend(unwrap(elems[0], depth + 1))
        elif name in TYPE_HEADS and elems:
            out.factories += unwrap(elems[0], depth + 1).instances
        elif name in MAPPING_HEADS and len(elems) == 2:
            out.registries += unwrap(elems[1], depth + 1).factories
    elif isinstance(ann, (cst.Name, cst.Attribute)) and not is_none(ann):
        out.instances.append(ann)
    return out


def instance_names(node: cst.Annotation | None) -> list[str]:
    """The dotted names of the classes an annotation names instances of (unwrap),
    kept as data in facts that outlive the tree (the vocabulary's schema)."""
    if node is None:
        return []
    return [n for n in map(dotted, unwrap(node.annotation).instances) if n]
