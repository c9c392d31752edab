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

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from ctxlint.core.findings import Finding, Span
from ctxlint.server.layout_edits import Moved

# `path:line` as facts quote a place (ordered_reach, role_reach, CTX302)
_PLACE = re.compile(r"(?<![\w./-])([\w./-]+\.pyi?):(\d+)")
_NUMBER = re.compile(r"(?<!\w)\d+(?!\w)")
_DIGIT = re.compile(r"\d")


class Unplaced(Exception):
    """A position the move cannot place exactly: the full check answers."""


def pin_texts(pins: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Each pin (rule -> key -> value) as one text, key and value, where it
    holds a number."""
    out = []
    for kv in pins.values():
        for key, value in kv.items():
            text = f"{key} {json.dumps(value, sort_keys=True, default=str)}"
            if _DIGIT.search(text):
                out.append(text)
    return out


class Mover:
    """Moves the positions of file `path` by `moved` in findings' spans and text."""

    def __init__(self, path: str, moved: Moved) -> None:
        self.path, self.moved = path, moved
        self.name = path.rpartition("/")[2]
        folder, _, stem = path.removesuffix(".pyi").removesuffix(".py").rpartition("/")
        if stem == "__init__":  # a package: named by its folder
            stem = folder.rpartition("/")[2]
        # the file named in a text: its path, or its module (`pkg.mod.func`);
        # a text without `stem` names neither (nor quotes the file as `path:line`)
        self.stem = stem
        self.named = re.compile(rf"(?<!\w){re.escape(stem)}(?!\w)|{re.escape(path)}")

    def unmoved(self, n: int) -> bool:
        return self.moved.line(n) == n

    def pin_moves(self, text: str) -> bool:
        """Whether a pin may quote a moved line of the file: one that names it
        and holds a number the edit moved (a pin is the check's to compare with
        the baseline, not this module's to move)."""
        return self.named.search(text) is not None and any(
            not self.unmoved(int(m.group())) for m in _NUMBER.finditer(text)
        )

    def text(self, text: str, strict: bool) -> str:
        """`text` with the file's `path:line` quotes moved; Unplaced for a
        number that may name a moved line of it and cannot be told so (with
        `strict`: any bare number; else only a quote of a path)."""
        if not _DIGIT.search(text):
            return text
        out: list[str] = []
        at = 0
        for m in _PLACE.finditer(text):
            where, n = m.group(1), int(m.group(2))
            if where == self.path:
                new = self.moved.line(n)
                if new is None:
                    raise Unplaced(text)
                out.append(text[at : m.start(2)] + str(new))
                at = m.end()
            elif where.rpartition("/")[2] == self.name and not self.unmoved(n):
                raise Unplaced(text)  # the file named otherwise (a longer or shorter path)
            else:
                out.append(text[at : m.end()])
                at = m.end()
        out.append(text[at:])
        if strict:
            rest = _PLACE.sub("", text)
            if any(not self.unmoved(int(m.group())) for m in _NUMBER.finditer(rest)):
                raise Unplaced(text)
        return "".join(out)

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
        texts = [f.message, f.details, *(v for v in f.data.values() if isinstance(v, str))]
        if not own and not any(self.stem in t for t in texts):
            return f  # (most findings of a project: a substring test each)
        span = self.span(f.span) if own else f.span
        if not any(_DIGIT.search(t) for t in texts):
            return f if span == f.span else replace(f, span=span)
        strict = own or any(self.named.search(t) for t in texts)
        message, details = self.text(f.message, strict), self.text(f.details, strict)
        data = {k: self.text(v, strict) if isinstance(v, str) else v for k, v in f.data.items()}
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
