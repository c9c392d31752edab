"""ModelRunner: owns one model and its per-runner values, and runs it over a batch.

Everything that can differ between a target and a draft runner (model path, context
length, attention backend, load format, depth, whose weights) is a constructor
argument and lives on the runner; the runner never reads those from config, so a
second runner cannot inherit the first one's answer.

A step runs through the runner's KV cache (``SlotKVCache``): preallocated, one slot
per running request (the scheduler's slot index, the same in the target and the
draft runner), written in place. A row feeds only the tokens its slot does not hold
yet: a new request its prompt (its prefill, batched with the others' decodes), a
running one its last token, or its last token and the draft. One forward runs the
whole batch, whatever mix of prefill, decode and verify it holds."""

from __future__ import annotations

from typing import Any

import torch

from ctxrt.context import (
    assert_published,
    get_device,
    get_exec,
    get_forward,
    get_model,
    get_resources,
    get_schedule,
    get_spec,
    get_stream,
)
from ctxrt.hf_configs import load_hf_config
from ctxrt.record import ServerArgs
from examples.serving_app.byte_tokenizer import PRINTABLE_IDS, VOCAB_SIZE
from examples.serving_app.kv_cache import SlotKVCache
from examples.serving_app.model import BatchKV, TinyLM, share_parameters
from examples.serving_app.model_loader import load_model

