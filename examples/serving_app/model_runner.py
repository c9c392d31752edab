"""ModelRunner: owns one model and its per-runner values.

Everything that can differ between a target and a draft runner (model path, context
length, attention backend, load format) is a constructor argument and lives on the
runner; the runner never reads those from config, so a second runner cannot inherit
the first one's answer."""

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
from examples.serving_app.model_loader import load_model


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
    ) -> None:
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
        with self._load_format_scope():
            model = load_model(
                hf_config,
                model_path=model_path,
                attention_backend=attention_backend,
                dtype=self.dtype,
                device=self.device,
            )
        self.model = model
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
        if len(token_ids) > self.context_length:
            raise ValueError(f"{len(token_ids)} tokens exceed context length {self.context_length}")
        ids = torch.tensor(token_ids, dtype=torch.long, device=self.device)
        # The per-forward flags cross into the compiled forward as a snapshot argument.
        out = self.model(ids, get_forward().snapshot())
        return out.float().masked_fill(~self.allowed, float("-inf"))

    def greedy(self, token_ids: list[int], num_tokens: int) -> list[int]:
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
