"""Stopping the example server: SIGTERM while streams are in flight ends each of
them cleanly and every process within the deadline; a launcher killed outright
leaves no orphans (the server processes watch it and leave on their own)."""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from examples.serving_app.client import Server, alive

DEADLINE_S = 5.0


def _wait_gone(pids: list[int], started: float, limit_s: float = 15.0) -> float:
    while any(alive(pid) for pid in pids) and time.monotonic() - started < limit_s:
        time.sleep(0.05)
    return time.monotonic() - started


async def _streams_then_sigterm(server: Server, n: int) -> tuple[list[Any], float]:
    """``n`` long streams; SIGTERM once every one has its first chunk."""
    first_chunks = asyncio.Semaphore(0)

    async def one(client: httpx.AsyncClient) -> Any:
        body = {"text": "long", "sampling_params": {"max_new_tokens": 120}, "stream": True}
        chunks = []
        async with client.stream("POST", f"{server.url}/generate", json=body) as response:
            async for line in response.aiter_lines():
                if line.startswith("data: {"):
                    chunks.append(line)
                    if len(chunks) == 1:
                        first_chunks.release()
                elif line == "data: [DONE]":
                    return chunks[-1]
        return "cut"

    async with httpx.AsyncClient(timeout=30.0) as client:
        tasks = [asyncio.create_task(one(client)) for _ in range(n)]
        for _ in range(n):
            await first_chunks.acquire()
        sent = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        results = await asyncio.gather(*tasks, return_exceptions=True)
    return results, sent


def test_sigterm_ends_open_streams_and_every_process_in_time(tmp_path: Path) -> None:
    # Eager, and one token a step: the streams are still running when SIGTERM lands.
    server = Server(["--no-torch-compile", "--speculative-algorithm", "none"], tmp_path)
    server.wait_ready()
    children = server.children()
    assert len(children) >= 2
    try:
        results, sent = asyncio.run(_streams_then_sigterm(server, 4))
        code = server.proc.wait(DEADLINE_S * 2)
    finally:
        if server.proc.poll() is None:
            server.proc.kill()
    gone = _wait_gone(children, sent)
    assert code == 0, server.stderr()
    assert gone < DEADLINE_S, gone
    assert not [pid for pid in children if alive(pid)]
    # Each open stream got a last chunk and [DONE]: aborted (or just finished), not cut.
    assert all(isinstance(r, str) and r != "cut" for r in results), results
    assert any('"finish_reason": {"type": "abort"}' in r for r in results), results
    assert "[launcher] shutdown: exit codes {'scheduler': 0, 'detokenizer': 0}" in server.stdout()


@pytest.mark.slow
def test_a_killed_launcher_leaves_no_orphans(tmp_path: Path) -> None:
    server = Server(["--no-torch-compile"], tmp_path)
    server.wait_ready()
    children = server.children()
    assert len(children) >= 2
    started = time.monotonic()
    server.proc.kill()  # SIGKILL: no handler, no cleanup in the launcher
    server.proc.wait()
    gone = _wait_gone(children, started)
    assert not [pid for pid in children if alive(pid)]
    assert gone < DEADLINE_S, gone
