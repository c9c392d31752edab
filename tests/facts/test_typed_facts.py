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


def test_a_program_decodes_each_file_once_and_drops_the_json() -> None:
    from ctxlint.program.core import Program

    raw = {"name": "x", "span": [1, 2, 3, 4]}
    files = {
        "b.py": {"module": "b", "facts": {"K": [raw]}},
        "a.py": {"module": "a", "facts": {"K": [raw], "other": {"kept": 1}}},
        "c.py": {"module": "c", "facts": {}},
    }
    program = Program(config=None, vocab=None, files=files)  # type: ignore[arg-type]
    first = list(program.typed_facts("K", list[Inner]))
    assert [(p, m) for p, m, _ in first] == [("a.py", "a"), ("b.py", "b")]
    assert first[0][2] == [Inner("x", [1, 2, 3, 4])]
    again = list(program.typed_facts("K", list[Inner]))
    assert all(f[2] is g[2] for f, g in zip(first, again, strict=True))  # decoded once
    assert program.typed_file("a.py", "K", list[Inner]) is first[0][2]
    assert program.typed_file("c.py", "K", list[Inner]) is None
    assert program.files["a.py"]["facts"]["K"] != [raw]  # the JSON is not kept beside
    assert program.files["a.py"]["facts"]["other"] == {"kept": 1}
