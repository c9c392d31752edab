"""Model-specific adjustments, written the pre-migration way: an override that
assigns instead of returning its declaration, one that reads bags while the
record is still being resolved (no bag exists before publish), one that declares
a field resolution may not decide and a window the record never had."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxrt.context import get_exec, get_model
from ctxrt.resolution import register_model_override


@register_model_override("TinyLMForCausalLM")
def tiny_lm_overrides(cfg: Any, hf_config: Mapping[str, Any]) -> dict[str, Any]:
    if cfg.chunked_prefill_size is None:
        cfg.chunked_prefill_size = hf_config["max_position_embeddings"]
    return {}


@register_model_override("TinyMoEForCausalLM")
def tiny_moe_overrides(cfg: Any, hf_config: Mapping[str, Any]) -> dict[str, Any]:
    if get_exec().moe.moe_runner_backend == "auto":
        return {"moe_runner_backend": "torch"}
    return {"context_length": get_model().context_length or hf_config["max_position_embeddings"]}


@register_model_override("TinyMistralForCausalLM")
def tiny_mistral_overrides(cfg: Any, hf_config: Mapping[str, Any]) -> dict[str, Any]:
    # sliding-window attention pages the KV cache at the window's granularity
    window = hf_config.get("sliding_window")
    if window is None:
        return {}
    return {"page_size": 16, "sliding_window_size": window}
