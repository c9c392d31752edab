"""The draft worker: a second runner, built from a copy of the config with the draft
model's values patched in."""

from __future__ import annotations

import dataclasses

from ctxrt.record import ServerArgs
from examples.legacy_app.model_runner import ModelRunner


class DraftWorker:
    def __init__(self, server_args: ServerArgs, target: ModelRunner) -> None:
        draft_args: ServerArgs = dataclasses.replace(
            server_args,
            model_path=server_args.speculative_draft_model_path or target.model_path,
            load_format=server_args.speculative_draft_load_format,
        )
        # the target's window bounds the draft
        draft_args.context_length = target.server_args.context_length
        draft_args.attention_backend = server_args.speculative_attention_backend
        self.runner = ModelRunner(draft_args, is_draft=True)

    def propose(self, token_ids: list[int], num_tokens: int) -> list[int]:
        return self.runner.greedy(token_ids, num_tokens)
