"""The base of every per-file visitor: a rule's, or one of the program model's.

Visitors' `visit_<Node>`/`leave_<Node>` methods are batched into one traversal
per file (facts.extract); each returns plain, serialisable facts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxlint.facts.context import FileContext


class FileVisitor:
    """Base of a per-file visitor: `visit_<Node>`/`leave_<Node>` methods
    are batched with every other visitor's into one traversal."""

    def __init__(self, ctx: FileContext) -> None:
        self.ctx = ctx

    def finish(self) -> Any:
        """Plain, serialisable facts for this file (Anchors become spans)."""
        return None
