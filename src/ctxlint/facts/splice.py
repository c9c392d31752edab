"""One top-level statement parsed again, not the whole file.

An editor's edit of a large file (a statement added inside a function) changes
one block of lines inside one top-level statement. The LibCST module of the
text before the edit is kept (`Kept`); for the new text only that statement's
lines are parsed (`cst.parse_statement` with the module's config) and the new
statement takes the old one's place in the module's body. The rest of the
tree is the same objects, so the facts walk over the spliced module sees
exactly what a parse of the whole text gives, or the splice is refused and
the whole text is parsed (`None` from `Kept.splice`):

- the change spans more than one top-level statement, or touches the module's
  header or footer (comments and blank lines around the body), or the first
  line of a statement's leading lines (an inserted comment there may belong
  to the block above: LibCST gives a trailing line to the indented block it
  is indented under), or the piece ends on a comment or blank line (the same
  question at its end);
- the piece does not parse as one statement, or its code (in the module's
  indentation and newline) is not exactly its text;
- the text has a line break other than `\\n` / `\\r\\n`, or does not end with
  one.

The line counts of the body's statements are kept with the module, so
finding the statement costs a compare of the two texts' lines, not a codegen.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

if TYPE_CHECKING:
    from ctxlint.facts.entry import Piece
    from ctxlint.facts.placed import Placed
    from ctxlint.facts.resume import Resume

_LONE_CR = re.compile(r"\r(?!\n)")


def lines_of(text: str) -> list[str]:
    """The text's lines, each with its `\\n` (as `io.StringIO.readlines`)."""
    lines = text.split("\n")
    last = lines.pop()
    out = [line + "\n" for line in lines]
    if last:
        out.append(last)
    return out


def _counts(module: cst.Module) -> tuple[int, list[int]]:
    """The header's lines and each body statement's (leading lines included)."""
    header = len(module.header)
    return header, [module.code_for_node(s).count("\n") for s in module.body]


def _code_at_zero(line: str) -> bool:
    """A line that starts a statement's code at column 0 (not blank, not a comment)."""
    return bool(line) and line[0] not in " \t\f\r\n#"


def _unowned(lines: list[str], start: int) -> bool:
    """Whether the comment and blank lines from `start` to the next code line
    are all at column 0 (empty, or a comment there): no indented block above
    can own them, whatever its indentation."""
    for line in lines[start:]:
        body = line.rstrip("\r\n")
        if body.strip(" \t\f")[:1] not in ("", "#"):
            return True  # code: the next statement
        if body and body[0] != "#":
            return False
    return True


@dataclass
class Window:
    """Where two texts differ: statement `index` of the old module, its lines
    [start, old_end) in the old text and [start, new_end) in the new one."""

    index: int
    start: int
    old_end: int
    new_end: int


@dataclass
class Kept:
    """A text and its LibCST module, with the body's statements' line counts."""

    text: str
    module: cst.Module
    lines: list[str]
    # the header's lines and the body's statements' (a codegen of the module:
    # worked out at the first edit that needs them, then kept up to date)
    counts: tuple[int, list[int]] | None = None
    # the splice that made it (None: a whole parse), and the module it changed
    changed: Window | None = None
    base: cst.Module | None = None
    # what the last extraction left for the next edit's: the walk's state at
    # the edited statement (facts.resume), the spans and texts it placed
    # (facts.placed)
    walk: Resume | None = None
    placed: Placed | None = None
    said: dict[int, tuple[cst.CSTNode, str]] | None = None  # snippets' (facts.context.Texts)
    # the last entry's pieces (facts.entry): any entry's, its pieces compared by content
    entry: Piece | None = None
    # how its extraction went (tests, the log): the statement the walk started
    # at (0: the whole module) and what the positions' codegen covered
    walked_from: int = 0
    generated: str = ""  # "module", "statement" or "" (none)
    # a whole parse's guess of the statement the next edits change (`edited_in`):
    # the walk keeps its state there (facts.resume), as a splice's keeps it at
    # the spliced statement; only where the state is kept depends on it
    hint: int | None = None

    @classmethod
    def of(cls, text: str, module: cst.Module) -> Kept:
        return cls(text, module, lines_of(text))

    def edited_in(self, before: str) -> int | None:
        """The statement of this module the first line that differs from the
        text `before` lies in (an edit's first whole parse: the next edits
        likely change it again); None when the two texts' lines are the same
        or differ only in the header or footer."""
        old = lines_of(before)
        new = self.lines
        n = min(len(old), len(new))
        top = 0
        while top < n and old[top] == new[top]:
            top += 1
        if self.counts is None:
            self.counts = _counts(self.module)
        start, counts = self.counts
        for index, count in enumerate(counts):
            start += count
            if top < start:
                return index
        return None

    def window(self, new_lines: list[str]) -> Window | None:
        """The one top-level statement the change lies in, or None (see module doc)."""
        old = self.lines
        n = min(len(old), len(new_lines))
        top = 0
        while top < n and old[top] == new_lines[top]:
            top += 1
        if top == len(old) == len(new_lines):
            return None  # the same text: nothing to splice
        tail = 0
        while tail < n - top and old[-1 - tail] == new_lines[-1 - tail]:
            tail += 1
        if self.counts is None:
            self.counts = _counts(self.module)
        start, counts = self.counts
        for index, count in enumerate(counts):
            end = start + count
            if start <= top and len(old) - tail <= end and top < end:
                new_end = end + len(new_lines) - len(old)
                code = start + len(self.module.body[index].leading_lines)  # its first code line
                if top < code or (top == code and not _code_at_zero(new_lines[top])):
                    return None  # leading lines: may be the block above's
                if new_end <= start or new_lines[new_end - 1].strip(" \t\f\r\n")[:1] in ("", "#"):
                    return None  # ends on a comment or blank line (or is empty)
                if not _unowned(old, end):
                    return None  # the lines below: may become this block's
                return Window(index, start, end, new_end)
            start = end
        return None

    def splice(self, text: str) -> tuple[Kept, Window] | None:
        """The module of `text` with one statement parsed again, kept in turn,
        and where it changed; None when a whole parse must answer."""
        if not (text.endswith("\n") and self.module.has_trailing_newline) or _LONE_CR.search(text):
            return None
        new_lines = lines_of(text)
        found = self.window(new_lines)
        if found is None:
            return None
        piece = "".join(new_lines[found.start : found.new_end])
        module = self.module
        try:
            statement = cst.parse_statement(piece, config=module.config_for_parsing)
        except (cst.ParserSyntaxError, ValueError, RecursionError):
            return None
        if module.code_for_node(statement) != piece:
            return None  # indentation or line breaks the module would write otherwise
        body = list(module.body)
        body[found.index] = statement
        spliced = module.with_changes(body=tuple(body))
        assert self.counts is not None  # (the window worked them out)
        header, counts = self.counts[0], list(self.counts[1])
        counts[found.index] = found.new_end - found.start
        made = Kept(text, spliced, new_lines, (header, counts), found, module)
        made.walk, made.placed, made.said = self.walk, self.placed, self.said
        made.entry = self.entry
        return made, found
