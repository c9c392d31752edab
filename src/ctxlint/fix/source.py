"""One file to rewrite: its text, its LibCST tree, and its findings' nodes.

A finding's node is found again by its span: the file is parsed, every node
placed by one codegen pass (facts.positions.NodeWalk: PositionProvider's
placement, the one the rules anchored their findings with, at a fraction of
its cost, and each node's parent), and the node of the expected kind whose
range is exactly the span is the one the rule reported. The tree is parsed
only when a fixer asks for it, and scopes (LibCST's ScopeProvider, over a
read-only visit: fix.scopes) are resolved only for a file whose sites need them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import libcst as cst

from ctxlint.core import pysource
from ctxlint.facts.context import import_bindings
from ctxlint.facts.extract import parse
from ctxlint.facts.positions import NodeWalk
from ctxlint.fix.scopes import resolve_scopes


@dataclass
class SourceFile:
    path: str  # relative to the project root
    module: str
    text: str

    @cached_property
    def tree(self) -> cst.Module:
        # parsed when a fixer first asks: a file whose sites all say why
        # without looking (an unsafe fix not asked for) is never parsed again
        return parse(self.text)

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
    def walk(self) -> NodeWalk:
        return NodeWalk(self.tree)

    def mentions(self, name: str) -> bool:
        """The file spells the identifier `name` somewhere (code, strings or comments)."""
        found = self._mentioned.get(name)
        if found is None:
            found = self._mentioned[name] = bool(
                re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", self.text)
            )
        return found

    @cached_property
    def _mentioned(self) -> dict[str, bool]:
        return {}

    @cached_property
    def scopes(self) -> Any:
        # on this very tree (no copy), so its nodes are the ones located here
        return resolve_scopes(self.tree)

    @cached_property
    def _by_span(self) -> dict[tuple[int, ...], list[cst.CSTNode]]:
        out: dict[tuple[int, ...], list[cst.CSTNode]] = {}
        for node in self.walk.nodes:
            out.setdefault(tuple(self.walk.span(node)), []).append(node)
        return out

    def node_at(self, span: list[int] | tuple[int, ...], *kinds: type) -> cst.CSTNode | None:
        """The outermost node of one of `kinds` whose range is exactly `span`
        ([line, column, end_line, end_column], columns 1-based)."""
        found = [n for n in self._by_span.get(tuple(span), ()) if isinstance(n, kinds)]
        if not found:
            return None
        # nested nodes of one kind sharing a range (`(a)` in `(a).b`): the outermost
        outer = [n for n in found if self.parent(n) not in found]
        return outer[0] if outer else found[0]

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.walk.parents.get(id(node))

    def line(self, node: cst.CSTNode) -> int:
        return self.walk.span(node)[0]

    def imported(self, stmt: cst.Import | cst.ImportFrom) -> dict[str, str]:
        """Local name -> qualified target for an import statement of this file."""
        return import_bindings(stmt, self.module, self.is_package)
