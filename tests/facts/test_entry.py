"""A kept module's entry made again from its last pieces (facts.entry): its
plain form, sorted encoding and positionless encoding are a whole round
trip's and encoding's, whatever the last entry was, on random facts whose
leaves change value or only type (`1`, `true`, `1.0`)."""

from __future__ import annotations

import dataclasses
import json
import random
from typing import Any

from ctxlint.engine.part_digests import of_facts, of_piece
from ctxlint.facts import entry, typed


@dataclasses.dataclass(frozen=True, slots=True)
class Site:
    name: str
    span: list[int]
    flag: bool = False
    tags: frozenset[str] = frozenset()


LEAVES: list[Any] = [
    1,
    True,
    1.0,
    0,
    False,
    None,
    "1",
    "a",
    [1, 2, 3, 4],
    [0, 0, 0, 0],
    [1, True, 3, 4],
]
KEYS = ["a", "b", "c", "é", 'q"', "calls", "1"]


def _value(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if depth <= 0 or roll < 0.3:
        return rng.choice(LEAVES)
    if roll < 0.45:
        return Site(
            rng.choice(KEYS),
            [rng.randrange(3) for _ in range(4)],
            rng.random() < 0.5,
            frozenset(rng.sample(KEYS, 2)),
        )
    if roll < 0.6:
        return [_value(rng, depth - 1) for _ in range(rng.randrange(9))]  # long ones too
    keys: list[Any] = rng.sample(KEYS, rng.randrange(4))
    if rng.random() < 0.1:
        keys.append(7)  # a key json.dumps writes as "7": that dict is a leaf
    return {k: _value(rng, depth - 1) for k in keys}


def _mutate(rng: random.Random, value: Any, depth: int = 0) -> Any:
    """`value` with a few leaves changed (often only in type) or keys moved."""
    if isinstance(value, dict) and value and rng.random() < 0.8:
        out = dict(value)
        key = rng.choice(list(out))
        if rng.random() < 0.15:
            del out[key]
        elif rng.random() < 0.1:
            out = {k: out[k] for k in reversed(out)}  # the same items, another order
        else:
            out[key] = _mutate(rng, out[key], depth + 1)
        return out
    if isinstance(value, list) and value and rng.random() < 0.7:
        at = rng.randrange(len(value))
        if rng.random() < 0.3:  # one put in: the rest moves
            return [*value[:at], _value(rng, 1), *value[at:]]
        return [*value[:at], _mutate(rng, value[at], depth + 1), *value[at + 1 :]]
    return _value(rng, 2) if rng.random() < 0.5 else rng.choice(LEAVES)


def _entry(rng: random.Random) -> dict[str, Any]:
    parts = {k: _value(rng, 4) for k in ("calls", "CTX101", "records", "classes")}
    return {"module": "m", "facts": parts, "suppressions": [[1, 2, 3, 4]]}


def test_an_entry_made_from_the_last_ones_pieces_is_a_whole_encodings() -> None:
    rng = random.Random(37)
    reused = listed = 0
    for _ in range(40):
        out, last = _entry(rng), None
        for _ in range(25):
            got = entry.piece(out, last)
            plain = json.loads(json.dumps(out, default=typed.plain))
            blob = entry.sorted_json(plain)
            assert json.dumps(got.value) == json.dumps(plain)  # keys' order and types too
            assert entry.text(got, "placed") == blob
            assert entry.text(got, "bare") == entry.sorted_json(entry.positionless(plain))
            # (of_piece: None where the entry is not one of parts, as workers._work asks)
            assert (of_piece(got) or of_facts(plain, blob.encode())) == of_facts(
                plain, blob.encode()
            )
            reused += got is last
            listed += _lists(got)
            last = got if rng.random() < 0.9 else entry.piece(_entry(rng), None)
            out = {**out, "facts": _mutate(rng, out["facts"])}
    assert reused > 20  # unchanged entries were taken as they were
    assert listed > 100  # long lists were cut into their elements


def _lists(piece: entry.Piece) -> int:
    inner = [*(piece.children or {}).values(), *(piece.items or ())]
    return (piece.items is not None) + sum(_lists(p) for p in inner)


def test_a_leaf_that_changes_only_its_type_is_encoded_again() -> None:
    last = entry.piece({"facts": {"a": {"x": [1, 2]}}}, None)
    for leaf in (True, 1.0):
        got = entry.piece({"facts": {"a": {"x": [leaf, 2]}}}, last)
        assert entry.text(got, "placed") == json.dumps(
            {"facts": {"a": {"x": [leaf, 2]}}}, separators=(",", ":")
        )
