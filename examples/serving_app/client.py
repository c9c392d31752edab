"""A client of the example server, for its tests and its benchmark: start the
server as its own process on a free loopback port, wait until it answers, stream
``/generate`` (server-sent events), stop it with SIGTERM."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[2]
LOOPBACK = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


class Server:
    """``python -m examples.serving_app`` on a free loopback port, output to files."""

    def __init__(
        self,
        args: Sequence[str],
        log_dir: Path,
        env: dict[str, str] | None = None,
        root: Path = REPO,
    ) -> None:
        """``root``: the tree to serve from (a copy of this repository will do)."""
        self.port = free_port()
        self.url = f"http://{LOOPBACK}:{self.port}"
        self.stdout_path, self.stderr_path = log_dir / "server.out", log_dir / "server.err"
        env = {**os.environ, **(env or {})}
        paths = [str(root), str(root / "src"), env.get("PYTHONPATH", "")]
        env["PYTHONPATH"] = os.pathsep.join(p for p in paths if p)
        with self.stdout_path.open("w") as out, self.stderr_path.open("w") as err:
            argv = ["--host", LOOPBACK, "--port", str(self.port), *args]
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "examples.serving_app", *argv],
                cwd=root,
                env=env,
                stdout=out,
                stderr=err,
            )

    def wait_ready(self, timeout_s: float = 180.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited with {self.proc.returncode}: {self.stderr()}")
            try:
                if httpx.get(f"{self.url}/health", timeout=1.0).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        raise TimeoutError(f"no /health within {timeout_s}s: {self.stderr()}")

    def children(self) -> list[int]:
        return descendants(self.proc.pid)

    def terminate(self, timeout_s: float = 10.0) -> int:
        """SIGTERM; the exit code (waits at most ``timeout_s``, then kills)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise

    def stdout(self) -> str:
        return self.stdout_path.read_text()

    def stderr(self) -> str:
        return self.stderr_path.read_text()


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (from /proc: Linux only)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue  # gone meanwhile
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, frontier = [], [pid]
    while frontier:
        parent = frontier.pop()
        kids = [p for p, pp in parents.items() if pp == parent]
        found += kids
        frontier += kids
    return sorted(found)


def alive(pid: int) -> bool:
    """Running, not a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def stream_generate(
    client: httpx.AsyncClient, url: str, text: str, max_new_tokens: int
) -> list[dict[str, Any]]:
    """POST a streaming /generate; every chunk, in order (``[DONE]`` checked, not kept)."""
    body = {"text": text, "sampling_params": {"max_new_tokens": max_new_tokens}, "stream": True}
    chunks: list[dict[str, Any]] = []
    done = False
    async with client.stream("POST", f"{url}/generate", json=body) as response:
        response.raise_for_status()
        async for line in response.aiter_lines():
            if not line:
                continue
            if not line.startswith("data: ") or done:
                raise ValueError(f"unexpected event line {line!r}")
            if line == "data: [DONE]":
                done = True
            else:
                chunks.append(json.loads(line[len("data: ") :]))
    if not done:
        raise ValueError("the stream ended without [DONE]")
    return chunks
