"""Typed facts: the one serialised form of a visitor's facts, and its decoder.

A visitor's `finish()` returns frozen, slotted dataclasses declared beside it
(the schema between it and the rule's check is those classes, not string
keys). The worker encodes them as JSON objects keyed by field name, a field
left out when it holds its default (`plain`, json.dumps' `default`); a check
reads them back as the same classes (`decode`, driven by the fields' types,
once per file entry: Program.typed_facts). Spans stay `[line, column,
end_line, end_column]` lists, as the part digests expect (engine/part_digests).

Types a field may have: str, int, float, bool, None, Any, Literal, an Enum,
another fact dataclass, `X | None`, list[X], tuple[X, ...], tuple[X, Y],
frozenset[X] (stored sorted) and dict[str, X].
"""

from __future__ import annotations

import dataclasses
import enum
import operator
import sys
import types
import typing
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ctxlint.facts.context import Anchor, Snippet

if TYPE_CHECKING:
    import libcst as cst

    from ctxlint.facts.context import FileContext

T = TypeVar("T")
Decoder = Callable[[Any], Any]

# [line, column, end_line, end_column]: an Anchor while the walk runs
Span = list[int]


@dataclasses.dataclass(frozen=True, slots=True)
class Site:
    """Where a fact that can become a finding is: its scope, its one-line
    snippet (FileContext.snippet) and its span."""

    scope: str
    snippet: str
    span: Span


class Decoded:
    """A file entry's facts for one key once read as typed facts (Program.typed_facts):
    they stand in the entry for the JSON they were read from, with the decoder
    that read them (the kind's: a query of another kind is a bug, said)."""

    __slots__ = ("read", "value")

    def __init__(self, value: Any, read: Decoder) -> None:
        self.value, self.read = value, read


def site(ctx: FileContext, node: cst.CSTNode) -> Site:
    """Where `node` is: FileContext.site's parts, typed."""
    # both written once the walk ends: a Site is encoded, not read, during it
    return Site(ctx.qualname, ctx.snippet_later(node), ctx.anchor(node))  # type: ignore[arg-type]


_MISSING = dataclasses.MISSING
# dataclass -> its fields as (name, default or _MISSING, default factory or _MISSING)
_FIELDS: dict[type, tuple[tuple[str, Any, Any], ...]] = {}
_DECODERS: dict[Any, Decoder] = {}
_ENCODERS: dict[type, Callable[[Any], Any]] = {
    # the placeholders' to_json, read at C speed (json.dumps' default runs per object)
    Anchor: operator.attrgetter("span"),
    Snippet: operator.attrgetter("text"),
}


def _fields(cls: type) -> tuple[tuple[str, Any, Any], ...]:
    found = _FIELDS.get(cls)
    if found is None:
        found = _FIELDS[cls] = tuple(
            (f.name, f.default, f.default_factory) for f in dataclasses.fields(cls)
        )
    return found


def _encoder(cls: type) -> Callable[[Any], dict[str, Any]]:
    """The plain form of a fact dataclass `cls`, made once per class: its
    fields in order, each left out where it holds its default (of the
    default's type and equal to it) or, for a field with a factory, an empty
    container of the factory's type. Written out as one function per class
    (an encoder runs per fact object: no loop over the fields, no dict made
    whole and then cut)."""
    given: dict[str, Any] = {}
    lines = ["def encode(o):", "    out = {}"]
    for i, (name, default, factory) in enumerate(_fields(cls)):
        if not name.isidentifier():  # (a dataclass field always is)
            raise TypeError(f"{cls.__name__}: field {name!r}")
        lines.append(f"    v = o.{name}")
        if default is not _MISSING:
            given[f"d{i}"], given[f"k{i}"] = default, type(default)
            lines.append(f"    if type(v) is not k{i} or not v == d{i}: out[{name!r}] = v")
        elif factory is not _MISSING:
            given[f"f{i}"] = factory
            lines.append(f"    if type(v) is not f{i} or v: out[{name!r}] = v")
        else:
            lines.append(f"    out[{name!r}] = v")
    lines.append("    return out")
    exec("\n".join(lines), given)  # (its own field names only)
    return given["encode"]  # type: ignore[no-any-return]


