"""Per-output limits, read where the detokenizer needs them."""

from __future__ import annotations

from ctxrt.context import get_model, get_schedule


def clip_to_window(output_ids: list[int]) -> list[int]:
    # a model read: the detokenizer's role may read only serving and observability,
    # so enforce mode aborts the detokenizer here
    return output_ids[: get_model().context_length or len(output_ids)]


def at_token_limit(output_ids: list[int]) -> bool:
    return len(output_ids) >= get_schedule().max_new_tokens_default  # schedule: the same
