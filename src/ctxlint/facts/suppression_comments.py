"""`# ctxlint: ignore[CTX101] reason` comments, found by the tokenizer.

Tokenizing (not a regex over the text) means a `ctxlint:` inside a string or
docstring is never taken for a suppression.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ctxlint.facts.context import MODULE_SCOPE, Anchor, FileContext
from ctxlint.facts.visitor import FileVisitor

if TYPE_CHECKING:
    import libcst as cst

# A comment that means to suppress (prose mentioning "ctxlint:" does not).
INTENT = re.compile(r"#\s*ctxlint:\s*ignore")
# The reason runs to the end of the comment or to a second `#` comment on it.
# Rule ids or names (`ignore[seed-read]`), as --select takes them.
_DIRECTIVE = re.compile(r"#\s*ctxlint:\s*ignore\[([A-Za-z0-9_, -]*)\]\s*([^#]*)")


def _comments(text: str, pattern: re.Pattern[str]) -> Iterator[tokenize.TokenInfo]:
    """Every comment token `pattern` finds something in, up to where the file
    stops tokenizing (its parse reports that)."""
    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT and pattern.search(tok.string):
                yield tok
    except (tokenize.TokenError, SyntaxError):
        return


def scan(text: str) -> list[dict[str, Any]]:
    """One entry per suppression comment: line, rules, reason, and the raw comment."""
    found: list[dict[str, Any]] = []
    for tok in _comments(text, INTENT):
        m = _DIRECTIVE.search(tok.string)
        rules = sorted({r.strip().upper() for r in m.group(1).split(",") if r.strip()}) if m else []
        found.append(
            {
                "line": tok.start[0],
                "col": tok.start[1] + 1,
                "end_col": tok.end[1] + 1,
                "rules": rules,
                "reason": m.group(2).strip() if m else "",
                "malformed": not rules,
                "text": tok.string,
            }
        )
    return found


def comments(text: str, pattern: re.Pattern[str]) -> list[tuple[int, str]]:
    """(line, text) of every comment `pattern` finds something in."""
    return [(tok.start[0], tok.string) for tok in _comments(text, pattern)]


class ScopeSpans(FileVisitor):
    """Where each def and class of a file with suppressions is, with its scope
    name, so a CTX001 finding names the function its comment is in (the
    comments come from the tokenizer, apart from the tree). Walked only for a
    file that has suppressions."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.spans: list[tuple[str, Anchor]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.spans.append((self.ctx.qualname, self.ctx.anchor(node)))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.spans.append((self.ctx.qualname, self.ctx.anchor(node)))

    def place(self, found: list[dict[str, Any]]) -> None:
        """Each suppression's scope: the innermost def or class holding its line."""
        spans = [(name, a.span) for name, a in self.spans]
        for s in found:
            inside = [(span[0], name) for name, span in spans if span[0] <= s["line"] <= span[2]]
            s["scope"] = max(inside)[1] if inside else MODULE_SCOPE
