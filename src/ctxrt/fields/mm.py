"""The ``mm`` namespace: multimodal inputs."""

from __future__ import annotations

from ctxrt.fields.base import arg


class Mm:
    _NS_PATH = "mm"

    mm_attention_backend: str | None = arg(None, help="Vision-encoder attention kernel.")
