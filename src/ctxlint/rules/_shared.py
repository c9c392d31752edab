"""Small helpers several rules share (not a rule: no RULE defined here)."""

from __future__ import annotations

import libcst as cst

from ctxlint.filecontext import FileContext
from ctxlint.rule import FileVisitor
from ctxlint.vocab import Vocabulary


def bag_spelling(vocab: Vocabulary, field: str) -> str | None:
    """Where a record field should be read from: `get_exec().moe.field`."""
    ns = vocab.fields.get(field)
    if not ns:
        return None
    top, _, sub = ns.partition(".")
    for accessor, namespace in vocab.bag_accessors.items():
        if namespace == top:
            return f"{accessor}()" + (f".{sub}" if sub else "") + f".{field}"
    return None


def is_builtin_call(ctx_resolve: object, call: cst.Call, name: str) -> bool:
    """`getattr(...)`-style call of a builtin, by bare name."""
    return isinstance(call.func, cst.Name) and call.func.value == name


def positional(call: cst.Call) -> list[cst.BaseExpression]:
    return [a.value for a in call.args if a.keyword is None and not a.star]


class ReadVisitor(FileVisitor):
    """A visitor of attribute *reads*: it marks the nodes being written (assignment,
    `del`, `for`/`with` targets), which are CTX201's business, so `is_write`
    tells a load from a store."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.targets: set[int] = set()

    def is_write(self, node: cst.CSTNode) -> bool:
        return id(node) in self.targets

    def _mark(self, target: cst.BaseExpression) -> None:
        self.targets.add(id(target))
        if isinstance(target, (cst.Tuple, cst.List)):
            for e in target.elements:
                self._mark(e.value)
        elif isinstance(target, cst.StarredElement):
            self._mark(target.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._mark(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._mark(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._mark(node.target)

    def visit_Del(self, node: cst.Del) -> None:
        self._mark(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._mark(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._mark(node.asname.name)
