"""Config bags: the projected, sealed, resolved config of one namespace.

Leaves and sub-bags are plain instance attributes (``get_exec().moe.moe_runner_backend``
is two ordinary attribute loads), which keeps reads as cheap as any attribute and
traceable by ``torch.compile``. Assignment raises; ``get_context().override`` is the
process-wide write and ``bag.override(**kw)`` the scoped one.

A bag cannot go stale. When the config it was projected from is replaced (re-publish,
``reset_context``, entering an ``override_server_args`` scope) the context *retires*
it: its class is swapped for a stale twin whose every attribute read raises
``StaleBagError``, and leaving the scope revives it. The check lives in the retired
object's class, so a live bag's read path carries no generation test at all."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from ctxrt.errors import BagSealedError, StaleBagError, UnknownLeafError
from ctxrt.frozen import check_type, freeze
from ctxrt.scoped import ScopedAssign


class ConfigBag:
    def __init__(
        self,
        path: str,
        leaves: Mapping[str, Any],
        children: Mapping[str, ConfigBag] | None = None,
        types: Mapping[str, tuple[type, ...]] | None = None,
    ) -> None:
        object.__setattr__(self, "_path", path)
        object.__setattr__(self, "_leaf_names", frozenset(leaves))
        object.__setattr__(self, "_types", dict(types or {}))
        # Per leaf, how many logged overrides wrote it: a scope that sees this move
        # leaves the logged value in place on exit.
        object.__setattr__(self, "_logged", dict.fromkeys(leaves, 0))
        object.__setattr__(self, "_child_names", tuple(children or {}))
        for name, value in leaves.items():
            object.__setattr__(self, name, freeze(value))
        for name, child in (children or {}).items():
            object.__setattr__(self, name, child)

    def __setattr__(self, name: str, value: Any) -> None:
        raise BagSealedError(
            f"{self._path}.{name} is sealed: use get_context().override(source, {name}=...) "
            "or a scoped bag .override(...)"
        )

    def __delattr__(self, name: str) -> None:
        raise BagSealedError(f"{self._path}.{name} is sealed")

    def __repr__(self) -> str:
        leaves = ", ".join(f"{n}={self._leaf(n)!r}" for n in sorted(self._leaf_names))
        return f"ConfigBag[{self._path}]({leaves})"

    def override(self, **leaves: Any) -> ScopedAssign:
        """Scoped, transactional override of this bag's own leaves (tests, and a
        build step that must see a different value for its duration)."""
        unknown = sorted(n for n in leaves if n not in self._leaf_names)
        if unknown:
            raise UnknownLeafError(f"not leaves of {self._path!r}: {unknown}")
        for name, value in leaves.items():
            self._check_value(name, value)
        return ScopedAssign(leaves, self._leaf, self._set_leaf, self._logged.__getitem__)

    def _check_value(self, name: str, value: Any) -> None:
        types = self._types.get(name)
        if types is not None:
            check_type(f"{self._path}.{name}", value, types)

    def _leaf(self, name: str) -> Any:
        # Never through self.__dict__: touching it materialises the instance dict and
        # takes every later read of this bag off CPython's fast path (7 -> 20 ns).
        return object.__getattribute__(self, name)

    def _set_leaf(self, name: str, value: Any) -> None:
        # The one write path; callers have validated ``name`` and the value's type.
        object.__setattr__(self, name, freeze(value))

    def _set_logged(self, name: str, value: Any) -> None:
        """A logged (process-wide) override: outlives any scope open around it."""
        self._set_leaf(name, value)
        self._logged[name] += 1

    def _leaf_items(self) -> dict[str, Any]:
        return {name: self._leaf(name) for name in self._leaf_names}


class _Stale:
    """Mixed in front of a retired bag's class: every public read (a leaf, a sub-bag,
    ``override``) raises. Private names pass, so a scope opened before the retirement
    still closes into the retired bag, harmlessly. (No ``__slots__``: an empty one
    would change the layout and refuse the class swap.)"""

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("_"):
            return object.__getattribute__(self, name)
        path = object.__getattribute__(self, "_path")
        raise StaleBagError(
            f"this {path!r} bag was retired by a re-publish (or reset, or an "
            f"override_server_args scope) and would answer with old values: read "
            f"{path}.{name} through the accessor again (get_{path.split('.')[0]}())"
        )

    def __repr__(self) -> str:
        return (
            f"<retired {type(self).__mro__[2].__name__}[{object.__getattribute__(self, '_path')}]>"
        )


@functools.cache
def _stale_twin(cls: type) -> type:
    return type(f"Stale{cls.__name__}", (_Stale, cls), {})


def _walk(bag: ConfigBag) -> list[ConfigBag]:
    """``bag`` and every sub-bag under it, read without the (maybe stale) class's hooks."""
    get = object.__getattribute__
    out = [bag]
    for name in get(bag, "_child_names"):
        out.extend(_walk(get(bag, name)))
    return out


def retire(bag: ConfigBag) -> None:
    """Make every held handle of ``bag`` (and of its sub-bags) raise on read."""
    for b in _walk(bag):
        cls = type(b)
        if not issubclass(cls, _Stale):
            object.__setattr__(b, "__class__", _stale_twin(cls))


def revive(bag: ConfigBag) -> None:
    """Undo ``retire``: the config ``bag`` belongs to is current again."""
    for b in _walk(bag):
        cls = type(b)
        if issubclass(cls, _Stale):
            object.__setattr__(b, "__class__", cls.__mro__[2])
