"""The enclosing `if` statements, each with what a visitor read off its test and
whether the node being visited sits in its body (not its `elif` or `else`)."""

from __future__ import annotations

from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext
from ctxlint.facts.visitor import FileVisitor


class IfBranches(FileVisitor):
    """A subclass says what it reads off a test (`branch_test`)."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.ifs: list[list[Any]] = []  # [what branch_test gave, in its body, id(orelse)]

    def branch_test(self, test: cst.BaseExpression) -> Any:
        raise NotImplementedError

    def visit_If(self, node: cst.If) -> None:
        if self.ifs and self.ifs[-1][2] == id(node):
            self.ifs[-1][1] = False  # an `elif` is the parent's else branch
        orelse = id(node.orelse) if node.orelse is not None else None
        self.ifs.append([self.branch_test(node.test), True, orelse])

    def visit_Else(self, node: cst.Else) -> None:
        if self.ifs:
            self.ifs[-1][1] = False

    def leave_If(self, node: cst.If) -> None:
        self.ifs.pop()
