"""TinyLM: a few-layer causal transformer small enough to run on a CPU in
milliseconds. The attention backend is a constructor argument: the runner that
builds the model decides it, so a draft and a target can differ.

The forward is the compiled hot path (``torch.compile(fullgraph=True)``) and reads
the context the way SGLang's model code does, in a form dynamo traces:

- a bag leaf, ``get_exec().kernel.kv_cache_dtype``, and parallel leaves,
  ``get_parallel().tp_size`` / ``.tp_rank``: plain attributes, so dynamo reads them
  while tracing, bakes the value into the graph and guards on it (zero cost per
  call; an override of one recompiles, see docs/ctxrt.md);
- per-forward flags as the ``ForwardFlags`` snapshot the caller passes in: the
  ``get_forward()`` contextvar is read outside the compiled region, because dynamo
  cannot trace ``ContextVar.get`` (SGLang hands a ``ForwardBatch`` to ``forward``
  for the same reason)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NamedTuple

import torch
import torch.distributed._functional_collectives as funcol
import torch.nn.functional as F
from torch import nn

from ctxrt.context import get_exec, get_parallel
from ctxrt.forward import ForwardFlags

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

    def forward(
        self, x: torch.Tensor, past: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Attention over ``x`` [batch, seq, hidden]; returns the output and this
        call's keys and values (what a KV cache stores). ``past``: the cached keys
        and values [batch, heads, past, head_dim] and the mask [batch, 1, seq,
        past + seq] saying which keys each query may see; without it, causal."""
        batch, seq, hidden = x.shape
        q, k, v = (
            t.view(batch, seq, self.heads, hidden // self.heads).transpose(1, 2)
            for t in self.qkv(x).chunk(3, dim=-1)
        )
        kv_dtype = FP8_KV_DTYPES.get(get_exec().kernel.kv_cache_dtype)
        if kv_dtype is not None:
            k, v = k.to(kv_dtype).to(q.dtype), v.to(kv_dtype).to(q.dtype)
        if past is None:
            keys, values = k, v
            mask = torch.ones(seq, seq, dtype=torch.bool, device=x.device).tril()
        else:
            keys, values = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
            mask = past[2]
        if self.backend == "sdpa":
            if past is None:
                attn = F.scaled_dot_product_attention(q, keys, values, is_causal=True)
            else:
                attn = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask)
        else:
            scores = q @ keys.transpose(-1, -2) / math.sqrt(q.shape[-1])
            attn = scores.masked_fill(~mask, float("-inf")).softmax(-1) @ values
        return self.out(attn.transpose(1, 2).reshape(batch, seq, hidden)), k, v


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

    def forward(
        self, x: torch.Tensor, past: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        attn, k, v = self.attn(self.norm1(x), past)
        x = x + attn
        return x + self.mlp(self.norm2(x)), k, v


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

    def forward(
        self,
        input_ids: torch.Tensor,
        flags: ForwardFlags,
        seq_lens: torch.Tensor | None = None,
        cache: KVInput | None = None,
    ) -> Any:
        """One sequence, ``input_ids`` [seq]: logits [seq, vocab] when the batch
        extends (every position is scored: a verify step), else [1, vocab] for the
        last position (a decode step).

        A right-padded batch, ``input_ids`` [batch, seq] with ``seq_lens`` [batch] the
        real length of each row: [batch, seq, vocab] when extending, else [batch,
        vocab] at each row's last real position. Causal attention keeps a row's real
        positions from ever seeing its padding.

        With ``cache`` (positions, past keys and values per layer, mask: see
        ``KVInput``), ``input_ids`` are only the tokens not cached yet, and the
        answer is (logits as for a batch, the new keys, the new values) [layers,
        batch, heads, seq, head_dim], for the caller's cache."""
        batched = seq_lens is not None
        ids = input_ids if batched else input_ids[None]
        if cache is None:
            x = self.embed(ids) + self.pos(torch.arange(ids.shape[1], device=ids.device))
        else:
            x = self.embed(ids) + self.pos(cache.positions)
        keys, values = [], []
        for i, block in enumerate(self.blocks):
            past = None if cache is None else (cache.past_k[i], cache.past_v[i], cache.mask)
            x, k, v = block(x, past)
            keys.append(k)
            values.append(v)
        if not flags.is_extend_in_batch:
            x = x[torch.arange(x.shape[0], device=x.device), seq_lens - 1] if batched else x[:, -1]
            logits = self.lm_head(self.norm(x))
        else:
            logits = self.lm_head(self.norm(x))
            logits = logits if batched else logits[0]
        if cache is None:
            return logits
        return logits, torch.stack(keys), torch.stack(values)


class KVInput(NamedTuple):
    """What a cached forward is handed: ``positions`` [batch, seq] of the new
    tokens, the cached ``past_k`` / ``past_v`` [layers, batch, heads, past,
    head_dim] (right-padded), and ``mask`` [batch, 1, seq, past + seq]: which of the
    past and new keys each new token may see."""

    positions: torch.Tensor
    past_k: torch.Tensor
    past_v: torch.Tensor
    mask: torch.Tensor


def share_parameters(draft: nn.Module, target: nn.Module) -> None:
    """Point every parameter of ``draft`` at the target's parameter of the same name
    (the same tensor, not a copy): a layer-skip draft is the target's first layers,
    embedding and head, whatever attention kernel its own modules run."""
    for module_name, module in draft.named_modules():
        source = target.get_submodule(module_name)
        for name in list(module._parameters):
            module._parameters[name] = source._parameters[name]
