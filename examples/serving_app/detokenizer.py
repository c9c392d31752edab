"""The detokenizer process: token ids back to text. Its role reads only the
``serving`` and ``observability`` namespaces (see ROLE_NAMESPACE_SETS)."""

from __future__ import annotations

from multiprocessing.queues import Queue
from typing import Any

from ctxrt.context import get_serving, publish
from ctxrt.record import ServerArgs
from examples.serving_app import byte_tokenizer
from examples.serving_app.control_plane import apply_config_update
from examples.serving_app.logs import configure_logging
from examples.serving_app.messages import ConfigUpdateRequest, Response, Shutdown, TokenOutput


def detokenize(out: TokenOutput) -> Response:
    if get_serving().skip_tokenizer_init:
        text = " ".join(map(str, out.output_ids))
    else:
        text = byte_tokenizer.decode(out.output_ids)
    return Response(
        out.rid, text, len(out.output_ids), out.accepted_draft_tokens, out.proposed_draft_tokens
    )


def run_detokenizer_process(server_args: ServerArgs, inbox: Queue[Any], outbox: Queue[Any]) -> None:
    publish(server_args, role="detokenizer")
    configure_logging("detokenizer")
    while True:
        msg = inbox.get()
        if isinstance(msg, Shutdown):
            return
        if isinstance(msg, ConfigUpdateRequest):
            apply_config_update(msg.source, msg.fields)
            continue
        outbox.put(detokenize(msg))
