"""The HTTP server: FastAPI on uvicorn, as SGLang's own. It runs in the launcher's
process, over the ``Engine`` built there.

- ``POST /generate`` ``{"text", "sampling_params": {"max_new_tokens"}, "stream"}``:
  with ``stream`` true, server-sent events, one ``data: {json}`` per batch step
  carrying the whole text so far, then ``data: [DONE]``; else the final JSON.
- ``GET /server_info``, ``GET /model_info``: the readbacks; ``Engine.get_server_info``
  and ``Engine.get_model_info`` are their in-process siblings (ctxlint's CTX502
  checks that each pair reports the same keys).
- ``POST /configure_logging`` ``{"log_level"}``: a post-startup config change,
  recorded in every process.
- ``GET /health``."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import socket
import threading
import time
from collections.abc import AsyncIterator
from typing import Any

import uvicorn
from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, Field

from ctxrt.context import get_context, get_observability, get_server_args
from examples.serving_app.control_plane import effective_value
from examples.serving_app.engine import Engine

logger = logging.getLogger(__name__)

GRACEFUL_SHUTDOWN_S = 1.0  # for the aborted streams' last chunks to go out

router = APIRouter()


class SamplingParams(BaseModel):
    max_new_tokens: int | None = Field(default=None, ge=1)


class GenerateReqInput(BaseModel):
    text: str
    sampling_params: SamplingParams = SamplingParams()
    stream: bool = False


class ConfigureLoggingReq(BaseModel):
    log_level: str


def _engine(request: Request) -> Engine:
    return request.app.state.engine


@router.get("/health")
async def health() -> Response:
    return Response(status_code=200)


@router.post("/generate")
async def generate(obj: GenerateReqInput, request: Request) -> Response:
    try:
        chunks = _engine(request).generate(obj.text, obj.sampling_params.max_new_tokens)
    except (ValueError, RuntimeError) as exc:
        return JSONResponse({"error": {"message": str(exc)}}, status_code=400)
    if obj.stream:
        return StreamingResponse(_sse(chunks), media_type="text/event-stream")
    last = None
    async for chunk in chunks:
        last = chunk
    assert last is not None
    return JSONResponse(last.to_json())


async def _sse(chunks: AsyncIterator[Any]) -> AsyncIterator[bytes]:
    async for chunk in chunks:
        yield b"data: " + json.dumps(chunk.to_json()).encode() + b"\n\n"
    yield b"data: [DONE]\n\n"


@router.get("/server_info")
async def server_info() -> dict[str, Any]:
    """What resolution decided, what changed since in this process, and the value of
    every changed leaf as it is in force here (``role`` says where)."""
    overrides = [dataclasses.asdict(e) for e in get_context().overrides_log()]
    return {
        "role": get_context().role,
        "resolved_config": get_server_args().resolved_dict(),
        "overrides": overrides,
        "effective_overridden": {e["field"]: effective_value(e["field"]) for e in overrides},
    }


@router.get("/model_info")
async def model_info() -> dict[str, Any]:
    return {
        name: get_context().config_leaf(name)
        for name in ("model_path", "served_model_name", "context_length", "dtype")
    }


@router.post("/configure_logging")
async def configure_logging(obj: ConfigureLoggingReq, request: Request) -> Response:
    if obj.log_level.upper() not in logging.getLevelNamesMapping():
        return JSONResponse({"error": {"message": f"no log level {obj.log_level!r}"}}, 400)
    _engine(request).tokenizer_manager.record_config_updates(
        "http:/configure_logging", log_level=obj.log_level.lower()
    )
    return Response(status_code=200)


def build_app(engine: Engine) -> FastAPI:
    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        # uvicorn's shutdown (SIGTERM, SIGINT): the server processes go with it.
        codes = engine.shutdown()
        print(f"[launcher] shutdown: exit codes {codes}", flush=True)

    app = FastAPI(lifespan=lifespan)
    app.state.engine = engine
    app.include_router(router)
    return app


def _listen(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    return sock


class _Server(uvicorn.Server):
    """uvicorn, ending the open streams first when it shuts down: each gets a last
    chunk with ``finish_reason`` ``abort`` and ``[DONE]``, so its connection closes
    within the graceful window instead of being cut when the window runs out."""

    def __init__(self, config: uvicorn.Config, engine: Engine) -> None:
        super().__init__(config)
        self.engine = engine

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        self.engine.tokenizer_manager.close()
        await super().shutdown(sockets)


def _uvicorn(engine: Engine, host: str, port: int) -> uvicorn.Server:
    config = uvicorn.Config(
        build_app(engine),
        host=host,
        port=port,
        log_level=get_observability().log_level,
        access_log=False,
        timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S,
    )
    return _Server(config, engine)


def serve(engine: Engine, host: str, port: int) -> None:
    """Listen on ``host:port`` (bound here, so the line printed is true when it
    prints), then serve until SIGTERM or SIGINT: uvicorn's handlers, after which the
    lifespan above stops the engine."""
    sock = _listen(host, port)
    print(f"[launcher] listening on http://{host}:{port}", flush=True)
    _uvicorn(engine, host, port).run(sockets=[sock])


class BackgroundServer:
    """The same HTTP server on a thread of this process, for a program (or a test)
    that holds the ``Engine`` itself. ``stop()`` shuts it down, engine included."""

    def __init__(self, engine: Engine, host: str, port: int) -> None:
        self.url = f"http://{host}:{port}"
        sock = _listen(host, port)
        self._server = _uvicorn(engine, host, port)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, name="http", daemon=True
        )
        self._thread.start()
        while not self._server.started and self._thread.is_alive():
            time.sleep(0.01)

    def stop(self, timeout_s: float = 10.0) -> None:
        self._server.should_exit = True
        self._thread.join(timeout_s)
