"""The ``schedule`` namespace: batching limits and policy."""

from __future__ import annotations

from ctxrt.fields.base import arg


class Schedule:
    _NS_PATH = "schedule"

    max_running_requests: int | None = arg(None, resolvable=True, help="Per device.")
    chunked_prefill_size: int | None = arg(None, resolvable=True, help="Per device and DP.")
    schedule_policy: str = arg("fcfs", help="Queue ordering.")
    max_new_tokens_default: int = arg(16, help="Used when a request names no limit.")
