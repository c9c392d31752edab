"""Each facts key's typed kind, read off its visitor: what `finish()` is
annotated to return (facts.typed), the same kind a query asks with
`Program.typed_facts(key, kind)`.

Known before any rule asks, a file's typed parts are decoded as its entry is
read (`decode_parts`), one file at a time: asked lazily instead, every file's
JSON of every part was held until the rules got to it, most of a run's peak
memory (on sglang 0.5.23, 200 MiB of the server's first full check, which a
process's heap keeps: its resident memory after that check).
"""

from __future__ import annotations

import functools
import types
import typing
from typing import TYPE_CHECKING, Any

from ctxlint.facts.typed import Decoded, Decoder, decoder
from ctxlint.program.parts import visitors_for

if TYPE_CHECKING:
    from ctxlint.facts.visitor import FileVisitor
    from ctxlint.program.rule import Rule


def finished_kind(visitor: type[FileVisitor]) -> Any | None:
    """The kind `visitor.finish()` is annotated to return, None left out of a
    union; None where it is not typed facts (plain JSON: `Any`)."""
    hint = typing.get_type_hints(visitor.finish).get("return", Any)
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        rest = [a for a in typing.get_args(hint) if a is not type(None)]
        hint = rest[0] if len(rest) == 1 else Any
    return None if hint in (Any, object, type(None)) else hint


@functools.lru_cache(maxsize=4)
def fact_decoders(rules: tuple[Rule, ...]) -> dict[str, Decoder]:
    """Facts key -> the decoder of its kind, for the rules' visitors (a rule's
    facts are under its id) and the program parts they require (once per set
    of rules: a resident front end checks with the same ones again and again)."""
    visitors: list[tuple[str, type[FileVisitor]]] = [
        (rule.id, rule.visitor) for rule in rules if rule.visitor is not None
    ]
    visitors += visitors_for(list(rules))
    return {
        key: decoder(kind)
        for key, visitor in visitors
        if (kind := finished_kind(visitor)) is not None
    }


def decode_parts(entry: dict[str, Any], decoders: dict[str, Decoder]) -> None:
    """One file entry's parts of known kind decoded now, in place (as
    Program.typed_facts would when first asked): their JSON goes at once."""
    facts = entry.get("facts")
    if not facts:
        return
    for key, read in decoders.items():
        found = facts.get(key)
        if found and type(found) is not Decoded:
            facts[key] = Decoded(read(found), read)
