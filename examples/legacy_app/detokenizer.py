"""The detokenizer process: token ids back to text."""

from __future__ import annotations

from multiprocessing.queues import Queue
from typing import Any

from ctxrt.context import get_observability, get_server_args, get_serving, publish
from ctxrt.record import ServerArgs
from examples.legacy_app.output_limits import at_token_limit, clip_to_window


def detokenize(output_ids: list[int], *, as_ids: bool) -> str:
    output_ids = clip_to_window(output_ids)
    if as_ids:
        return " ".join(map(str, output_ids))
    return bytes(i for i in output_ids if i < 256).decode("utf-8", "replace")


def run_detokenizer_process(server_args: ServerArgs, inbox: Queue[Any], outbox: Queue[Any]) -> None:
    # Read before this process has published: a spawned child starts empty.
    as_ids = get_serving().skip_tokenizer_init
    publish(server_args, role="detokenizer")
    seed = get_server_args()
    verbose = seed.log_level == "debug" or get_observability().enable_metrics
    while True:
        msg = inbox.get()
        if msg is None:
            outbox.put(None)
            return
        rid, output_ids = msg
        if verbose and at_token_limit(output_ids):
            print(f"[detokenizer] rid={rid} hit the default token limit", flush=True)
        if verbose:
            print(f"[detokenizer] rid={rid} tokens={len(output_ids)}", flush=True)
        outbox.put((rid, detokenize(output_ids, as_ids=as_ids)))
