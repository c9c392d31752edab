"""Built-in model configs (the HF-config stand-in): the runtime never downloads, so the
models it can serve are small, fixed architectures described here."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

_CONFIGS: dict[str, dict[str, Any]] = {
    "tiny-lm": {
        "architectures": ["TinyLMForCausalLM"],
        "vocab_size": 260,
        "hidden_size": 32,
        "num_attention_heads": 4,
        "num_hidden_layers": 2,
        "intermediate_size": 64,
        "max_position_embeddings": 128,
    },
    "tiny-lm-draft": {
        "architectures": ["TinyLMForCausalLM"],
        "vocab_size": 260,
        "hidden_size": 16,
        "num_attention_heads": 2,
        "num_hidden_layers": 1,
        "intermediate_size": 32,
        "max_position_embeddings": 128,
    },
    "dummy": {
        "architectures": ["DummyForCausalLM"],
        "vocab_size": 16,
        "hidden_size": 8,
        "num_attention_heads": 1,
        "num_hidden_layers": 1,
        "intermediate_size": 8,
        "max_position_embeddings": 64,
    },
}


def load_hf_config(model_path: str) -> MappingProxyType[str, Any]:
    """The read-only config of a built-in model; unknown paths raise."""
    try:
        return MappingProxyType(_CONFIGS[model_path])
    except KeyError:
        known = ", ".join(sorted(_CONFIGS))
        raise ValueError(f"unknown model {model_path!r}; built-in models: {known}") from None
