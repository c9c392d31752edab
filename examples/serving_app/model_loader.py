"""Building weights. The load format is read from the model bag at build time, which
is why a draft build runs inside a scoped override of that leaf (see
``ModelRunner._load_format_scope``)."""

from __future__ import annotations

import zlib
from collections.abc import Mapping
from typing import Any

import torch

from ctxrt.context import get_model
from examples.serving_app.model import TinyLM

LOAD_FORMATS = ("dummy",)  # the built-in models have no checkpoint: weights are generated


def load_model(
    hf_config: Mapping[str, Any],
    *,
    model_path: str,
    attention_backend: str,
    dtype: torch.dtype,
    device: torch.device,
    num_layers: int | None = None,
) -> TinyLM:
    model_bag = get_model()
    load_format = model_bag.load_format
    if load_format not in LOAD_FORMATS:
        raise ValueError(f"no loader for load_format {load_format!r} (model {model_path!r})")
    # Deterministic per (seed, model): a restarted server serves the same weights.
    seed = model_bag.random_seed * 1_000_003 + zlib.crc32(model_path.encode())
    generator_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        model = TinyLM(hf_config, attention_backend, num_layers)
    finally:
        torch.random.set_rng_state(generator_state)
    return model.to(device=device, dtype=dtype).eval()
