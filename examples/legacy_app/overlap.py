"""Overlap helpers from before the resources and per-forward tiers had rules: a
buffer per device leased under a computed name, a side stream first leased inside
the decode graph's capture, a prefetch thread that reads the per-forward flags
without the caller's context, and a sticky setter."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import torch

from ctxrt.context import get_buffer, get_exec, get_flags, get_forward, get_stream


def workspace(device: str) -> Any:
    return get_buffer(f"workspace:{device}", lambda: torch.zeros(16, device=device))


def capture_decode(graph: Any, step: Callable[[Any], None]) -> None:
    with torch.cuda.graph(graph):
        step(get_stream("decode_side"))


def _prefetch() -> None:
    if get_forward().enable_multi_stream:
        workspace("cpu")
    if get_forward().is_extend_in_batch:
        workspace("cpu")


def start_prefetch() -> threading.Thread:
    thread = threading.Thread(target=_prefetch, daemon=True)
    thread.start()
    return thread


def mark_extend(extend: bool) -> None:
    get_forward().set("is_extend_in_batch", extend)


def init_graph_capture() -> None:
    """Sizes the decode graphs once, before the runner captures them."""
    capture = get_flags().capture
    capture.capture_batch_size = get_exec().graph.cuda_graph_max_bs
    capture.graphs_captured = 0


def recapture_after_reload() -> None:
    """A weight reload captures the decode graphs again, sized the same way."""
    get_flags().capture.capture_batch_size = get_exec().graph.cuda_graph_max_bs
