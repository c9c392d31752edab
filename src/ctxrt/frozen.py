"""Deep sealing of config values, and the type check every post-publish write makes.

A sealed bag whose leaf is a list is sealed only one level deep:
``get_lora().lora_paths.append(x)`` would change the config unlogged. Container
values are therefore stored frozen: lists and tuples as tuples, sets as frozensets,
mappings as ``FrozenDict`` (a dict that refuses writes and still pickles and dumps
to JSON, so a record carrying one travels to spawned processes)."""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping
from typing import Any, NoReturn

from ctxrt.errors import SealedError


class FrozenDict(dict[Any, Any]):
    """A read-only dict. Every mutator raises; ``|`` answers a new FrozenDict."""

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise SealedError("a config mapping is read-only: override the whole leaf")

    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self) -> tuple[Any, ...]:
        return (FrozenDict, (dict(self),))

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(frozenset(self.items()))


def freeze(value: Any) -> Any:
    """``value`` with every container replaced by its read-only counterpart."""
    if isinstance(value, list | tuple):
        return tuple(freeze(v) for v in value)
    if isinstance(value, set | frozenset):
        return frozenset(freeze(v) for v in value)
    if isinstance(value, Mapping):
        return FrozenDict({k: freeze(v) for k, v in value.items()})
    return value


def accepted_types(annotation: Any) -> tuple[type, ...]:
    """The runtime types a leaf annotated ``annotation`` accepts (containers as their
    frozen forms too; an int where a float is declared)."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return tuple(t for arg in typing.get_args(annotation) for t in accepted_types(arg))
    if annotation is None or annotation is type(None):
        return (type(None),)
    if origin is not None:
        annotation = origin
    if annotation in (list, tuple):
        return (list, tuple)
    if annotation in (set, frozenset):
        return (set, frozenset)
    if annotation in (dict, Mapping):
        return (Mapping,)
    if annotation is float:
        return (int, float)
    if annotation is Any:
        return (object,)
    return (annotation,)


def check_type(where: str, value: Any, accepted: tuple[type, ...]) -> None:
    """Raise TypeError unless ``value`` is one of ``accepted`` (a bool is not an int)."""
    if not isinstance(value, accepted) or (
        isinstance(value, bool) and bool not in accepted and object not in accepted
    ):
        names = " | ".join(sorted(t.__name__ for t in accepted))
        raise TypeError(f"{where} takes {names}, got {value!r}")
