"""A rule's last outcome moved to an edited file's new lines, instead of derived again.

A resident run keys each rule's outcome by the digests of its facts WITH
their positions (engine.check_memo): a statement added at the top of a
function moves every span below it, and each rule reading that file's call
graph, classes or records derives again though nothing but lines changed.

When an edited buffer's old and new texts differ in one window of lines
(`LineMap`: the lines above stay, those below move by the lines added or
removed), each facts part of its new entry is moved back to the old lines
(`moved_back`) and digested. A rule whose key, with those digests in place of
the new ones, is its last key read facts that are exactly the old ones with
their lines moved: its outcome is the old one with the same lines moved
(`Move.outcome`): the findings' spans and the file's lines quoted in the
findings', the sets' and the pins' text (core.moved_text, as a layout edit
moves findings: server.moved_findings). A position the move cannot place (a
fact or finding on a line of the window, a bare number that may be a moved
line) derives the rule again. The program derives every finding from the
facts, places carried as they are: tests/engine/test_moved_outcomes.py checks
every rule's moved outcome against its derivation on the edited text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from json.decoder import scanstring
from typing import Any

from ctxlint.core.moved_text import TextMover, Unplaced, has_digit, pin_texts
from ctxlint.discover.sources import content_hash
from ctxlint.engine.part_digests import PartDigests
from ctxlint.program.rule import RawFinding


@dataclass(frozen=True)
class LineMap:
    """An edit of one window of lines: old lines 1..head and new ones stay, the
    old lines past `old_end` (1-based, the window's last) move by `delta`;
    the window's own lines have no image."""

    head: int
    old_end: int
    new_end: int
    size: int  # the old text's lines

    @classmethod
    def of(cls, old: str, new: str) -> LineMap:
        a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
        head = 0
        for x, y in zip(a, b, strict=False):
            if x != y:
                break
            head += 1
        tail = 0
        most = min(len(a), len(b)) - head
        while tail < most and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]:
            tail += 1
        return cls(head, len(a) - tail, len(b) - tail, len(a))

    @property
    def delta(self) -> int:
        return self.new_end - self.old_end

    def line(self, n: int) -> int | None:
        """Old line `n` in the new text (past the old text's end: not a line, kept)."""
        if n <= self.head or n > self.size:
            return n
        return n + self.delta if n > self.old_end else None

    def back(self, n: int) -> int | None:
        """New line `n` in the old text."""
        if n <= self.head:
            return n
        return n - self.delta if n > self.new_end else None


def _span(value: list[int], line: Callable[[int], int | None]) -> list[int]:
    start, end = line(value[0]), line(value[2])
    if start is None or end is None:
        raise Unplaced(str(value))
    return [start, value[1], end, value[3]]


def moved_back(value: Any, lines: LineMap) -> Any:
    """Facts JSON with every span ([line, column, end_line, end_column], as
    part_digests.positionless knows them) at its old lines; Unplaced for one
    on a line of the window."""
    if isinstance(value, list):
        if len(value) == 4 and all(type(x) is int for x in value):
            return _span(value, lines.back)
        return [moved_back(x, lines) for x in value]
    if isinstance(value, dict):
        return {k: moved_back(x, lines) for k, x in value.items()}
    return value


# a span in facts JSON (as part_digests.digest writes it: no spaces): a list of
# exactly four integers, or the same text inside a string (told apart below)
_SPAN = re.compile(r"\[(-?\d+),(-?\d+),(-?\d+),(-?\d+)\]")


def _part_texts(blob: bytes, keys: set[str]) -> dict[str, str]:
    """The JSON text of each facts part `keys` names, cut out of an entry as
    the workers encode it (keys sorted, no spaces: each part's text is then
    its digest's, which the caller checks), decoded once and never encoded."""
    texts = _all_part_texts(blob)
    return {k: texts[k] for k in keys if k in texts}


# entry -> its part texts, the last two (an edit's new entry is the next edit's
# old one): those cut out of the entry, or known with it (note_part_texts)
_TEXTS: dict[bytes, dict[str, str]] = {}


def note_part_texts(blob: bytes, texts: dict[str, str]) -> None:
    """An entry's part texts known where it was encoded (a kept module's
    entry, each part's encoding in hand: engine.run), not cut out of it again."""
    if blob not in _TEXTS and len(_TEXTS) >= 2:
        del _TEXTS[next(iter(_TEXTS))]
    _TEXTS[blob] = texts


def _all_part_texts(blob: bytes) -> dict[str, str]:
    """Every facts part's JSON text in an entry (read only: it is kept)."""
    found = _TEXTS.pop(blob, None)
    note_part_texts(blob, found if found is not None else _cut_part_texts(blob))
    return _TEXTS[blob]


