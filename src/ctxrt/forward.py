"""Per-forward state (``get_forward()``): backed by a contextvar, so a new thread
sees the defaults and a scope never leaks into another thread's forward."""

from __future__ import annotations

import contextvars
import dataclasses
import itertools
from typing import Any

from ctxrt.scoped import ScopedAssign


@dataclasses.dataclass(frozen=True)
class ForwardFlags:
    enable_multi_stream: bool = False
    moe_output_buffer: Any = None  # a tensor the MoE layer writes into, when set
    attn_tp_input_scattered: bool = False
    is_extend_in_batch: bool = False


_DEFAULT_FLAGS = ForwardFlags()  # frozen: safe to share as the contextvar default
_FIELDS = frozenset(f.name for f in dataclasses.fields(ForwardFlags))
_serial = itertools.count()


class ForwardState:
    """Read a flag as an attribute; write it with ``scoped(**kw)`` (restores on exit
    and on exception) or, for the legacy sticky setters, ``set(name, value)``."""

    def __init__(self) -> None:
        self._var: contextvars.ContextVar[ForwardFlags] = contextvars.ContextVar(
            f"ctxrt_forward_{next(_serial)}", default=_DEFAULT_FLAGS
        )

    def snapshot(self) -> ForwardFlags:
        return self._var.get()

    def scoped(self, **values: Any) -> ScopedAssign:
        _validate(values)
        return ScopedAssign(values, self._read, self.set)

    def set(self, name: str, value: Any) -> None:
        _validate({name: value})
        self._var.set(dataclasses.replace(self._var.get(), **{name: value}))

    def _read(self, name: str) -> Any:
        return getattr(self._var.get(), name)


def _validate(values: dict[str, Any]) -> None:
    unknown = sorted(set(values) - _FIELDS)
    if unknown:
        raise AttributeError(f"unknown per-forward flags: {unknown}")


def _flag_property(name: str) -> property:
    return property(lambda self: getattr(self._var.get(), name), doc=f"Per-forward {name}.")


for _name in sorted(_FIELDS):
    setattr(ForwardState, _name, _flag_property(_name))
