"""``get_parallel()``: one spelling per name.

Ranks and groups are read-through properties over the live topology (raising before
``initialize_model_parallel``); every other name, sizes and the quotients included,
is a leaf of the published ``parallel`` bag, stored as a plain instance attribute so
it traces under ``torch.compile``."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from ctxrt import topology
from ctxrt.bag import ConfigBag
from ctxrt.errors import ConfigNotPublishedError, UnknownLeafError
from ctxrt.scoped import ScopedAssign


def _live(name: str) -> property:
    def read(self: ParallelContext) -> Any:
        scoped = self._live_overrides
        if name in scoped:
            return scoped[name]
        return getattr(topology.live_topology(), name)

    return property(read, doc=f"Live {name} (raises before initialize_model_parallel).")


class ParallelContext(ConfigBag):
    """The parallel bag plus the live ranks/groups. It has no ``__getattr__``: that
    hook would take every leaf read off CPython's fast attribute path."""

    def __init__(
        self, leaves: Mapping[str, Any], types: Mapping[str, tuple[type, ...]] | None = None
    ) -> None:
        super().__init__("parallel", leaves, types=types)
        object.__setattr__(self, "_live_overrides", {})

    def __repr__(self) -> str:
        return f"ParallelContext({super().__repr__()})"

    def override(self, **names: Any) -> ScopedAssign:
        """Scoped override of leaves and/or live names (a draft scope running under a
        different TP group overrides ``tp_size``, ``tp_rank`` and ``tp_group``).
        Overriding a size does not move its quotient: name the width as well."""
        bad = sorted(n for n in names if n not in topology.LIVE_NAMES and n not in self._leaf_names)
        if bad:
            raise UnknownLeafError(f"not parallel leaves or live names: {bad}")
        for name, value in names.items():
            if name in self._leaf_names:
                self._check_value(name, value)
        return ScopedAssign(
            names, self._scoped_read, self._scoped_write, lambda n: self._logged.get(n, 0)
        )

    _MISSING = object()

    def _scoped_read(self, name: str) -> Any:
        if name in topology.LIVE_NAMES:
            return self._live_overrides.get(name, self._MISSING)
        return object.__getattribute__(self, name)

    def _scoped_write(self, name: str, value: Any) -> None:
        if name not in topology.LIVE_NAMES:
            self._set_leaf(name, value)
        elif value is self._MISSING:
            self._live_overrides.pop(name, None)
        else:
            self._live_overrides[name] = value


# One read-through property per live name, derived from the Topology fields.
for _name in topology.LIVE_NAMES:
    setattr(ParallelContext, _name, _live(_name))


class UnpublishedParallelContext(ParallelContext):
    """What ``get_parallel()`` answers before publish: ranks and groups still read
    through; a leaf read fails closed, naming the namespace."""

    def __init__(self, leaf_names: Collection[str]) -> None:
        super().__init__({})
        object.__setattr__(self, "_known_leaves", frozenset(leaf_names))

    def __getattr__(self, name: str) -> Any:
        # Only reached for a name that is not an attribute: an unpublished leaf, or a typo.
        if name in self.__dict__.get("_known_leaves", ()):
            raise ConfigNotPublishedError("parallel")
        raise AttributeError(f"get_parallel() has no {name!r}")
