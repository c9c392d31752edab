"""TinyLM: a few-layer causal transformer small enough to run on a CPU in
milliseconds. The attention backend is a constructor argument: the runner that
builds the model decides it, so a draft and a target can differ.

The forward is the compiled hot path (``torch.compile(fullgraph=True)``) and reads
the context the way SGLang's model code does, in a form dynamo traces:

- a bag leaf, ``get_exec().kernel.kv_cache_dtype``, and parallel leaves,
  ``get_parallel().tp_size`` / ``.tp_rank``: plain attributes, so dynamo reads them
  while tracing, bakes the value into the graph and guards on it (zero cost per
  call; an override of one recompiles, see docs/ctxrt.md);
- a per-forward flag, ``get_forward().is_extend_in_batch``: graph-visible, a plain
  slot of the per-forward tier (not a contextvar), so the compiled forward reads it
  as SGLang's model code does; dynamo guards on it (a graph per value).

A batched forward writes its keys and values into the runner's preallocated
per-slot KV cache in place (``SlotKVCache``) and attends over each row's slot."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

import torch
import torch.distributed._functional_collectives as funcol
import torch.nn.functional as F
from torch import nn

from ctxrt.context import get_exec, get_forward, get_parallel

ATTENTION_BACKENDS = ("torch_native", "sdpa")
# kv_cache_dtype values that store K and V in 8 bits (emulated: cast down and back).
FP8_KV_DTYPES = {"fp8_e4m3": torch.float8_e4m3fn, "fp8_e5m2": torch.float8_e5m2}


class CausalSelfAttention(nn.Module):
    def __init__(self, hidden: int, heads: int, backend: str) -> None:
        super().__init__()
        if backend not in ATTENTION_BACKENDS:
            raise ValueError(f"TinyLM attention backends are {ATTENTION_BACKENDS}, not {backend!r}")
        self.heads, self.backend = heads, backend
        self.qkv = nn.Linear(hidden, 3 * hidden, bias=False)
        self.out = nn.Linear(hidden, hidden, bias=False)

    def forward(self, x: torch.Tensor, cache: LayerKV | None = None) -> torch.Tensor:
        """Attention over ``x`` [batch, seq, hidden]. Without ``cache``: causal over
        ``x`` alone. With it: this call's keys and values are written into each
        row's slot first (in place), then every token attends over its slot up to
        its own position (``LayerKV``)."""
        batch, seq, hidden = x.shape
        q, k, v = (
            t.view(batch, seq, self.heads, hidden // self.heads).transpose(1, 2)
            for t in self.qkv(x).chunk(3, dim=-1)
        )
        kv_dtype = FP8_KV_DTYPES.get(get_exec().kernel.kv_cache_dtype)
        if kv_dtype is not None:
            k, v = k.to(kv_dtype).to(q.dtype), v.to(kv_dtype).to(q.dtype)
        if cache is None:
            keys, values, mask = k, v, None
        else:
            rows = cache.slots[:, None].expand(-1, seq)
            cache.k[rows, cache.write_pos] = k.transpose(1, 2)  # [batch, seq, heads, dim]
            cache.v[rows, cache.write_pos] = v.transpose(1, 2)
            width = cache.mask.shape[-1]
            keys = cache.k[cache.slots, :width].transpose(1, 2)  # [batch, heads, width, dim]
            values = cache.v[cache.slots, :width].transpose(1, 2)
            mask = cache.mask
        if self.backend == "sdpa":
            attn = F.scaled_dot_product_attention(
                q, keys, values, attn_mask=mask, is_causal=mask is None
            )
        else:
            if mask is None:
                mask = torch.ones(seq, seq, dtype=torch.bool, device=x.device).tril()
            scores = q @ keys.transpose(-1, -2) / math.sqrt(q.shape[-1])
            attn = scores.masked_fill(~mask, float("-inf")).softmax(-1) @ values
        return self.out(attn.transpose(1, 2).reshape(batch, seq, hidden))


class TensorParallelMLP(nn.Module):
    """Megatron's MLP split over the TP group: rank r computes its slice of the
    intermediate width and the partial outputs are summed across the group (every
    rank holds the full weights here: the toy trades memory for one loader)."""

    def __init__(self, hidden: int, intermediate: int) -> None:
        super().__init__()
        self.up = nn.Linear(hidden, intermediate)
        self.down = nn.Linear(intermediate, hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        parallel = get_parallel()
        tp_size = parallel.tp_size
        if tp_size == 1:
            return self.down(F.gelu(self.up(x)))
        shard = self.up.out_features // tp_size
        cols = slice(parallel.tp_rank * shard, (parallel.tp_rank + 1) * shard)
        h = F.gelu(F.linear(x, self.up.weight[cols], self.up.bias[cols]))
        partial = F.linear(h, self.down.weight[:, cols])
        return funcol.all_reduce(partial, "sum", parallel.tp_group) + self.down.bias


class Block(nn.Module):
    def __init__(self, hidden: int, heads: int, intermediate: int, backend: str) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(hidden)
        self.attn = CausalSelfAttention(hidden, heads, backend)
        self.norm2 = nn.LayerNorm(hidden)
        self.mlp = TensorParallelMLP(hidden, intermediate)

    def forward(self, x: torch.Tensor, cache: LayerKV | None = None) -> torch.Tensor:
        x = x + self.attn(self.norm1(x), cache)
        return x + self.mlp(self.norm2(x))


class TinyLM(nn.Module):
    def __init__(
        self,
        hf_config: Mapping[str, Any],
        attention_backend: str,
        num_layers: int | None = None,
    ) -> None:
        """``num_layers`` builds only the first layers of the architecture (a
        layer-skip draft that then shares the target's parameters)."""
        super().__init__()
        hidden = hf_config["hidden_size"]
        depth = hf_config["num_hidden_layers"] if num_layers is None else num_layers
        if not 1 <= depth <= hf_config["num_hidden_layers"]:
            raise ValueError(
                f"{depth} layers; the architecture has {hf_config['num_hidden_layers']}"
            )
        self.embed = nn.Embedding(hf_config["vocab_size"], hidden)
        self.pos = nn.Embedding(hf_config["max_position_embeddings"], hidden)
        self.blocks = nn.ModuleList(
            Block(
                hidden,
                hf_config["num_attention_heads"],
                hf_config["intermediate_size"],
                attention_backend,
            )
            for _ in range(depth)
        )
        self.norm = nn.LayerNorm(hidden)
        self.lm_head = nn.Linear(hidden, hf_config["vocab_size"], bias=False)

    def forward(self, input_ids: torch.Tensor, batch: BatchKV | None = None) -> torch.Tensor:
        """Without ``batch``: one sequence alone, ``input_ids`` [seq], uncached (the
        reference): logits [seq, vocab] when the batch extends (every position is
        scored: a verify step), else [1, vocab] for the last position (a decode step).

        With ``batch`` (``BatchKV``): the running batch, ``input_ids`` [batch, seq]
        right-padded, each row only the tokens its slot does not hold yet; their keys
        and values are written into the slots. Logits [batch, seq, vocab] when
        extending, else [batch, vocab] at each row's last fed token.

        ``is_extend_in_batch`` is a graph-visible per-forward flag: read here, inside
        the compiled forward, as SGLang's model code reads it (a plain slot: dynamo
        guards on it, one graph per value)."""
        extend = get_forward().is_extend_in_batch
        if batch is None:
            ids = input_ids[None]
            x = self.embed(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
            for block in self.blocks:
                x = block(x)
            logits = self.lm_head(self.norm(x if extend else x[:, -1]))
            return logits[0] if extend else logits
        x = self.embed(input_ids) + self.pos(batch.positions)
        for i, block in enumerate(self.blocks):
            x = block(
                x, LayerKV(batch.k[:, i], batch.v[:, i], batch.slots, batch.write_pos, batch.mask)
            )
        if not extend:
            x = x[torch.arange(x.shape[0], device=x.device), batch.fed_lens - 1]
        return self.lm_head(self.norm(x))


class BatchKV(NamedTuple):
    """What a batched forward is handed besides the token ids [batch, seq]: the
    runner's whole KV cache ``k`` / ``v`` [slots, layers, max_len + 1, heads,
    head_dim] (``SlotKVCache``), each row's ``slots`` [batch], the ``positions``
    [batch, seq] of its fed tokens (for the position embedding), ``write_pos``
    [batch, seq] where their keys and values go (padding: the scratch position),
    ``mask`` [batch, 1, seq, width] which of its slot's first ``width`` positions
    each fed token sees (its own and those before it), and ``fed_lens`` [batch]."""

    k: torch.Tensor
    v: torch.Tensor
    slots: torch.Tensor
    positions: torch.Tensor
    write_pos: torch.Tensor
    mask: torch.Tensor
    fed_lens: torch.Tensor


class LayerKV(NamedTuple):
    """One layer's view of ``BatchKV``: ``k`` / ``v`` [slots, max_len + 1, heads,
    head_dim] are views of the cache, so writes through them land in place."""

    k: torch.Tensor
    v: torch.Tensor
    slots: torch.Tensor
    write_pos: torch.Tensor
    mask: torch.Tensor


def share_parameters(draft: nn.Module, target: nn.Module) -> None:
    """Point every parameter of ``draft`` at the target's parameter of the same name
    (the same tensor, not a copy): a layer-skip draft is the target's first layers,
    embedding and head, whatever attention kernel its own modules run."""
    for module_name, module in draft.named_modules():
        source = target.get_submodule(module_name)
        for name in list(module._parameters):
            module._parameters[name] = source._parameters[name]
