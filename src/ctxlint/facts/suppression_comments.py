"""`# ctxlint: ignore[CTX101] reason` comments, found by the tokenizer.

Tokenizing (not a regex over the text) means a `ctxlint:` inside a string or
docstring is never taken for a suppression.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

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


@dataclass(frozen=True, slots=True)
class SuppressionComment:
    """A `# ctxlint: ignore[...]` comment (a typed fact: facts.typed)."""

    line: int
    col: int
    end_col: int
    rules: tuple[str, ...]  # the rule ids or names it names, upper-cased
    reason: str
    malformed: bool
    text: str  # the comment as written
    scope: str = MODULE_SCOPE  # the def or class it is in (ScopeSpans.place)


def scan(text: str) -> list[SuppressionComment]:
    """One entry per suppression comment: line, rules, reason, and the raw comment."""
    found: list[SuppressionComment] = []
    for tok in _comments(text, INTENT):
        m = _DIRECTIVE.search(tok.string)
        rules = sorted({r.strip().upper() for r in m.group(1).split(",") if r.strip()}) if m else []
        found.append(
            SuppressionComment(
                tok.start[0],
                tok.start[1] + 1,
                tok.end[1] + 1,
                tuple(rules),
                m.group(2).strip() if m else "",
                not rules,
                tok.string,
            )
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

    def place(self, found: list[SuppressionComment]) -> list[SuppressionComment]:
        """The suppressions, each in its scope: the innermost def or class holding its line."""
        spans = [(name, a.span) for name, a in self.spans]
        placed = []
        for s in found:
            inside = [(span[0], name) for name, span in spans if span[0] <= s.line <= span[2]]
            placed.append(replace(s, scope=max(inside)[1] if inside else MODULE_SCOPE))
        return placed
