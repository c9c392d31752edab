"""The draft worker: a second runner whose values are its own constructor arguments
(context length, attention backend, load format), never a copied config."""

from __future__ import annotations

from ctxrt.record import ServerArgs
from examples.serving_app.model_runner import ModelRunner


class DraftWorker:
    def __init__(
        self,
        server_args: ServerArgs,
        *,
        model_path: str,
        context_length: int,
        attention_backend: str,
        load_format: str,
    ) -> None:
        # Handed the same record the process published; the runner asserts that.
        self.runner = ModelRunner(
            server_args,
            model_path=model_path,
            context_length=context_length,
            attention_backend=attention_backend,
            load_format=load_format,
            is_draft=True,
        )

    def propose(self, token_ids: list[int], num_tokens: int) -> list[int]:
        return self.runner.greedy(token_ids, num_tokens)
