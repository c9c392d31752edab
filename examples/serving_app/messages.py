"""What travels on the queues between the processes."""

from __future__ import annotations

import dataclasses
from typing import Any


@dataclasses.dataclass(frozen=True)
class GenerateRequest:
    rid: int
    text: str
    max_new_tokens: int | None = None


@dataclasses.dataclass(frozen=True)
class TokenizedRequest:
    rid: int
    input_ids: list[int]
    max_new_tokens: int


@dataclasses.dataclass(frozen=True)
class TokenOutput:
    rid: int
    output_ids: list[int]
    accepted_draft_tokens: int
    proposed_draft_tokens: int


@dataclasses.dataclass(frozen=True)
class Response:
    rid: int
    text: str
    num_tokens: int
    accepted_draft_tokens: int
    proposed_draft_tokens: int


@dataclasses.dataclass(frozen=True)
class ConfigUpdateRequest:
    """A post-startup control-plane change, recorded in the tokenizer process."""

    source: str
    fields: dict[str, Any]


@dataclasses.dataclass(frozen=True)
class ServerInfoRequest:
    surface: str = "http"  # which sibling answers: http, rpc or engine (readback.py)


@dataclasses.dataclass(frozen=True)
class ServerInfo:
    info: dict[str, Any]


@dataclasses.dataclass(frozen=True)
class Shutdown:
    """Travels down the pipeline; each stage forwards it, then exits."""
