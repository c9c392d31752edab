"""The readback: what ``/server_info`` answers, straight off the seed record."""

from __future__ import annotations

import copy
import functools
from typing import Any

from ctxrt.context import get_observability, get_server_args, get_serving


def server_info() -> dict[str, Any]:
    snapshot = copy.copy(get_server_args())
    return {
        "model_path": get_server_args().model_path,  # ctxlint: ignore[CTX101]
        "served_model_name": get_server_args().served_model_name,
        "context_length": snapshot.context_length,
        "log_level": get_observability().log_level,  # ctxlint: ignore[CTX101] was a seed read
        "tp_size": get_server_args().tp_size,  # ctxlint: ignore[CTX110] dump path reads raw input
        "config": vars(snapshot),
    }


def max_total_tokens() -> int:
    seed = get_server_args()
    return seed.max_running_requests * seed.context_length


@functools.cache
def api_port() -> int:
    """Memoised before the migration: the port of the first publish, forever."""
    return get_serving().port


class Engine:
    """The in-process twin of ``/server_info``, written later: the readback plus the
    token budget (a config answer, not a description of this surface: the RPC twin
    lacks it)."""

    def get_server_info(self) -> dict[str, Any]:
        return {**get_server_args().resolved_dict(), "max_total_tokens": max_total_tokens()}


class ReadbackServicer:
    """The RPC twin, written by someone else: the readback plus the live log level."""

    def GetServerInfo(self, request: object) -> dict[str, Any]:
        return {**get_server_args().resolved_dict(), "log_level": get_observability().log_level}
