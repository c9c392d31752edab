"""The ``memory`` namespace: KV pool sizing."""

from __future__ import annotations

from ctxrt.fields.base import arg


class Memory:
    _NS_PATH = "memory"

    mem_fraction_static: float | None = arg(None, resolvable=True, help="Per device.")
    page_size: int = arg(1, help="Tokens per KV page.")
