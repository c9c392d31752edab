"""Typed facts (facts/typed.py): what a visitor returns is what a check reads
back, through the one stored form (JSON objects keyed by field name)."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from typing import Any, Literal

import pytest

from ctxlint.facts.typed import Site, Span, decode, plain


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclass(frozen=True, slots=True)
class Inner:
    name: str
    span: Span
    line: int | None = None


@dataclass(frozen=True, slots=True)
class Outer:
    kind: Literal["a", "b"]
    inners: tuple[Inner, ...]
    by_name: dict[str, list[Inner]]
    names: frozenset[str]
    pair: tuple[str, int]
    colour: Colour
    site: Site | None = None
    extra: Any = None
    tags: list[str] = field(default_factory=list)
    count: int = 0


def _stored(value: Any) -> Any:
    return json.loads(json.dumps(value, default=plain))


def test_round_trip_gives_equal_facts() -> None:
    inner = Inner("x", [1, 2, 1, 5])
    facts = Outer(
        "a",
        (inner, Inner("y", [3, 0, 4, 1], 7)),
        {"k": [inner]},
        frozenset({"b", "a"}),
        ("p", 2),
        Colour.BLUE,
        Site("f", "x = 1", [1, 0, 1, 5]),
        {"free": [1]},
        ["t"],
        3,
    )
    stored = _stored([facts])
    assert decode(tuple[Outer, ...], stored) == (facts,)
    assert stored[0]["names"] == ["a", "b"]  # sorted: the stored form is deterministic
    assert stored[0]["colour"] == "blue"


def test_defaults_are_left_out_and_read_back() -> None:
    facts = Outer("b", (), {}, frozenset(), ("p", 0), Colour.RED)
    stored = _stored(facts)
    assert set(stored) == {"kind", "inners", "by_name", "names", "pair", "colour"}
    assert decode(Outer, stored) == facts


def test_spans_stay_lists_of_four() -> None:
    """engine/part_digests zeroes every list of four ints: a span."""
    assert _stored(Inner("x", [1, 2, 3, 4])) == {"name": "x", "span": [1, 2, 3, 4]}


def test_a_missing_required_field_is_an_error() -> None:
    """A stored form of another layout is not silently read as defaults."""
    with pytest.raises(KeyError, match=r"Inner\.span"):
        decode(Inner, {"name": "x"})


def test_undecodable_types_are_refused() -> None:
    with pytest.raises(TypeError):
        decode(dict[int, str], {})
    with pytest.raises(TypeError):
        decode(int | str, 1)
