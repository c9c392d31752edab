"""ModelRunner: owns one model and its per-runner values, and runs it over a batch.

Everything that can differ between a target and a draft runner (model path, context
length, attention backend, load format, depth, whose weights) is a constructor
argument and lives on the runner; the runner never reads those from config, so a
second runner cannot inherit the first one's answer.

A step runs through a prefix KV cache (``cached_logits``): each row reuses the keys
and values of the longest cached prefix it shares and feeds only the rest, so a
decode step feeds one token per row. The cache is keyed by tokens, not requests
(keys and values are a function of the token prefix alone), which makes it
correct whoever shares it: a new request's prompt, a rolled-back draft."""

from __future__ import annotations

import dataclasses
from typing import Any

import torch
import torch.nn.functional as F

from ctxrt.context import (
    assert_published,
    get_device,
    get_exec,
    get_forward,
    get_model,
    get_resources,
    get_stream,
)
from ctxrt.hf_configs import load_hf_config
from ctxrt.record import ServerArgs
from examples.serving_app.byte_tokenizer import PRINTABLE_IDS, VOCAB_SIZE
from examples.serving_app.model import KVInput, TinyLM, share_parameters
from examples.serving_app.model_loader import load_model

PAD_ID = 0  # right padding: causal attention keeps real positions from seeing it
MIN_DYNAMIC = 2  # the least a dynamic dimension of the cached forward is padded to
# The target and the layer-skip draft run one code object (TinyLM.forward): their
# graphs (per batch size 1 or more, per extend flag) share dynamo's recompile limit.
RECOMPILE_LIMIT = 16


@dataclasses.dataclass(frozen=True)
class PrefixCache:
    """The keys and values [layers, rows, heads, length, head_dim] of the rows of
    the last batch, ``tokens[i]`` for row i (positions past its length are junk)."""

    tokens: list[tuple[int, ...]]
    k: torch.Tensor
    v: torch.Tensor

    def longest_prefix(self, row: tuple[int, ...], hint: int, enough: int) -> tuple[int, int]:
        """(index, length) of the cached row sharing the longest prefix with ``row``:
        the one at ``hint`` (a running batch keeps its order) when it shares
        ``enough``, else the best of all."""
        if hint < len(self.tokens) and _common_prefix(self.tokens[hint], row) >= enough:
            return hint, enough
        best, index = 0, 0
        for i, cached in enumerate(self.tokens):
            n = _common_prefix(cached, row)
            if n > best:
                best, index = n, i
        return index, best