def _cut_part_texts(blob: bytes) -> dict[str, str]:
    text = blob.decode("utf-8", "surrogateescape")
    at = text.find('"facts":{')
    if at < 0:
        return {}
    decoder, i, out = json.JSONDecoder(), at + len('"facts":{'), {}
    while i < len(text) and text[i] == '"':
        key, i = scanstring(text, i + 1)
        if text[i] != ":":
            return {}
        end = decoder.raw_decode(text, i + 1)[1]
        out[key] = text[i + 1 : end]
        i = end + 1 if end < len(text) and text[end] == "," else end
    return out


def _moved_to(old: tuple[str, ...], new: tuple[str, ...], lines: LineMap) -> bool:
    """Whether span `new`, moved back, is `old` (in a string: is it, unmoved)."""
    if old == new and int(new[0]) <= lines.head and int(new[2]) <= lines.head:
        return True
    start, end = lines.back(int(new[0])), lines.back(int(new[2]))
    return (start, new[1], end, new[3]) == (int(old[0]), old[1], int(old[2]), old[3])


def back_digests(
    old_blob: bytes,
    new_blob: bytes,
    same: set[str],
    old: PartDigests,
    new: PartDigests,
    lines: LineMap,
) -> PartDigests:
    """Of the parts `same` (those whose facts are the old entry's but for their
    positions: equal digests without them), the old digest (positions kept,
    `old`; the new entry's: `new`) of each whose new facts moved back to the old lines are the old
    ones: `digest(moved_back(new part)) == old[key]`, told without moving
    them. Their JSON differs in span numbers alone, so the spans the scan
    finds pair up, text in strings too (equal there, and unmoved: one
    whose line moved says no, which only derives the rule again)."""
    if not same:
        return {}
    olds, news = _part_texts(old_blob, same), _part_texts(new_blob, same)
    out: PartDigests = {}
    for key in same:
        was_text, now_text = olds.get(key), news.get(key)
        # (a text that is not its digest's: not the encoding the pairing reads)
        if was_text is None or now_text is None or content_hash(was_text.encode()) != old[key]:
            continue
        if content_hash(now_text.encode()) != new[key]:
            continue
        was, now = _SPAN.findall(was_text), _SPAN.findall(now_text)
        if len(was) == len(now) and all(
            _moved_to(a, b, lines) for a, b in zip(was, now, strict=True)
        ):
            out[key] = old[key]
    return out


class Move(TextMover):
    """Moves a rule's outcome to file `path`'s new lines."""

    def __init__(self, path: str, lines: LineMap) -> None:
        super().__init__(path, lines.line)

    def finding(self, f: RawFinding) -> RawFinding:
        own = f.path == self.path
        span = _span(f.span, self.line) if own and f.span[0] > 0 else f.span
        texts = self.texts(own, f.message, f.details, f.data)
        if texts is None:
            return f if span == f.span else replace(f, span=span)
        message, details, data = texts
        return replace(f, span=span, message=message, details=details, data=data)

    def value(self, value: Any) -> Any:
        """A derived set's value with the file's quoted lines moved."""
        if isinstance(value, str):
            if self.stem not in value and self.name not in value:
                return value  # (most texts: neither names the file nor quotes it)
            return self.text(value, self.named.search(value) is not None)
        if isinstance(value, dict):
            return {self.value(k): self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return type(value)(self.value(x) for x in value)
        if value is None or isinstance(value, int | float):  # (a count; bool is an int)
            return value
        raise Unplaced(repr(value))  # a kind of value whose places are not known here

    def _may_quote(self, sets: dict[str, Any]) -> bool:
        """Whether derived sets may quote the file: a text naming it holds its
        stem (its path, module, `path:line`); a value JSON does not write is
        looked at (`value`: one it does not know is Unplaced)."""
        try:
            written = json.dumps(sets)
        except (TypeError, ValueError):
            return True
        return self.stem in written and has_digit(written)

    def outcome(
        self,
        sets: dict[str, Any],
        found: tuple[RawFinding, ...] | None,
        pins: dict[str, Any] | None,
    ) -> tuple[dict[str, Any], tuple[RawFinding, ...] | None] | None:
        """The sets and findings moved (pins as they are: they hold no position);
        None when a place cannot be moved exactly."""
        if pins and any(self.pin_moves(t) for t in pin_texts({"": pins})):
            return None
        try:
            moved_sets = self.value(sets) if self._may_quote(sets) else sets
            moved = None if found is None else tuple(self.finding(f) for f in found)
        except Unplaced:
            return None
        return moved_sets, moved
