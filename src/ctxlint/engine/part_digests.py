"""Digests of each part of one file's facts, positions left out (and kept).

A fixed-point round remembers each rule's answer by the digests of just the
facts it reads, positions left out (engine/rounds.py); a resident session each
rule's outcome, positions kept (engine/check_memo.py). A worker digests the facts it has just
made, before encoding them (the parent would decode the entry again only for
this); an entry read back from a cache without its digests is digested here
from its bytes.
"""

from __future__ import annotations

import json
from typing import Any

from ctxlint.discover.sources import content_hash
from ctxlint.facts.entry import Piece, positionless, text

ERROR = "!error"  # a file that does not parse: it leaves the program, every rule sees that
PartDigests = dict[str, str]  # facts key -> digest of that part of one file's facts
# + a facts key: the digest of that part with its positions, which a resident
# session's per-rule outcomes are keyed by (engine/check_memo.py: findings carry spans)
PLACED = "@"


def of_facts(facts: Any, blob: bytes) -> PartDigests:
    """The part digests of a facts entry (`facts`, decoded from `blob`), each
    without its positions and (under PLACED + key) with them; an entry that is
    an error or not of our shape: one digest of all of it."""
    if not isinstance(facts, dict) or "error" in facts or not isinstance(facts.get("facts"), dict):
        return {ERROR: content_hash(blob)}
    out: PartDigests = {}
    for key, value in facts["facts"].items():
        out[key] = digest(positionless(value))
        out[PLACED + key] = digest(value)
    return out


def of_piece(entry: Piece) -> PartDigests | None:
    """The part digests of a kept module's entry (facts.entry), each part's
    worked out again only where its piece is new; None where the entry is not
    one of parts (of_facts answers)."""
    facts = entry.children.get("facts") if entry.children is not None else None
    if facts is None or facts.children is None or "error" in entry.children:
        return None
    out: PartDigests = {}
    for key, part in facts.children.items():
        if part.digests is None:
            part.digests = {
                key: content_hash(text(part, "bare").encode()),
                PLACED + key: content_hash(text(part, "placed").encode()),
            }
        out.update(part.digests)
    return out


def digest(value: Any) -> str:
    """The digest of one part's facts (as JSON, keys sorted)."""
    return content_hash(json.dumps(value, sort_keys=True, separators=(",", ":")).encode())


def complete(value: Any) -> bool:
    """Whether a stored value is part digests of this shape, positions kept too
    (an entry stored by an older ctxlint has none: worked out again)."""
    if not (isinstance(value, dict) and all(isinstance(v, str) for v in value.values())):
        return False
    return all(PLACED + k in value for k in value if k != ERROR and not k.startswith(PLACED))


def placed(parts: PartDigests) -> PartDigests:
    """The digests with positions, by facts key (and an error's)."""
    out = {k[len(PLACED) :]: v for k, v in parts.items() if k.startswith(PLACED)}
    if ERROR in parts:
        out[ERROR] = parts[ERROR]
    return out


def of_blob(blob: bytes) -> PartDigests:
    """The part digests of an encoded facts entry."""
    try:
        facts = json.loads(blob)
    except ValueError:
        facts = None
    return of_facts(facts, blob)
