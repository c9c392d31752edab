"""The tokenizer process: tokenizes requests, owns the post-startup control plane
(``record_config_updates``) and the readback's surfaces (``readback``)."""

from __future__ import annotations

from multiprocessing.queues import Queue
from typing import Any

from ctxrt.context import (
    assert_published,
    get_model,
    get_schedule,
    get_serving,
    publish,
)
from ctxrt.record import ServerArgs
from examples.serving_app import byte_tokenizer
from examples.serving_app.control_plane import apply_config_update
from examples.serving_app.logs import configure_logging
from examples.serving_app.messages import (
    ConfigUpdateRequest,
    GenerateRequest,
    ServerInfo,
    ServerInfoRequest,
    Shutdown,
    TokenizedRequest,
)
from examples.serving_app.readback import answer, server_info

__all__ = ["TokenizerManager", "run_tokenizer_process", "server_info"]


class TokenizerManager:
    def __init__(self, server_args: ServerArgs) -> None:
        assert_published(server_args, role="tokenizer")

    def tokenize(self, req: GenerateRequest) -> TokenizedRequest:
        max_new = req.max_new_tokens or get_schedule().max_new_tokens_default
        ids = byte_tokenizer.encode(req.text)
        if get_serving().skip_tokenizer_init:
            ids = [int(x) for x in req.text.split()]
        budget = get_model().context_length - max_new
        if budget < 1:
            raise ValueError(f"max_new_tokens {max_new} leaves no room in the context")
        return TokenizedRequest(req.rid, ids[-budget:], max_new)

    def record_config_updates(self, source: str, **fields: Any) -> None:
        """The named control-plane wrapper over ``get_context().override``: applied
        here; the caller forwards the update to the processes downstream."""
        apply_config_update(source, fields)


def run_tokenizer_process(
    server_args: ServerArgs, inbox: Queue[Any], to_scheduler: Queue[Any], to_client: Queue[Any]
) -> None:
    publish(server_args, role="tokenizer")
    configure_logging("tokenizer")
    manager = TokenizerManager(server_args)
    while True:
        msg = inbox.get()
        if isinstance(msg, Shutdown):
            to_scheduler.put(msg)
            return
        if isinstance(msg, ConfigUpdateRequest):
            manager.record_config_updates(msg.source, **msg.fields)
            to_scheduler.put(msg)  # bags do not cross processes: each applies it
        elif isinstance(msg, ServerInfoRequest):
            to_client.put(ServerInfo(answer(msg)))
        else:
            to_scheduler.put(manager.tokenize(msg))