PAD_ID = 0  # right padding: fed to the scratch position, never seen by a real token
MIN_DYNAMIC = 2  # the least a dynamic dimension of the forward is padded to
# The target and the layer-skip draft run one code object (TinyLM.forward): their
# graphs (one per extend flag value) share dynamo's recompile limit.
RECOMPILE_LIMIT = 16


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
            # dynamic: the batch, the fed length and the key width are symbolic. No
            # duck sizing: two of them equal by chance (a prefill's width and fed
            # length) would be guarded equal, and the next call would recompile.
            torch._dynamo.config.recompile_limit = max(
                torch._dynamo.config.recompile_limit, RECOMPILE_LIMIT
            )
            torch.fx.experimental._config.use_duck_shape = False
            self.model = torch.compile(model, backend="eager", fullgraph=True, dynamic=True)
        # One mask per device, shared by every runner of the process on that device.
        self.allowed = _shared_printable_mask(self.device)
        self.max_position = hf_config["max_position_embeddings"]
        heads = hf_config["num_attention_heads"]
        # A slot per running request. A draft proposes a few tokens past what its
        # request may keep (they are rolled back), hence the draft tokens' headroom.
        self.kv = SlotKVCache(
            slots=get_schedule().max_running_requests,
            layers=len(model.blocks),
            max_len=context_length + (get_spec().speculative_num_draft_tokens or 0),
            heads=heads,
            head_dim=hf_config["hidden_size"] // heads,
            dtype=self.dtype,
            device=self.device,
        )
        # The cache's shape is fixed: no symbol for dynamo to guard on or recompile for.
        torch._dynamo.mark_static(self.kv.k)
        torch._dynamo.mark_static(self.kv.v)
        # The runner's side stream: leased by its role's literal name at init, never
        # inside a graph capture (CTX701).
        self.side_stream = get_stream("alt")

    def _load_format_scope(self):  # type: ignore[no-untyped-def]
        """Model construction reads ``get_model().load_format``; a draft build sees its
        own format for exactly the duration of the build, and nothing outlives it."""
        return get_model().override(load_format=self.load_format)

    @torch.inference_mode()
    def logits(self, token_ids: list[int]) -> torch.Tensor:
        """One sequence alone, uncached: [1, vocab] for its next token, or [seq, vocab]
        when the per-forward flags say the batch extends."""
        self._check_length(len(token_ids))
        ids = torch.tensor(token_ids, dtype=torch.long, device=self.device)
        out = self.model(ids)
        return out.float().masked_fill(~self.allowed, float("-inf"))

    @torch.inference_mode()
    def cached_logits(
        self, slots: list[int], batch: list[list[int]], last: list[int]
    ) -> tuple[torch.Tensor, list[int]]:
        """One forward over the batch: row i (held in slot ``slots[i]``) is fed the
        tokens of ``batch[i]`` its slot does not hold yet (at least its last
        ``last[i]``, the positions it scores). The logits [batch, vocab] at each row's last
        token, or, when some ``last[i]`` > 1, [batch, fed, vocab] with each row's fed
        length (its last ``last[i]`` fed positions are the ones asked for). Every
        fed token is then cached in its slot (``truncate`` drops a rejected draft).
        The tensor work is a fixed number of operations whatever the batch holds."""
        lens = self.kv.lens
        # A position asked to be scored is fed again if the slot holds it already.
        starts = [
            min(lens[slot], len(row) - keep)
            for slot, row, keep in zip(slots, batch, last, strict=True)
        ]
        feeds = [row[start:] for row, start in zip(batch, starts, strict=True)]
        fed_lens = [len(feed) for feed in feeds]
        self._check_length(max(map(len, batch)))
        for slot, start, n in zip(slots, starts, fed_lens, strict=True):
            self.kv.check_room(start, n, slot)
        # At least 2 rows (a lone row gets a dummy one in the scratch slot) and 2 fed
        # columns: dynamo specialises sizes 0 and 1, and every such variant would be
        # one more graph to compile. The padding's work is negligible at this size.
        rows = max(len(batch), MIN_DYNAMIC)
        extra = rows - len(batch)
        fed = max(*fed_lens, MIN_DYNAMIC)
        ids = torch.tensor(
            [feed + [PAD_ID] * (fed - len(feed)) for feed in feeds] + [[PAD_ID] * fed] * extra
        )
        start_t = torch.tensor(starts + [0] * extra)
        fed_t = torch.tensor(fed_lens + [1] * extra)
        positions = start_t[:, None] + torch.arange(fed)
        # Padding goes to the scratch position; a real token sees its slot up to itself.
        write_pos = torch.where(torch.arange(fed) < fed_t[:, None], positions, self.kv.scratch)
        # The keys: each slot up to the furthest position a real token reaches.
        width = max(*(s + n for s, n in zip(starts, fed_lens, strict=True)), MIN_DYNAMIC)
        mask = (torch.arange(width) <= positions[:, :, None])[:, None]
        batch_kv = BatchKV(
            self.kv.k,
            self.kv.v,
            torch.tensor(slots + [self.kv.scratch_slot] * extra, device=self.device),
            positions.clamp(max=self.max_position - 1).to(self.device),
            write_pos.to(self.device),
            mask.to(self.device),
            fed_t.to(self.device),
        )
        with get_forward().scoped(is_extend_in_batch=max(last) > 1):
            logits = self.model(ids.to(self.device), batch_kv)
        for slot, start, n in zip(slots, starts, fed_lens, strict=True):
            lens[slot] = start + n
        logits = logits[: len(batch)].float().masked_fill(~self.allowed, float("-inf"))
        return logits, fed_lens

    def cached_greedy(
        self, slots: list[int], batch: list[list[int]], last: list[int]
    ) -> list[list[int]]:
        """The greedy token at each of the last ``last[i]`` positions of every row:
        one argmax for the whole batch (per-row tensor calls would cost more than
        the forward at this model's size)."""
        logits, fed_lens = self.cached_logits(slots, batch, last)
        best: list[Any] = logits.argmax(-1).tolist()
        if logits.dim() == 2:  # one position per row
            return [[token] for token in best]
        return [row[n - keep : n] for row, n, keep in zip(best, fed_lens, last, strict=True)]

    def decode(self, slots: list[int], batch: list[list[int]]) -> list[int]:
        """The greedy next token of every row, in one batched forward."""
        return [tokens[0] for tokens in self.cached_greedy(slots, batch, [1] * len(batch))]

    def warm_up(self, *, verify: bool) -> None:
        """Run each kind of forward serving will (a decode; a verify when
        ``verify``), so a compiled model traces its graphs now, before the first
        request, instead of inside a step. Eager, there is nothing to trace."""
        if self.model is self.module:
            return
        self.decode([0], [[PAD_ID] * 2])
        if verify:  # the last token and a draft, every position scored
            self.cached_greedy([0], [[PAD_ID] * 4], [2])
        self.release(0)

    def truncate(self, slot: int, length: int) -> None:
        """Keep at most the first ``length`` tokens cached in ``slot`` (the rest was
        a draft the target rejected)."""
        self.kv.truncate(slot, length)

    def release(self, slot: int) -> None:
        """The request in ``slot`` left; the slot's next request starts empty."""
        self.kv.release(slot)

    def _check_length(self, length: int) -> None:
        if length > self.context_length:
            raise ValueError(f"{length} tokens exceed context length {self.context_length}")

    def greedy(self, token_ids: list[int], num_tokens: int) -> list[int]:
        """One sequence alone, unbatched and uncached: the reference batched decoding
        reproduces."""
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