def _common_prefix(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    """Length of the longest common prefix: a binary search over slice comparisons,
    which run in C (rows sharing a prompt share long prefixes)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[:mid] == b[:mid]:
            low = mid
        else:
            high = mid - 1
    return low


class ModelRunner:
    def __init__(
        self,
        server_args: ServerArgs,
        *,
        model_path: str,
        context_length: int,
        attention_backend: str,
        load_format: str,
        is_draft: bool = False,
        num_layers: int | None = None,
        shared_with: ModelRunner | None = None,
    ) -> None:
        """``num_layers`` builds the first layers only; ``shared_with`` takes every
        weight from that runner's model instead of loading (a layer-skip draft)."""
        assert_published(server_args, role="scheduler")
        self.model_path = model_path
        self.context_length = context_length
        self.attention_backend = attention_backend
        self.load_format = load_format
        self.is_draft = is_draft
        self.dtype = getattr(torch, get_model().dtype)
        self.device = torch.device(get_device().device)  # where resolution put this process
        hf_config = load_hf_config(model_path)
        if hf_config["vocab_size"] != VOCAB_SIZE:
            raise ValueError(f"{model_path!r} does not use the byte tokenizer's vocabulary")
        if shared_with is not None:
            with torch.device("meta"):  # no storage: every parameter is the target's
                model = TinyLM(hf_config, attention_backend, num_layers)
            share_parameters(model, shared_with.module)
            model.eval()
        else:
            with self._load_format_scope():
                model = load_model(
                    hf_config,
                    model_path=model_path,
                    attention_backend=attention_backend,
                    dtype=self.dtype,
                    device=self.device,
                    num_layers=num_layers,
                )
        self.module = model  # the eager module (its parameters), whatever runs it
        self.model: torch.nn.Module = model
        if get_exec().enable_torch_compile:
            # fullgraph: a graph break is an error, not a silent eager fallback.
            # dynamic: the sequence length is symbolic, so a graph per flags value.
            torch._dynamo.config.recompile_limit = max(
                torch._dynamo.config.recompile_limit, RECOMPILE_LIMIT
            )
            self.model = torch.compile(model, backend="eager", fullgraph=True, dynamic=True)
        # One mask per device, shared by every runner of the process on that device.
        self.allowed = _shared_printable_mask(self.device)
        self._cache: PrefixCache | None = None  # what the last cached_logits call computed
        self.max_position = hf_config["max_position_embeddings"]
        # The runner's side stream: leased by its role's literal name at init, never
        # inside a graph capture (CTX701).
        self.side_stream = get_stream("alt")

    def _load_format_scope(self):  # type: ignore[no-untyped-def]
        """Model construction reads ``get_model().load_format``; a draft build sees its
        own format for exactly the duration of the build, and nothing outlives it."""
        return get_model().override(load_format=self.load_format)

    @torch.inference_mode()
    def logits(self, token_ids: list[int]) -> torch.Tensor:
        """One sequence alone: [1, vocab] for its next token, or [seq, vocab] when the
        per-forward flags say the batch extends."""
        self._check_length(len(token_ids))
        ids = torch.tensor(token_ids, dtype=torch.long, device=self.device)
        # The per-forward flags cross into the compiled forward as a snapshot argument.
        out = self.model(ids, get_forward().snapshot())
        return out.float().masked_fill(~self.allowed, float("-inf"))

    @torch.inference_mode()
    def cached_logits(
        self, batch: list[list[int]], last: list[int]
    ) -> tuple[torch.Tensor, list[int]]:
        """One forward that feeds each row only what no cached prefix covers, and
        scores at least its last ``last[i]`` positions: the logits [batch, vocab] at
        each row's last token, or, when some ``last[i]`` > 1, [batch, fed, vocab]
        with each row's fed length (its last ``last[i]`` fed positions are the ones
        asked for). The
        cache then holds exactly this batch's rows: pass the whole running batch at
        every step, so finished requests and rejected drafts drop out. The work per
        call is a fixed number of tensor operations, whatever the batch size."""
        rows = [tuple(row) for row in batch]
        self._check_length(max(map(len, rows)))
        sources, starts = [], []
        for i, (row, keep) in enumerate(zip(rows, last, strict=True)):
            usable = len(row) - keep
            index, shared = self._cache.longest_prefix(row, i, usable) if self._cache else (0, 0)
            sources.append(index)
            starts.append(min(shared, usable))  # the kept positions are fed
        fed_lens = [len(row) - start for row, start in zip(rows, starts, strict=True)]
        # At least 2 past and 2 fed columns (masked when unused): dynamo specialises
        # sizes 0 and 1, and every such variant would be one more graph to compile.
        past, fed = max(*starts, MIN_DYNAMIC), max(*fed_lens, MIN_DYNAMIC)
        ids = torch.tensor(
            [
                [*row[s:], *[PAD_ID] * (fed - n)]
                for row, s, n in zip(rows, starts, fed_lens, strict=True)
            ]
        )
        start_t = torch.tensor(starts)
        positions = (start_t[:, None] + torch.arange(fed)).clamp(max=self.max_position - 1)
        sees_past = (torch.arange(past)[None, :] < start_t[:, None])[:, None, :].expand(-1, fed, -1)
        causal = torch.ones(fed, fed, dtype=torch.bool).tril().expand(len(rows), -1, -1)
        visible = torch.cat([sees_past, causal], dim=-1)[:, None]
        if self._cache is not None:
            index = torch.tensor(sources, device=self.device)
            short = max(past - self._cache.k.shape[3], 0)
            past_k = F.pad(self._cache.k[:, index, :, :past], (0, 0, 0, short))
            past_v = F.pad(self._cache.v[:, index, :, :past], (0, 0, 0, short))
        else:
            layers, heads = len(self.module.blocks), self.module.blocks[0].attn.heads
            shape = (layers, len(rows), heads, past, self.module.embed.embedding_dim // heads)
            past_k = past_v = torch.zeros(shape, dtype=self.dtype, device=self.device)
        kv = KVInput(positions.to(self.device), past_k, past_v, visible.to(self.device))
        extend = max(last) > 1
        with get_forward().scoped(is_extend_in_batch=extend):
            # The per-forward flags cross into the compiled forward as a snapshot argument.
            logits, new_k, new_v = self.model(
                ids.to(self.device),
                get_forward().snapshot(),
                torch.tensor(fed_lens, device=self.device),
                kv,
            )
        logits = logits.float().masked_fill(~self.allowed, float("-inf"))
        # Row i's cache: its past [:start], then its new keys, found at past + j - start.
        j = torch.arange(past + fed)
        gather = torch.where(
            j[None, :] < start_t[:, None], j[None, :], past + j[None, :] - start_t[:, None]
        )
        gather = gather.clamp(max=past + fed - 1).to(self.device)
        index = gather[None, :, None, :, None].expand(
            new_k.shape[0], -1, new_k.shape[2], -1, new_k.shape[4]
        )
        self._cache = PrefixCache(
            rows,
            torch.cat([past_k, new_k], dim=3).gather(3, index),
            torch.cat([past_v, new_v], dim=3).gather(3, index),
        )
        return logits, fed_lens

    def cached_greedy(self, batch: list[list[int]], last: list[int]) -> list[list[int]]:
        """The greedy token at each of the last ``last[i]`` positions of every row:
        one argmax for the whole batch (per-row tensor calls would cost more than
        the forward at this model's size)."""
        logits, fed_lens = self.cached_logits(batch, last)
        best: list[Any] = logits.argmax(-1).tolist()
        if logits.dim() == 2:  # one position per row
            return [[token] for token in best]
        return [row[n - keep : n] for row, n, keep in zip(best, fed_lens, last, strict=True)]

    def _check_length(self, length: int) -> None:
        if length > self.context_length:
            raise ValueError(f"{length} tokens exceed context length {self.context_length}")

    def decode(self, batch: list[list[int]]) -> list[int]:
        """The greedy next token of every row, in one cached batched forward."""
        return [tokens[0] for tokens in self.cached_greedy(batch, [1] * len(batch))]

    def greedy(self, token_ids: list[int], num_tokens: int) -> list[int]:
        """One sequence alone, unbatched: the reference batched decoding reproduces."""
        tokens = list(token_ids)
        for _ in range(num_tokens):
            tokens.append(int(self.logits(tokens)[-1].argmax()))
        return tokens[len(token_ids) :]


def _shared_printable_mask(device: torch.device) -> torch.Tensor:
    """A per-device buffer manages its resources entry directly, under one literal
    name (the design's rule for per-device semantics): `get_buffer` leases one
    buffer per name, and a name computed from the device is no lease (CTX701)."""
    masks = get_resources().buffers.setdefault("printable_logit_mask", {})
    if device not in masks:
        masks[device] = _printable_mask(device)
    return masks[device]


def _printable_mask(device: torch.device) -> torch.Tensor:
    mask = torch.zeros(VOCAB_SIZE, dtype=torch.bool, device=device)
    mask[list(PRINTABLE_IDS)] = True
    return mask
