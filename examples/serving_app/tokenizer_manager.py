"""The tokenizer manager: lives in the launcher's process (which publishes as
``tokenizer``, as SGLang's HTTP server process does). It tokenizes, hands requests
to the scheduler, routes the detokenizer's batch outputs back to each request's
stream, and owns the post-startup control plane (``record_config_updates``)."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import logging
import threading
from collections.abc import AsyncIterator
from multiprocessing.queues import Queue
from typing import Any

from ctxrt.context import assert_published, get_model, get_schedule, get_serving
from ctxrt.record import ServerArgs
from examples.serving_app import byte_tokenizer
from examples.serving_app.control_plane import apply_config_update
from examples.serving_app.messages import (
    BatchStrOut,
    ConfigUpdateRequest,
    Shutdown,
    TokenizedRequest,
)

logger = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class GenerateChunk:
    """One streamed update of a request: its whole text so far."""

    rid: str
    text: str
    num_tokens: int
    finish_reason: str | None  # "length" when done, "abort" when the server stopped first
    accepted_draft_tokens: int
    proposed_draft_tokens: int

    def to_json(self) -> dict[str, Any]:
        """SGLang's /generate chunk: the text and a ``meta_info``."""
        return {
            "text": self.text,
            "meta_info": {
                "id": self.rid,
                "completion_tokens": self.num_tokens,
                "finish_reason": None
                if self.finish_reason is None
                else {"type": self.finish_reason},
                "spec_accepted_draft_tokens": self.accepted_draft_tokens,
                "spec_proposed_draft_tokens": self.proposed_draft_tokens,
            },
        }


@dataclasses.dataclass
class _Stream:
    loop: asyncio.AbstractEventLoop
    chunks: asyncio.Queue[GenerateChunk]
    last: GenerateChunk


class TokenizerManager:
    def __init__(
        self, server_args: ServerArgs, to_scheduler: Queue[Any], from_detokenizer: Queue[Any]
    ) -> None:
        assert_published(server_args, role="tokenizer")
        self.to_scheduler = to_scheduler
        self._from_detokenizer = from_detokenizer
        self._streams: dict[str, _Stream] = {}
        self._lock = threading.Lock()
        self._closed = False
        self._rids = itertools.count()
        self._receiver = threading.Thread(
            target=_receive, args=(self,), name="detokenizer-receiver", daemon=True
        )
        self._receiver.start()

    def tokenize(self, rid: str, text: str, max_new_tokens: int | None) -> TokenizedRequest:
        max_new = max_new_tokens or get_schedule().max_new_tokens_default
        if get_serving().skip_tokenizer_init:
            ids = [int(x) for x in text.split()]
        else:
            ids = byte_tokenizer.encode(text)
        budget = get_model().context_length - max_new
        if budget < 1:
            raise ValueError(f"max_new_tokens {max_new} leaves no room in the context")
        return TokenizedRequest(rid, ids[-budget:], max_new)

    def generate(self, text: str, max_new_tokens: int | None) -> AsyncIterator[GenerateChunk]:
        """Tokenize and queue the request now (a bad one raises here, before any
        response starts); the returned stream yields its chunks as the batch steps
        produce them, the last one with a ``finish_reason``. Call it on the event
        loop that will read the stream."""
        rid = f"req-{next(self._rids)}"
        req = self.tokenize(rid, text, max_new_tokens)
        stream = _Stream(
            asyncio.get_running_loop(), asyncio.Queue(), GenerateChunk(rid, "", 0, None, 0, 0)
        )
        with self._lock:
            if self._closed:
                raise RuntimeError("the server is shutting down")
            self._streams[rid] = stream
        self.to_scheduler.put(req)
        return self._chunks(rid, stream)

    async def _chunks(self, rid: str, stream: _Stream) -> AsyncIterator[GenerateChunk]:
        try:
            while True:
                chunk = await stream.chunks.get()
                yield chunk
                if chunk.finish_reason is not None:
                    return
        finally:
            with self._lock:
                self._streams.pop(rid, None)

    def record_config_updates(self, source: str, **fields: Any) -> None:
        """The named control-plane wrapper over ``get_context().override``: applied in
        this process, then handed down the pipeline (bags do not cross processes,
        so each process records the change in its own context)."""
        apply_config_update(source, fields)
        self.to_scheduler.put(ConfigUpdateRequest(source, fields))

    def close(self) -> None:
        """End every open stream with ``abort``; refuse new requests."""
        with self._lock:
            self._closed = True
            streams = list(self._streams.values())
        for stream in streams:
            _deliver(stream, dataclasses.replace(stream.last, finish_reason="abort"))

    def _dispatch(self, out: BatchStrOut) -> None:
        with self._lock:
            for i, rid in enumerate(out.rids):
                stream = self._streams.get(rid)
                if stream is None:
                    continue  # its client went away
                stream.last = GenerateChunk(
                    rid,
                    out.texts[i],
                    out.num_tokens[i],
                    "length" if out.finished[i] else None,
                    out.accepted_draft_tokens[i],
                    out.proposed_draft_tokens[i],
                )
                _deliver(stream, stream.last)


def _receive(manager: TokenizerManager) -> None:
    """The receiving thread: one detokenizer batch at a time, each row to its
    request's stream (on the event loop that awaits it)."""
    while True:
        msg = manager._from_detokenizer.get()
        if isinstance(msg, Shutdown):
            manager.close()
            return
        assert isinstance(msg, BatchStrOut), msg
        manager._dispatch(msg)


def _deliver(stream: _Stream, chunk: GenerateChunk) -> None:
    try:
        stream.loop.call_soon_threadsafe(stream.chunks.put_nowait, chunk)
    except RuntimeError:  # that loop has closed: nobody awaits the stream any more
        logger.debug("dropped a chunk of %s: its event loop is closed", chunk.rid)
