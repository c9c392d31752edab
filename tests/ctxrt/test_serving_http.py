"""The example server over HTTP, with the ``Engine`` in this process (its
scheduler and detokenizer are real spawned processes): ``/generate`` streams,
and each HTTP readback agrees with its in-process sibling. The load test (64
concurrent streams) is in the slow suite."""

from __future__ import annotations

import asyncio
import itertools
import json
import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from rt_fixtures import fresh_context  # noqa: F401 - autouse: empty context per test

from ctxrt.context import publish
from examples.serving_app.client import LOOPBACK, free_port, stream_generate
from examples.serving_app.engine import Engine
from examples.serving_app.http_server import BackgroundServer
from examples.serving_app.launcher import build_server_args, parse_args


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def _start(argv: list[str]) -> tuple[Engine, BackgroundServer]:
    server_args = build_server_args(parse_args(["--port", str(free_port()), *argv]))
    publish(server_args, role="tokenizer")  # what the launcher's entry does
    engine = Engine(server_args)
    return engine, BackgroundServer(engine, LOOPBACK, server_args.port)


@pytest.fixture
def served() -> Iterator[tuple[Engine, BackgroundServer]]:
    engine, http = _start(["--no-torch-compile"])  # eager: no compile to wait for
    try:
        yield engine, http
    finally:
        http.stop()
        engine.shutdown()


def test_generate_streams_and_the_readbacks_agree(
    served: tuple[Engine, BackgroundServer],
) -> None:
    """One server start: stream a /generate, read both readbacks, refuse a bad one."""
    engine, http = served
    chunks = asyncio.run(_stream_one(http.url, "Hello, world", 12))
    texts = [c["text"] for c in chunks]
    assert len(chunks) >= 2  # streamed, one chunk per batch step
    assert all(b.startswith(a) and len(b) > len(a) for a, b in itertools.pairwise(texts))
    final = chunks[-1]["meta_info"]
    assert final["finish_reason"] == {"type": "length"} and final["completion_tokens"] == 12
    assert all(c["meta_info"]["finish_reason"] is None for c in chunks[:-1])
    assert len(texts[-1]) == 12 and texts[-1].isprintable()
    assert 0 <= final["spec_accepted_draft_tokens"] <= final["spec_proposed_draft_tokens"]

    info = httpx.get(f"{http.url}/server_info").json()
    assert info == _json(engine.get_server_info())
    assert info["role"] == "tokenizer"
    assert info["resolved_config"]["speculative_algorithm"] == "layer_skip"
    assert info["resolved_config"]["speculative_draft_model_path"] == "tiny-lm"  # the target
    model = httpx.get(f"{http.url}/model_info").json()
    assert model == _json(engine.get_model_info())
    assert model["model_path"] == model["served_model_name"] == "tiny-lm"

    # A request that cannot be served is refused before any stream starts.
    body = {"text": "x", "sampling_params": {"max_new_tokens": 500}, "stream": True}
    response = httpx.post(f"{http.url}/generate", json=body)
    assert response.status_code == 400
    assert "leaves no room in the context" in response.json()["error"]["message"]


async def _stream_one(url: str, text: str, max_new_tokens: int) -> list[dict[str, Any]]:
    async with httpx.AsyncClient(timeout=60.0) as client:
        return await stream_generate(client, url, text, max_new_tokens)


PROMPTS = ("Hello, world", "The runtime context", "Bags are sealed", "Publish first")


@pytest.mark.slow
def test_64_concurrent_streams_none_lost_and_the_readbacks_agree(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """Over loopback: every stream finishes with all its tokens, a prompt gets the
    same text in whatever batch it ran (greedy, so batching must not change a
    token), the scheduler really batched, and every readback taken under load
    agrees with the Engine's."""
    engine, http = _start([])  # the default: compiled forward, layer_skip drafts
    try:
        streams, readbacks = asyncio.run(asyncio.wait_for(_load(http.url, 64, 24), 300))
        expected = {
            "/server_info": engine.get_server_info(),
            "/model_info": engine.get_model_info(),
        }
    finally:
        http.stop()
        codes = engine.shutdown()
    assert codes == {"scheduler": 0, "detokenizer": 0}
    assert len(streams) == 64
    assert len({s[-1]["meta_info"]["id"] for s in streams}) == 64
    by_prompt: dict[str, set[str]] = {}
    for n, chunks in enumerate(streams):
        meta = chunks[-1]["meta_info"]
        assert meta["finish_reason"] == {"type": "length"} and meta["completion_tokens"] == 24
        by_prompt.setdefault(PROMPTS[n % len(PROMPTS)], set()).add(chunks[-1]["text"])
    assert all(len(texts) == 1 for texts in by_prompt.values()), by_prompt
    accepted = sum(s[-1]["meta_info"]["spec_accepted_draft_tokens"] for s in streams)
    proposed = sum(s[-1]["meta_info"]["spec_proposed_draft_tokens"] for s in streams)
    assert 0.2 < accepted / proposed <= 1  # the shared-weights draft earns its keep
    for path, answers in readbacks.items():
        assert answers and all(a == _json(expected[path]) for a in answers), path
    out = capfd.readouterr().out
    largest = int(re.search(r"largest batch (\d+)", out).group(1))  # type: ignore[union-attr]
    assert largest == engine.max_running_requests  # a full batch ran at least once


async def _load(
    url: str, requests: int, max_new_tokens: int
) -> tuple[list[list[dict[str, Any]]], dict[str, list[Any]]]:
    limits = httpx.Limits(max_connections=requests + 4)
    async with httpx.AsyncClient(timeout=120.0, limits=limits) as client:
        streams = [
            stream_generate(client, url, PROMPTS[n % len(PROMPTS)], max_new_tokens)
            for n in range(requests)
        ]
        paths = ["/server_info", "/model_info"] * 4
        reads = [client.get(f"{url}{path}") for path in paths]
        results = await asyncio.gather(*streams, *reads)
    readbacks: dict[str, list[Any]] = {}
    for path, response in zip(paths, results[requests:], strict=True):
        readbacks.setdefault(path, []).append(response.json())
    return results[:requests], readbacks
