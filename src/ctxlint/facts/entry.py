"""A facts entry's plain form and its encodings, made again only where they
changed since the last entry of the same kept module (an editor's edit).

A whole extraction makes the entry's plain form by a JSON round trip
(facts.extract._plain), then the worker encodes it with sorted keys and
digests each part with and without positions (engine.workers,
engine.part_digests): each a pass over the whole file's facts. Here the entry
is cut into pieces (its dicts with string keys, down to DEPTH levels); each
piece's JSON as json.dumps writes it (`raw`, keys unsorted, facts.typed's
`default`) is compared with the same piece's in the last entry, and a piece
whose `raw` is the same string is the last one: its decoded value, its
sorted encoding and its positionless one are taken as they are. Equal `raw`
text is the same JSON (the same values of the same types: `1` is not
`true`), so each is exactly what the whole round trip and encodings give:

- a dict of string keys encodes as `{` + `"key":value` joined by `,` + `}`,
  its items sorted by key for the sorted encoding (json.dumps' sort_keys,
  compact separators); the JSON round trip keeps its keys' order;
- `positionless` maps a dict's values and leaves its keys, so a dict's
  positionless encoding is its pieces' joined the same way.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ctxlint.facts import typed

DEPTH = 4  # the entry, "facts", each part, its keys: pieces below are leaves
LONG = 4  # a list longer than a span is cut into its elements (a span is zeroed whole)
PART = DEPTH - 2  # the depth of a part (a facts key's value: the part digests')
_NATIVE = (dict, list, tuple, str, int, float, type(None))  # json.dumps' own types


def positionless(value: Any) -> Any:
    """Facts with every span ([line, column, end_line, end_column]) zeroed: a
    line inserted above moves the spans of the rest of the file, and no rule's
    answer depends on where things are (tests/engine/test_rounds.py checks it)."""
    if isinstance(value, list):
        if len(value) == 4 and all(type(x) is int for x in value):
            return [0, 0, 0, 0]
        return [positionless(x) for x in value]
    if isinstance(value, dict):
        return {k: positionless(x) for k, x in value.items()}
    return value


def sorted_json(value: Any) -> str:
    """The entry's encoding (engine.workers, engine.part_digests)."""
    return _SORTED(value)


def _encoder(**how: Any) -> Callable[[Any], str]:
    """json.dumps(value, **how) as one call to json's C encoder, made once (a
    piece is encoded per list element: dumps' frames and its encoder made per
    call would cost more than the element). No check for cycles: facts have
    none."""
    made = json.JSONEncoder(**how)
    if json.encoder.c_make_encoder is None:  # (no C accelerator)
        return made.encode
    one = json.encoder.c_make_encoder(
        None,
        made.default,
        json.encoder.encode_basestring_ascii,
        made.indent,
        made.key_separator,
        made.item_separator,
        made.sort_keys,
        made.skipkeys,
        made.allow_nan,
    )
    return lambda value: "".join(one(value, 0))


_SORTED = _encoder(sort_keys=True, separators=(",", ":"))
_RAW = _encoder(default=typed.plain)  # as json.dumps(value, default=typed.plain)


@dataclass(slots=True)
class Piece:
    """One piece of an entry: its plain value, sorted encoding and positionless
    sorted encoding (a leaf's and a part's; a dict or list above or below a
    part joins its pieces' when asked: `text`); a leaf's unsorted JSON, or a
    dict's pieces by key, or a long list's."""

    value: Any
    placed: str | None
    bare: str | None
    raw: str | None = None
    children: dict[str, Piece] | None = None
    items: list[Piece] | None = None  # a long list's elements (each a leaf)
    digests: dict[str, str] | None = None  # a part's (engine.part_digests.of_piece)


def text(piece: Piece, attr: str) -> str:
    """The piece's sorted encoding ("placed") or positionless one ("bare")."""
    kept: str | None = getattr(piece, attr)
    if kept is not None:
        return kept
    if piece.children is not None:
        key = json.encoder.encode_basestring_ascii  # json.dumps of a str key
        children = piece.children
        return "{" + ",".join(f"{key(k)}:{text(children[k], attr)}" for k in sorted(children)) + "}"
    return "[" + ",".join(text(item, attr) for item in piece.items or ()) + "]"


def _joined(made: Piece, depth: int) -> Piece:
    """A dict's or list's piece, its encodings kept at a part's depth only (the
    part digests' and a changed part's join; not a copy of them per level)."""
    if depth == PART:
        made.placed, made.bare = text(made, "placed"), text(made, "bare")
    return made


def piece(value: Any, last: Piece | None, depth: int = DEPTH) -> Piece:
    """`value`'s piece: `last` where it is the same JSON, else made (from
    `last`'s pieces where those are)."""
    while not isinstance(value, _NATIVE):  # what json.dumps hands its default
        value = typed.plain(value)
    if depth and type(value) is dict and value and all(type(k) is str for k in value):
        before = last.children if last is not None else None
        children = {
            k: piece(v, before.get(k) if before is not None else None, depth - 1)
            for k, v in value.items()
        }
        if (
            last is not None
            and before is not None
            and list(before) == list(children)
            and all(children[k] is before[k] for k in children)
        ):
            return last
        plain = {k: c.value for k, c in children.items()}
        return _joined(Piece(plain, None, None, None, children), depth)
    if depth and type(value) in (list, tuple) and len(value) > LONG:
        return _listed(value, last, depth)
    raw = _RAW(value)
    if last is not None and last.raw == raw:
        return last
    return _leaf(raw)


def _leaf(raw: str) -> Piece:
    plain = json.loads(raw)
    return Piece(plain, sorted_json(plain), sorted_json(positionless(plain)), raw)


def _listed(value: list[Any] | tuple[Any, ...], last: Piece | None, depth: int) -> Piece:
    """A long list's piece: each element the last list's element of the same
    JSON, wherever it stood (an element inserted above moves the rest)."""
    before = last.items if last is not None else None
    known = {item.raw: item for item in before} if before is not None else {}
    items = []
    for element in value:
        raw = _RAW(element)
        items.append(known.get(raw) or _leaf(raw))
    if before is not None and len(before) == len(items) and all(map(operator.is_, before, items)):
        return last  # type: ignore[return-value]
    return _joined(Piece([item.value for item in items], None, None, items=items), depth)
