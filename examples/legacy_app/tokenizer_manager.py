"""The tokenizer manager: answers the model's path and served name off itself,
and records a weight reload the pre-migration way, as a config override made in
the tokenizer process."""

from __future__ import annotations

from typing import Any

from ctxrt.context import get_context, get_model

# the fields this process answers itself: they change on a weight reload
_MANAGER_OWNED_FIELDS = ("model_path", "served_model_name")


class TokenizerManager:
    def __init__(self) -> None:
        model = get_model()
        self.model_path = model.model_path
        self.served_model_name = model.served_model_name or model.model_path

    def config_value(self, name: str) -> Any:
        if name in _MANAGER_OWNED_FIELDS:
            return getattr(self, name)
        return get_context().config_leaf(name)

    def update_weights_from_disk(self, model_path: str, load_format: str) -> None:
        get_context().override(
            "update_weights_from_disk", model_path=model_path, load_format=load_format
        )

    def rename_served_model(self, name: str) -> None:
        get_context().override("rename_served_model", served_model_name=name)
