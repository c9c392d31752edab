"""Per-forward state (``get_forward()``), in two backings, as SGLang keeps it.

- **Graph-visible flags** (``GRAPH_VISIBLE``: read or written inside compiled model
  code, e.g. ``is_extend_in_batch``, ``attn_tp_input_scattered``,
  ``mlp_reduce_scatter``) are plain instance attributes of the one ``ForwardState``:
  dynamo traces a read as an attribute load (guarded, like a bag leaf) and a write
  through ``set``/``scoped`` as a replayed side effect, with no graph break. They are
  process-wide: their readers and writers run on the forward's own thread, one per
  process (two-batch overlap interleaves micro-batches on that one thread).
- **Every other flag** (``enable_multi_stream``, ``moe_output_buffer``) has its own
  ``ContextVar``: a new thread or a task started elsewhere sees the defaults, and a
  scope never leaks into another thread's or task's forward. Dynamo cannot trace a
  ContextVar, so compiled code does not read these.

``scoped(**kw)`` is the write path (validated before any write; restores on exit and
on exception): a contextvar flag is restored with ``ContextVar.reset(token)``, so a
scope closed from a context other than the one that entered it raises instead of
writing the closer's context and leaving the entering one changed. ``set(name,
value)`` is the legacy sticky write."""

from __future__ import annotations

import contextvars
import dataclasses
import itertools
from collections.abc import Mapping
from types import TracebackType
from typing import Any

from ctxrt.errors import ForwardScopeError


@dataclasses.dataclass(frozen=True)
class ForwardFlags:
    """A frozen snapshot of every flag (``get_forward().snapshot()``), for code that
    hands the per-forward state along as one value."""

    enable_multi_stream: bool = False
    moe_output_buffer: Any = None  # a tensor the MoE layer writes into, when set
    attn_tp_input_scattered: bool = False
    is_extend_in_batch: bool = False
    mlp_reduce_scatter: bool = False  # the MLP's postprocess reduce-scatters (skip its AR)


# Read/written inside compiled graphs: plain-attribute backed. Before moving a flag out
# of this set, prove that no read or write of it runs under torch.compile.
GRAPH_VISIBLE: frozenset[str] = frozenset(
    {"attn_tp_input_scattered", "is_extend_in_batch", "mlp_reduce_scatter"}
)
_DEFAULTS: Mapping[str, Any] = {f.name: f.default for f in dataclasses.fields(ForwardFlags)}
_FIELDS = frozenset(_DEFAULTS)
_CONTEXTVAR_FLAGS = tuple(sorted(_FIELDS - GRAPH_VISIBLE))
_serial = itertools.count()


class ForwardState:
    """Read a flag as an attribute; write it with ``scoped(**kw)`` or, for the legacy
    sticky setters, ``set(name, value)``. Attribute assignment raises."""

    def __init__(self) -> None:
        serial = next(_serial)
        object.__setattr__(
            self,
            "_vars",
            {
                name: contextvars.ContextVar(
                    f"ctxrt_forward_{serial}_{name}", default=_DEFAULTS[name]
                )
                for name in _CONTEXTVAR_FLAGS
            },
        )
        for name in GRAPH_VISIBLE:
            object.__setattr__(self, name, _DEFAULTS[name])

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(
            f"per-forward flag {name!r} is written with get_forward().scoped({name}=...) "
            "(or the legacy sticky set()), never by assignment"
        )

    def snapshot(self) -> ForwardFlags:
        return ForwardFlags(**{name: getattr(self, name) for name in _DEFAULTS})

    def scoped(self, **values: Any) -> ForwardScope:
        _validate(values)
        return ForwardScope(self, values)

    def set(self, name: str, value: Any) -> None:
        """Sticky: persists until the next write (this context only, for a
        contextvar flag; process-wide for a graph-visible one)."""
        _validate({name: value})
        if name in GRAPH_VISIBLE:
            object.__setattr__(self, name, value)
        else:
            self._vars[name].set(value)


class ForwardScope:
    """The context manager ``scoped`` returns; entered once."""

    __slots__ = ("_entered", "_plain_saved", "_state", "_tokens", "_values")

    def __init__(self, state: ForwardState, values: dict[str, Any]) -> None:
        self._state = state
        self._values = values
        self._entered = False
        self._plain_saved: list[tuple[str, Any]] = []
        self._tokens: list[tuple[contextvars.ContextVar[Any], contextvars.Token[Any]]] = []

    def __enter__(self) -> ForwardState:
        if self._entered:
            raise RuntimeError("a forward scope is entered once")
        self._entered = True
        state = self._state
        for name, value in self._values.items():
            if name in GRAPH_VISIBLE:
                self._plain_saved.append((name, getattr(state, name)))
                object.__setattr__(state, name, value)
            else:
                var = state._vars[name]
                self._tokens.append((var, var.set(value)))
        return state

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for name, value in reversed(self._plain_saved):
            object.__setattr__(self._state, name, value)
        try:
            for var, token in reversed(self._tokens):
                var.reset(token)
        except ValueError as err:  # the token belongs to another Context
            raise ForwardScopeError(
                f"a get_forward().scoped({', '.join(sorted(self._values))}) scope was "
                "closed in a thread or task other than the one that entered it: close "
                "it where it was opened"
            ) from err


def _validate(values: Mapping[str, Any]) -> None:
    unknown = sorted(set(values) - _FIELDS)
    if unknown:
        raise AttributeError(f"unknown per-forward flags: {unknown}")


def _contextvar_property(name: str) -> property:
    return property(
        lambda self: self._vars[name].get(), doc=f"Per-forward {name} (contextvar-backed)."
    )


for _name in _CONTEXTVAR_FLAGS:
    setattr(ForwardState, _name, _contextvar_property(_name))
