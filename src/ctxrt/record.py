"""``ServerArgs``: the startup record, assembled from the namespace field classes.

It holds the operator's raw input and nothing else. ``__post_init__`` runs the
resolution pipeline, which declares into a stash on the record instead of writing
fields; after that every field assignment raises (the strict mutation guard)."""

from __future__ import annotations

import dataclasses
from typing import Any

from ctxrt.errors import RecordMutationError
from ctxrt.fields.base import Derived
from ctxrt.fields.device import Device
from ctxrt.fields.disagg import Disagg
from ctxrt.fields.exec import Exec, ExecGraph, ExecKernel, ExecMoe
from ctxrt.fields.layout import NamespaceLayout, collect_input_fields
from ctxrt.fields.lora import Lora
from ctxrt.fields.memory import Memory
from ctxrt.fields.mm import Mm
from ctxrt.fields.model import Model
from ctxrt.fields.observability import Observability
from ctxrt.fields.parallel import Parallel
from ctxrt.fields.schedule import Schedule
from ctxrt.fields.serving import Serving
from ctxrt.fields.spec import Spec
from ctxrt.frozen import freeze
from ctxrt.resolution import (
    RESOLVED_SLOT,
    STASH_SLOT,
    ResolvedView,
    resolve_once,
    resolved_values,
)

_INPUT_NAMESPACES = [
    Model,
    Memory,
    Schedule,
    Exec,
    ExecKernel,
    ExecMoe,
    ExecGraph,
    Spec,
    Serving,
    Observability,
    Disagg,
    Lora,
    Mm,
    Device,
    Parallel,
]

LAYOUT: NamespaceLayout = collect_input_fields(_INPUT_NAMESPACES)


@LAYOUT.assemble
class ServerArgs:
    """The raw launch configuration. Read resolved values from the bags
    (``get_<ns>()``), resolution decisions with ``resolution_result``."""

    # Bookkeeping, not config (the slot resolution marks). It is an init field only so
    # that ``dataclasses.replace``, which hands every init field to a new instance,
    # hands it ``True`` and the copy's ``__post_init__`` refuses: a copy would resolve
    # afresh and silently drop the declarations made on this record.
    _ctx_resolved: bool = dataclasses.field(default=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.__dict__.get(RESOLVED_SLOT):
            raise TypeError(
                "a resolved record is not copied (dataclasses.replace would drop its "
                "declarations): declare on the record you hold, or build a new ServerArgs"
            )
        for name in LAYOUT.input_fields:  # deep seal: container inputs stored frozen
            object.__setattr__(self, name, freeze(self.__dict__[name]))
        object.__setattr__(self, STASH_SLOT, [])
        resolve_once(self)
        object.__setattr__(self, RESOLVED_SLOT, True)

    def __setattr__(self, name: str, value: Any) -> None:
        resolved = self.__dict__.get(RESOLVED_SLOT, False)
        if resolved or (name not in LAYOUT.input_fields and name != RESOLVED_SLOT):
            raise RecordMutationError(
                f"ServerArgs.{name} is read-only after resolution: change the live value "
                "with get_context().override(source, ...), or hand a per-runner value to "
                "its runner as a constructor argument"
            )
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        raise RecordMutationError(f"ServerArgs.{name} cannot be deleted")

    def __copy__(self) -> ServerArgs:
        raise TypeError("a resolved record is not copied: declare on the record you hold")

    def __deepcopy__(self, memo: dict[int, Any]) -> ServerArgs:
        raise TypeError("a resolved record is not copied: declare on the record you hold")

    def resolved_dict(self) -> dict[str, Any]:
        """The whole readback: every input field at its resolved value, plus the
        ``Derived`` leaves publish would compute from them."""
        values = resolved_values(self)
        return {**values, **derive_leaves(values)}


def derive_leaves(values: dict[str, Any]) -> dict[str, Any]:
    """Evaluate every ``Derived`` leaf over resolved input ``values``."""
    view = ResolvedView(values)
    return {name: spec.fn(view) for name, spec in LAYOUT.derived.items()}


__all__ = ["LAYOUT", "Derived", "ServerArgs", "derive_leaves"]
