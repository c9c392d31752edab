"""Lines of one file quoted in findings' text, moved by an edit that moved them.

Facts hold positions only as places: spans, and lines that findings quote in
their text (`path:line` in a CTX301 call path and `related`; "at line N" for a
line of the finding's own file). A `path:line` quote of the file is moved; a
bare number that may name a line the edit moved cannot be told from a count,
so it is Unplaced (the caller derives or checks again). A bare number may name
a line of the edited file in its own findings, and in a finding or a pin whose
text names the file (its path, or its module: CTX301 says "before publish at
line N" of its entry's file, and names that entry when the finding stands
elsewhere); a message quotes a line of any other file with its path.

Shared by the server's layout edits (server.moved_findings) and a resident
run's moved outcomes (engine.moved_outcomes).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

# `path:line` as facts quote a place (ordered_reach, role_reach, CTX302)
_PLACE = re.compile(r"(?<![\w./-])([\w./-]+\.pyi?):(\d+)")
_NUMBER = re.compile(r"(?<!\w)\d+(?!\w)")
_DIGIT = re.compile(r"\d")

LineOf = Callable[[int], int | None]  # an old 1-based line -> the new one (None: gone)


class Unplaced(Exception):
    """A position the move cannot place exactly: the caller checks instead."""


def has_digit(text: str) -> bool:
    return _DIGIT.search(text) is not None


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


class TextMover:
    """Moves the lines of file `path` quoted in a text, by `line`."""

    def __init__(self, path: str, line: LineOf) -> None:
        self.path, self.line = path, line
        self.name = path.rpartition("/")[2]
        folder, _, stem = path.removesuffix(".pyi").removesuffix(".py").rpartition("/")
        if stem == "__init__":  # a package: named by its folder
            stem = folder.rpartition("/")[2]
        # the file named in a text: its path, or its module (`pkg.mod.func`);
        # a text without `stem` names neither (nor quotes the file as `path:line`)
        self.stem = stem
        self.named = re.compile(rf"(?<!\w){re.escape(stem)}(?!\w)|{re.escape(path)}")

    def unmoved(self, n: int) -> bool:
        return self.line(n) == n

    def pin_moves(self, text: str) -> bool:
        """Whether a pin may quote a moved line of the file: one that names it
        and holds a number the edit moved (a pin is compared with the
        baseline, not moved)."""
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
                new = self.line(n)
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

    def texts(
        self, own: bool, message: str, details: str, data: Mapping[str, Any]
    ) -> tuple[str, str, dict[str, Any]] | None:
        """A finding's message, details and data moved (`own`: it stands in
        the file); None when none of them can quote the file."""
        texts = [message, details, *(v for v in data.values() if isinstance(v, str))]
        if not own and not any(self.stem in t for t in texts):
            return None  # (most findings of a project: a substring test each)
        if not any(_DIGIT.search(t) for t in texts):
            return None
        strict = own or any(self.named.search(t) for t in texts)
        moved = {k: self.text(v, strict) if isinstance(v, str) else v for k, v in data.items()}
        return self.text(message, strict), self.text(details, strict), moved
