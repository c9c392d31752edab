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


@dataclass(frozen=True, slots=True)
class _Defaults:
    v: Any  # (the names the written-out encoder uses itself)
    o: Any = 0
    out: Any = None
    flag: bool = False
    text: str = ""
    items: tuple[str, ...] = ()
    many: list[int] = field(default_factory=list)
    table: dict[str, int] = field(default_factory=dict)
    made: Any = field(default_factory=lambda: [1])


def test_a_fact_classes_encoder_leaves_out_exactly_the_fields_at_their_default() -> None:
    """A field is left out where it holds its default (of the default's type
    and equal: `0` is not `False`), or an empty container of its factory's
    type; the rest keep the fields' order. The encoder is written out per
    class (each field read by name, no dict made whole and then cut)."""
    import itertools

    from ctxlint.facts import typed

    def reference(o: Any) -> dict[str, Any]:
        out = {}
        for name, default, factory in typed._fields(type(o)):
            value = getattr(o, name)
            if default is not typed._MISSING and type(value) is type(default):
                if value == default:
                    continue
            if factory is not typed._MISSING and type(value) is factory and not value:
                continue
            out[name] = value
        return out

    values = [0, False, 0.0, None, "", "x", (), ("a",), [], [0], {}, {"k": 1}, 1, True]
    encode = typed._encoder(_Defaults)
    for row in itertools.product(values[:6], values[3:9], values[8:], repeat=1):
        for made in ([], [1], ()):
            o = _Defaults(row[0], row[1], row[2], *row, many=row[2], table=row[2], made=made)
            got = encode(o)
            assert got == reference(o) and list(got) == list(reference(o)), o
            assert json.dumps(plain(o)) == json.dumps(reference(o))
    assert {"v", "o", "out", "flag", "many", "made"} <= set(encode.__code__.co_names)
