"""Runtime flags (``get_flags()``): state that is not a pure function of config.

Each group is a typed dataclass whose writes are typo-safe (an unknown name or a
value of the wrong type raises) and whose ``override(**kw)`` is a transactional
scope for tests. Defaults equal the pre-init behaviour; the owning subsystem
materialises a group at its init (see ``ctxrt.subsystems``)."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from ctxrt.scoped import ScopedAssign


class FlagGroup:
    """Base of the typed groups: validated writes and a transactional override."""

    def __setattr__(self, name: str, value: Any) -> None:
        self._check(name, value)
        object.__setattr__(self, name, value)

    @classmethod
    def _check(cls, name: str, value: Any) -> None:
        expected = _flag_types(cls).get(name)
        if expected is None:
            raise AttributeError(f"{cls.__name__} has no flag {name!r} (typo?)")
        if not isinstance(value, expected) or (
            isinstance(value, bool) and bool not in expected and object not in expected
        ):
            raise TypeError(f"{cls.__name__}.{name} is {expected[-1].__name__}, got {value!r}")

    def override(self, **values: Any) -> ScopedAssign:
        """Scoped, all-or-nothing: every name and type is checked before any write."""
        for name, value in values.items():
            self._check(name, value)
        return ScopedAssign(values, self.__getattribute__, self.__setattr__)


@functools.cache
def _flag_types(cls: type) -> dict[str, tuple[type, ...]]:
    """Flag name -> accepted types, from each field's default (or what its factory
    builds: a group field of ``Flags`` takes only its group); ``None`` takes anything."""
    types: dict[str, tuple[type, ...]] = {}
    for f in dataclasses.fields(cls):
        default = f.default
        if default is dataclasses.MISSING and f.default_factory is not dataclasses.MISSING:
            default = f.default_factory()
        if default is None or default is dataclasses.MISSING:
            types[f.name] = (object,)
        elif type(default) is float:
            types[f.name] = (int, float)
        else:
            types[f.name] = (type(default),)
    return types


@dataclasses.dataclass
class CaptureFlags(FlagGroup):
    """CUDA-graph lifecycle."""

    capturing: bool = False
    capture_batch_size: int = 0
    graphs_captured: int = 0


@dataclasses.dataclass
class MoeFlags(FlagGroup):
    """ACTIVE MoE backends (swappable around draft forwards)."""

    runner_backend: str = "auto"
    speculative_runner_backend: str | None = None  # None: not initialised (lazy default)
    a2a_backend: str = "none"
    shared_experts_fusion_disabled: bool = False
    initialized: bool = False


@dataclasses.dataclass
class DpFlags(FlagGroup):
    """DP-attention runtime state, materialised by the parallel stage. The widths
    are not here: ``get_parallel().attn_tp_size`` / ``.attn_dp_size`` answer them
    (one spelling per name)."""

    enabled: bool = False
    attn_dp_rank: int = 0
    initialized: bool = False


@dataclasses.dataclass
class Flags(FlagGroup):
    capture: CaptureFlags = dataclasses.field(default_factory=CaptureFlags)
    moe: MoeFlags = dataclasses.field(default_factory=MoeFlags)
    dp: DpFlags = dataclasses.field(default_factory=DpFlags)
