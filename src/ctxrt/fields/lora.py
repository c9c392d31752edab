"""The ``lora`` namespace: adapters."""

from __future__ import annotations

from ctxrt.fields.base import arg


class Lora:
    _NS_PATH = "lora"

    enable_lora: bool | None = arg(None, resolvable=True, help="Defaults to bool(lora_paths).")
    lora_paths: list[str] = arg([], help="Adapters to load at startup.")
    max_loras_per_batch: int = arg(8, help="Adapter slots per batch.")