def plain(o: Any) -> Any:
    """json.dumps' `default`: a fact dataclass as an object of its fields (those
    at their default left out), an Anchor as its span, a frozenset sorted, an
    Enum as its value; anything else as its str (as facts always were)."""
    encode = _ENCODERS.get(type(o))
    if encode is not None:
        return encode(o)
    if isinstance(o, (Anchor, Snippet)):
        return o.to_json()
    if dataclasses.is_dataclass(o) and not isinstance(o, type):
        encode = _ENCODERS[type(o)] = _encoder(type(o))
        return encode(o)
    if isinstance(o, frozenset):
        return sorted(o)
    if isinstance(o, enum.Enum):
        return o.value
    return str(o)


def decode(kind: type[T] | Any, raw: Any) -> T:
    """`raw` (the plain form `plain` wrote) as `kind`."""
    return decoder(kind)(raw)  # type: ignore[no-any-return]


def _identity(raw: Any) -> Any:
    return raw


def decoder(kind: Any) -> Decoder:
    """The decoder of `kind`, made once per type."""
    found = _DECODERS.get(kind)
    if found is None:
        found = _DECODERS[kind] = _make(kind)
    return found


def _make(kind: Any) -> Decoder:
    if kind is str:
        # one object per distinct text: json.loads makes a new str for every
        # occurrence (a scope, a name, a module is repeated thousands of times
        # across a tree's facts: 2.6 million objects, 318 thousand texts, on
        # sglang 0.5.23), and a resident server holds them all. sys.intern's
        # table holds no reference: a text no fact holds any more goes.
        return sys.intern
    if kind in (int, float, bool, Any, object, type(None)):
        return _identity
    origin = typing.get_origin(kind)
    args = typing.get_args(kind)
    if origin is typing.Literal:
        return sys.intern if all(type(a) is str for a in args) else _identity
    if origin in (typing.Union, types.UnionType):
        rest = [a for a in args if a is not type(None)]
        if len(rest) != 1:
            raise TypeError(f"facts cannot decode the union {kind}: one type or None")
        inner = decoder(rest[0])
        return _identity if inner is _identity else lambda raw: None if raw is None else inner(raw)
    if origin is list:
        inner = decoder(args[0])
        return list if inner is _identity else lambda raw: list(map(inner, raw))
    if origin is frozenset:
        inner = decoder(args[0])
        return frozenset if inner is _identity else lambda raw: frozenset(map(inner, raw))
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            inner = decoder(args[0])
            return tuple if inner is _identity else lambda raw: tuple(map(inner, raw))
        parts = [decoder(a) for a in args]
        return lambda raw: tuple(d(v) for d, v in zip(parts, raw, strict=True))
    if origin is dict:
        if args[0] is not str:
            raise TypeError(f"facts cannot decode {kind}: JSON keys are strings")
        inner = decoder(args[1])
        if inner is _identity:
            return lambda raw: dict(zip(map(sys.intern, raw), raw.values(), strict=True))
        return lambda raw: {sys.intern(k): inner(v) for k, v in raw.items()}
    if isinstance(kind, type) and issubclass(kind, enum.Enum):
        return kind
    if isinstance(kind, type) and dataclasses.is_dataclass(kind):
        return _dataclass_decoder(kind)
    raise TypeError(f"facts cannot decode {kind!r}")


def _dataclass_decoder(cls: type) -> Decoder:
    """A decoder written for `cls` (as dataclasses writes an __init__): one call of
    the class with each field read from the object, its decoder applied where
    it has one, its default where the object leaves it out."""
    hints = typing.get_type_hints(cls)
    scope: dict[str, Any] = {"cls": cls}
    args = []
    for i, (name, default, factory) in enumerate(_fields(cls)):
        inner = decoder(hints[name])
        value = f"raw[{name!r}]"
        if inner is not _identity:
            scope[f"d{i}"] = inner
            value = f"d{i}({value})"
        if default is not _MISSING:
            scope[f"v{i}"] = default
            value = f"({value} if {name!r} in raw else v{i})"
        elif factory is not _MISSING:
            scope[f"f{i}"] = factory
            value = f"({value} if {name!r} in raw else f{i}())"
        args.append(value)
    source = (
        "def decode_one(raw):\n"
        "    try:\n"
        f"        return cls({', '.join(args)})\n"
        "    except KeyError as exc:\n"
        "        raise KeyError(f'{cls.__name__}.{exc.args[0]}') from None\n"
    )
    exec(source, scope)  # the dataclass's own fields: no outside text reaches it
    return scope["decode_one"]  # type: ignore[no-any-return]
