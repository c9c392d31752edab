"""One file to rewrite: its text, its LibCST tree with metadata, and its findings' nodes.

A finding's node is found again by its span: the file is parsed, positions
come from LibCST's PositionProvider, and the node of the expected kind whose
range is exactly the span is the one the rule reported.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import libcst as cst
from libcst.metadata import MetadataWrapper, ParentNodeProvider, PositionProvider, ScopeProvider

from ctxlint.core import pysource
from ctxlint.facts.context import import_bindings
from ctxlint.facts.extract import parse


@dataclass
class SourceFile:
    path: str  # relative to the project root
    module: str
    text: str
    tree: cst.Module = field(init=False)
    wrapper: MetadataWrapper = field(init=False)

    def __post_init__(self) -> None:
        # A copy of the tree carries the metadata; nodes are matched on it.
        self.wrapper = MetadataWrapper(parse(self.text))
        self.tree = self.wrapper.module

    @classmethod
    def read(cls, path: str, module: str, data: bytes, target: str) -> SourceFile:
        """The file, parsed; raises pysource.SourceError for one that is not
        valid Python (it is never touched) or not UTF-8 (written back as UTF-8)."""
        text = pysource.read(data, target)
        if text.encode("utf-8") != data:
            raise pysource.SourceError("not UTF-8 (the fix writes UTF-8 only)")
        return cls(path, module, text)

    @property
    def is_package(self) -> bool:
        return self.path.endswith("__init__.py")

    @cached_property
    def positions(self) -> Any:
        return self.wrapper.resolve(PositionProvider)

    @cached_property
    def scopes(self) -> Any:
        return self.wrapper.resolve(ScopeProvider)

    @cached_property
    def parents(self) -> Any:
        return self.wrapper.resolve(ParentNodeProvider)

    @cached_property
    def _by_span(self) -> dict[tuple[int, int, int, int], list[cst.CSTNode]]:
        out: dict[tuple[int, int, int, int], list[cst.CSTNode]] = {}
        for node, where in self.positions.items():
            key = (where.start.line, where.start.column + 1, where.end.line, where.end.column + 1)
            out.setdefault(key, []).append(node)
        return out

    def node_at(self, span: list[int] | tuple[int, ...], *kinds: type) -> cst.CSTNode | None:
        """The outermost node of one of `kinds` whose range is exactly `span`
        ([line, column, end_line, end_column], columns 1-based)."""
        found = [n for n in self._by_span.get(tuple(span), ()) if isinstance(n, kinds)]  # type: ignore[arg-type]
        if not found:
            return None
        # nested nodes of one kind sharing a range (`(a)` in `(a).b`): the outermost
        outer = [n for n in found if self.parents.get(n) not in found]
        return outer[0] if outer else found[0]

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parents.get(node)

    def line(self, node: cst.CSTNode) -> int:
        return int(self.positions[node].start.line)

    def imported(self, stmt: cst.Import | cst.ImportFrom) -> dict[str, str]:
        """Local name -> qualified target for an import statement of this file."""
        return import_bindings(stmt, self.module, self.is_package)

    def statement_of(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The statement line holding `node`."""
        while node is not None and not isinstance(
            node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)
        ):
            node = self.parents.get(node)
        return node
