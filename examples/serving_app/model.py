"""TinyLM: a few-layer causal transformer small enough to run on a CPU in
milliseconds. The attention backend is a constructor argument: the runner that
builds the model decides it, so a draft and a target can differ."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

ATTENTION_BACKENDS = ("torch_native", "sdpa")


class CausalSelfAttention(nn.Module):
    def __init__(self, hidden: int, heads: int, backend: str) -> None:
        super().__init__()
        if backend not in ATTENTION_BACKENDS:
            raise ValueError(f"TinyLM attention backends are {ATTENTION_BACKENDS}, not {backend!r}")
        self.heads, self.backend = heads, backend
        self.qkv = nn.Linear(hidden, 3 * hidden, bias=False)
        self.out = nn.Linear(hidden, hidden, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        seq, hidden = x.shape
        q, k, v = (
            t.view(seq, self.heads, hidden // self.heads).transpose(0, 1)
            for t in self.qkv(x).chunk(3, dim=-1)
        )
        if self.backend == "sdpa":
            attn = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:
            scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
            causal = torch.ones(seq, seq, dtype=torch.bool, device=x.device).tril()
            attn = scores.masked_fill(~causal, float("-inf")).softmax(-1) @ v
        return self.out(attn.transpose(0, 1).reshape(seq, hidden))


class Block(nn.Module):
    def __init__(self, hidden: int, heads: int, intermediate: int, backend: str) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(hidden)
        self.attn = CausalSelfAttention(hidden, heads, backend)
        self.norm2 = nn.LayerNorm(hidden)
        self.mlp = nn.Sequential(
            nn.Linear(hidden, intermediate), nn.GELU(), nn.Linear(intermediate, hidden)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class TinyLM(nn.Module):
    def __init__(self, hf_config: Mapping[str, Any], attention_backend: str) -> None:
        super().__init__()
        hidden = hf_config["hidden_size"]
        self.embed = nn.Embedding(hf_config["vocab_size"], hidden)
        self.pos = nn.Embedding(hf_config["max_position_embeddings"], hidden)
        self.blocks = nn.ModuleList(
            Block(
                hidden,
                hf_config["num_attention_heads"],
                hf_config["intermediate_size"],
                attention_backend,
            )
            for _ in range(hf_config["num_hidden_layers"])
        )
        self.norm = nn.LayerNorm(hidden)
        self.lm_head = nn.Linear(hidden, hf_config["vocab_size"], bias=False)

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        """``input_ids``: [seq] -> logits [seq, vocab]."""
        positions = torch.arange(input_ids.shape[0], device=input_ids.device)
        x = self.embed(input_ids) + self.pos(positions)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.norm(x))
