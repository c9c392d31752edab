"""Model-specific resolution for the example's model: declared, never written."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxrt.resolution import register_model_override


@register_model_override("TinyLMForCausalLM")
def tiny_lm_overrides(cfg: Any, hf_config: Mapping[str, Any]) -> dict[str, Any]:
    # TinyLM has no chunked attention: a prefill chunk never exceeds its window.
    if cfg.chunked_prefill_size is None:
        return {"chunked_prefill_size": hf_config["max_position_embeddings"]}
    return {}
