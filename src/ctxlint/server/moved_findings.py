"""The findings after an edit that only moved a file's statements
(server.layout_edits): the same findings, their positions in that file moved.

Why nothing else can change: the edited file's facts are those of its old
text with their lines moved (no fact holds a depth-0 comment or the layout
between statements, and the edit left every statement's own text as it was),
and a suppression, a noqa or a coding declaration in the changed lines sends
the edit to the full check. The program derives every finding from the facts,
so each finding of every file keeps its identity (rule, scope, snippet,
fingerprint, status: fingerprints hold no line, and the order of a file's
spans, which numbers identical findings, is kept). Facts hold positions only
as places: spans, and lines quoted in the findings' text (`path:line` in a CTX301 call
path and `related`; "at line N" for a line of the finding's own file). Spans
and `path:line` quotes of the file are moved here. A bare number that may name
a line the edit moved cannot be told from a count, so it sends the edit to
the full check, as does a position this module cannot place (a span ending on
a comment line, say). A bare number may name a line of the edited file in its
own findings, and in a finding or a pin whose text names the file (its path,
or its module: CTX301 says "before publish at line N" of its entry's file,
and names that entry when the finding stands elsewhere); a message quotes a
line of any other file with its path. (A pin holds no position by design,
as it is compared with the baseline's across edits; one that names the file
and holds a number the edit moved still takes the full check.)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace

from ctxlint.core.findings import Finding, Span
from ctxlint.core.moved_text import TextMover, Unplaced, pin_texts
from ctxlint.server.layout_edits import Moved

__all__ = ["Mover", "Unplaced", "move", "pin_texts"]


class Mover(TextMover):
    """Moves the positions of file `path` by `moved` in findings' spans and
    text (core.moved_text: which numbers in a text are its lines)."""

    def __init__(self, path: str, moved: Moved) -> None:
        super().__init__(path, moved.line)
        self.moved = moved

    def span(self, s: Span) -> Span:
        if s.line <= 0:  # not anchored
            return s
        start = self.moved.start(s.line, s.column - 1)
        end = self.moved.end(s.end_line, s.end_column - 1)
        if start is None or end is None:
            raise Unplaced(f"{self.path}:{s.line}")
        return Span(start[0], start[1] + 1, end[0], end[1] + 1)

    def finding(self, f: Finding) -> Finding:
        own = f.path == self.path
        span = self.span(f.span) if own else f.span
        moved = self.texts(own, f.message, f.details, f.data)
        if moved is None:
            return f if span == f.span else replace(f, span=span)
        message, details, data = moved
        if span == f.span and message == f.message and details == f.details and data == f.data:
            return f
        return replace(f, span=span, message=message, details=details, data=data)


def move(
    findings: Mapping[str, Iterable[Finding]], path: str, moved: Moved, pinned: Iterable[str]
) -> dict[str, tuple[Finding, ...]] | None:
    """Each file's findings whose positions moved, by path (the rest stay as
    they are); None when a position cannot be placed exactly. `pinned`: the
    rules' pins as texts (pin_texts; one that may quote a moved line: None)."""
    mover = Mover(path, moved)
    if any(mover.pin_moves(t) for t in pinned):
        return None
    out: dict[str, tuple[Finding, ...]] = {}
    try:
        for where, held in findings.items():
            held = tuple(held)
            after = tuple(mover.finding(f) for f in held)
            if after != held:
                out[where] = after
    except Unplaced:
        return None
    return out
