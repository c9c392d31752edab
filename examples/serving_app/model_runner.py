"""ModelRunner: owns one model and its per-runner values, and runs it over a batch.

Everything that can differ between a target and a draft runner (model path, context
length, attention backend, load format, depth, whose weights) is a constructor
argument and lives on the runner; the runner never reads those from config, so a
second runner cannot inherit the first one's answer.

There is no KV cache: every step scores each sequence from its start. That keeps a
continuous batch trivial to join (a new request is one more row) and costs little
at this model's size; what batching saves is the per-forward overhead."""

from __future__ import annotations

import torch

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
from examples.serving_app.model import TinyLM, share_parameters
from examples.serving_app.model_loader import load_model

PAD_ID = 0  # right padding: causal attention keeps real positions from seeing it


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
            self.model = torch.compile(model, backend="eager", fullgraph=True, dynamic=True)
        # One mask per device, shared by every runner of the process on that device.
        self.allowed = _shared_printable_mask(self.device)
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
    def batch_logits(self, batch: list[list[int]]) -> torch.Tensor:
        """One forward over the batch, rows right-padded to the longest: [batch,
        vocab] at each row's last token, or [batch, seq, vocab] when extending."""
        lens = [len(row) for row in batch]
        self._check_length(max(lens))
        ids = torch.full((len(batch), max(lens)), PAD_ID, dtype=torch.long)
        for i, row in enumerate(batch):
            ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        seq_lens = torch.tensor(lens, dtype=torch.long, device=self.device)
        out = self.model(ids.to(self.device), get_forward().snapshot(), seq_lens)
        return out.float().masked_fill(~self.allowed, float("-inf"))

    def _check_length(self, length: int) -> None:
        if length > self.context_length:
            raise ValueError(f"{length} tokens exceed context length {self.context_length}")

    def decode(self, batch: list[list[int]]) -> list[int]:
        """The greedy next token of every row, in one batched forward."""
        return self.batch_logits(batch).argmax(-1).tolist()

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
