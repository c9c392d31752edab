"""The config readback of a tokenizer-side manager (SGLang's ``TokenizerManager``).

``model_path`` and ``served_model_name`` are bag leaves, but after a weight reload
from disk the manager holds them as its own attributes (``MANAGER_OWNED_FIELDS``):
bags do not cross a process boundary, so recording the paths in the tokenizer
process's bag would leave every other process on the old path while its log claimed
a process-wide change. The reload records only ``load_format``; the scheduler
rewrites its own copy where the reload happens.

``config_value(name)`` and ``resolved_config_dict(base)`` answer from the bags (with
this process's overrides) and overlay the manager-owned fields on top."""

from __future__ import annotations

from typing import Any

from ctxrt.context import get_context

MANAGER_OWNED_FIELDS: tuple[str, ...] = ("model_path", "served_model_name")


class ManagerConfig:
    """Mixin for a manager: it keeps ``model_path`` and ``served_model_name`` as
    attributes (set them in ``__init__`` from ``get_model()``)."""

    model_path: str
    served_model_name: str

    def record_config_updates(self, source: str, **fields: Any) -> None:
        """A control-plane config change (a weight update, a parser resolved from the
        chat template): a named ``get_context().override``, one log per process."""
        get_context().override(source, **fields)

    def config_value(self, name: str) -> Any:
        """The value in effect for one config field, by name."""
        if name in MANAGER_OWNED_FIELDS:
            return getattr(self, name)
        return get_context().config_leaf(name)

    def resolved_config_dict(self, base: dict[str, Any]) -> dict[str, Any]:
        """``base`` (a serialized record, ``resolved_dict()``) with the control-plane
        changes and the manager-owned fields on top."""
        resolved = get_context().resolved_server_args_dict(base)
        for name in MANAGER_OWNED_FIELDS:
            resolved[name] = getattr(self, name)
        return resolved

    def update_model_path(self, model_path: str, load_format: str) -> None:
        """After a reload from disk: the paths stay on the manager; ``load_format``
        is recorded in the log."""
        self.served_model_name = model_path
        self.model_path = model_path
        self.record_config_updates("tokenizer.update_weights", load_format=load_format)
