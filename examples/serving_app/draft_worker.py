"""The draft worker: a second runner whose values are its own constructor arguments
(context length, attention backend, load format, depth, whose weights), never a
copied config."""

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
        num_layers: int | None = None,
        shared_with: ModelRunner | None = None,
    ) -> None:
        # Handed the same record the process published; the runner asserts that.
        self.runner = ModelRunner(
            server_args,
            model_path=model_path,
            context_length=context_length,
            attention_backend=attention_backend,
            load_format=load_format,
            is_draft=True,
            num_layers=num_layers,
            shared_with=shared_with,
        )

    def propose(self, batch: list[list[int]], num_tokens: int) -> list[list[int]]:
        """``num_tokens`` greedy tokens for every row: one batched forward per token."""
        rows = [list(row) for row in batch]
        for _ in range(num_tokens):
            for row, token in zip(rows, self.runner.decode(rows), strict=True):
                row.append(token)
        return [row[len(orig) :] for row, orig in zip(rows, batch, strict=True)]
