"""ModelRunner: owns one model. Reads its settings off the record it is handed."""

from __future__ import annotations

from ctxrt.context import get_exec, get_server_args, get_tensor_model_parallel_world_size
from ctxrt.record import ServerArgs
from examples.legacy_app.model_loader import get_model


class ModelRunner:
    def __init__(self, server_args: ServerArgs, *, is_draft: bool = False) -> None:
        self.server_args = server_args
        self.is_draft = is_draft
        self.model_path = server_args.model_path
        self.context_length = server_args.context_length
        self.dtype = get_server_args().dtype
        self.model = get_model(self.model_path, load_format=server_args.load_format)
        self.compiled = get_exec().enable_torch_compile
        self.tp_size = get_tensor_model_parallel_world_size()

    @property
    def attention_backend(self) -> str:
        return self.server_args.attention_backend or "sdpa"

    def logits(self, token_ids: list[int]) -> list[float]:
        if len(token_ids) > self.context_length:
            raise ValueError(f"{len(token_ids)} tokens exceed context length {self.context_length}")
        return self.model.rows[token_ids[-1] % self.model.vocab_size]

    def greedy(self, token_ids: list[int], num_tokens: int) -> list[int]:
        tokens = list(token_ids)
        for _ in range(num_tokens):
            row = self.logits(tokens)
            tokens.append(max(range(len(row)), key=row.__getitem__))
        return tokens[len(token_ids) :]
