"""What travels on the queues between the processes: one message per request on
the way in, one message per batch step on the way out (as SGLang's BatchTokenIDOut
and BatchStrOut)."""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass(frozen=True)
class TokenizedRequest:
    rid: str
    input_ids: list[int]
    max_new_tokens: int


@dataclasses.dataclass(frozen=True)
class BatchTokenOut:
    """Scheduler -> detokenizer after each step: every row of the batch that moved,
    its new token ids, and the request's running totals."""

    rids: list[str]
    new_ids: list[list[int]]
    finished: list[bool]
    accepted_draft_tokens: list[int]
    proposed_draft_tokens: list[int]


@dataclasses.dataclass(frozen=True)
class BatchStrOut:
    """Detokenizer -> tokenizer manager: the text so far of each request that moved."""

    rids: list[str]
    texts: list[str]
    num_tokens: list[int]
    finished: list[bool]
    accepted_draft_tokens: list[int]
    proposed_draft_tokens: list[int]


@dataclasses.dataclass(frozen=True)
class SchedulerReady:
    """Scheduler -> launcher once the model is loaded: the server may take requests."""

    max_running_requests: int


@dataclasses.dataclass(frozen=True)
class ConfigUpdateRequest:
    """A post-startup control-plane change: recorded in the tokenizer manager's
    process, then applied by each process downstream in turn."""

    source: str
    fields: dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Shutdown:
    """Travels down the pipeline; each stage forwards it, then exits."""
