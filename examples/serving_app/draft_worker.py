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
        self.runner.warm_up(verify=False)  # a draft only decodes

    def propose(self, slots: list[int], batch: list[list[int]], num_tokens: int) -> list[list[int]]:
        """``num_tokens`` greedy tokens for every row: one batched forward per token.
        The first feeds each row what the draft's slot lacks (a new request's
        prompt, or the tokens the target added last step); each next one feeds the
        token just proposed."""
        rows = [list(row) for row in batch]
        for _ in range(num_tokens):
            for row, token in zip(rows, self.runner.decode(slots, rows), strict=True):
                row.append(token)
        return [row[len(orig) :] for row, orig in zip(rows, batch, strict=True)]

    def accept(self, slot: int, length: int) -> None:
        """The first ``length`` tokens of the request in ``slot`` are committed: the
        draft's cache keeps at most those."""
        self.runner.truncate(slot, length)

    def release(self, slot: int) -> None:
        self.runner.release(slot)
