"""The detokenizer process: token ids back to text, one batch step at a time. Its
role reads only the ``serving`` and ``observability`` namespaces (see
ROLE_NAMESPACE_SETS)."""

from __future__ import annotations

import queue
from multiprocessing.queues import Queue
from typing import Any

from ctxrt.context import get_serving, publish
from ctxrt.record import ServerArgs
from examples.serving_app import byte_tokenizer
from examples.serving_app.control_plane import apply_config_update
from examples.serving_app.lifecycle import (
    PARENT_POLL_S,
    exit_now,
    ignore_interrupts,
    launcher_alive,
)
from examples.serving_app.logs import configure_logging
from examples.serving_app.messages import BatchStrOut, BatchTokenOut, ConfigUpdateRequest, Shutdown


def detokenize(out: BatchTokenOut, decoded: dict[str, list[int]]) -> BatchStrOut:
    """One batch step to text. ``decoded`` keeps each unfinished request's ids, so
    every step answers with the request's whole text so far."""
    texts, counts = [], []
    for rid, new, finished in zip(out.rids, out.new_ids, out.finished, strict=True):
        ids = decoded.setdefault(rid, [])
        ids += new
        if get_serving().skip_tokenizer_init:
            texts.append(" ".join(map(str, ids)))
        else:
            texts.append(byte_tokenizer.decode(ids))
        counts.append(len(ids))
        if finished:
            del decoded[rid]
    return BatchStrOut(
        out.rids, texts, counts, out.finished, out.accepted_draft_tokens, out.proposed_draft_tokens
    )


def run_detokenizer_process(server_args: ServerArgs, inbox: Queue[Any], outbox: Queue[Any]) -> None:
    publish(server_args, role="detokenizer")
    ignore_interrupts()
    configure_logging("detokenizer")
    decoded: dict[str, list[int]] = {}
    while True:
        try:
            msg = inbox.get(timeout=PARENT_POLL_S)
        except queue.Empty:
            if not launcher_alive():
                break  # the launcher died: nobody is left to answer
            continue
        if isinstance(msg, Shutdown):
            outbox.put(msg)  # ends the tokenizer manager's receiving thread
            break
        if isinstance(msg, ConfigUpdateRequest):
            apply_config_update(msg.source, msg.fields)
            continue
        outbox.put(detokenize(msg, decoded))
    exit_now(0, outbox)  # an orderly stop: nothing is left to tear down
