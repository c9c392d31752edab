"""Continuous batching in the example server, measured over HTTP.

Run: ``python bench/bench_serving.py``. Starts ``examples/serving_app`` twice on a
loopback port, identical but for ``--max-running-requests``: the batch's limit
(``--clients``), then 1 (one request at a time). Each time, ``--clients``
concurrent clients stream ``--requests`` ``/generate`` requests (after a warm-up
round that is not timed: it pays the first compiles) and the requests per second
are measured. The batching ratio is the first over the second; the target (issue
38) is above 4x. Also reported: the same ratio over the CPU time the server's
processes spent (on a busy shared machine, wall time also counts the waits for a
core), the speculative draft's acceptance, and the largest batch the scheduler
ran. Exits non-zero when the target fails or a request is lost. Not a pytest
test: timings on a shared machine are not pins."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path[:0] = [
    str(Path(__file__).resolve().parents[1]),
    str(Path(__file__).resolve().parents[1] / "src"),
]

from examples.serving_app.client import Server, stream_generate  # noqa: E402

TARGET_RATIO = 4.0
PROMPTS = ("Hello, world", "The runtime context", "Bags are sealed", "Publish first")


async def _run_clients(url: str, clients: int, requests: int, max_new: int) -> list[dict[str, Any]]:
    """``clients`` tasks pull request numbers from one counter until ``requests`` ran;
    the final chunk of every request."""
    numbers = iter(range(requests))
    finals: list[dict[str, Any]] = []
    limits = httpx.Limits(max_connections=clients)
    async with httpx.AsyncClient(timeout=300.0, limits=limits) as client:

        async def worker() -> None:
            for n in numbers:
                chunks = await stream_generate(client, url, PROMPTS[n % len(PROMPTS)], max_new)
                finals.append(chunks[-1])

        await asyncio.gather(*(worker() for _ in range(clients)))
    return finals


def _cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time of ``pids`` so far (Linux /proc); a gone process counts 0."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return total / os.sysconf("SC_CLK_TCK")


def measure(mode: str, max_running: int, args: argparse.Namespace, log_dir: Path) -> dict[str, Any]:
    run_dir = log_dir / mode
    run_dir.mkdir()
    server = Server(["--max-running-requests", str(max_running)], run_dir)
    try:
        server.wait_ready()
        asyncio.run(_run_clients(server.url, args.clients, args.clients, args.max_new_tokens))
        pids = [server.proc.pid, *server.children()]
        cpu_before, http_before = _cpu_seconds(pids), _cpu_seconds(pids[:1])
        client_before = time.process_time()
        started = time.perf_counter()
        finals = asyncio.run(
            _run_clients(server.url, args.clients, args.requests, args.max_new_tokens)
        )
        elapsed = time.perf_counter() - started
        cpu = _cpu_seconds(pids) - cpu_before
        http_cpu = _cpu_seconds(pids[:1]) - http_before
        client_cpu = time.process_time() - client_before
        load = os.getloadavg()[0]
    finally:
        code = server.terminate()
    metas = [f["meta_info"] for f in finals]
    complete = [m for m in metas if m["finish_reason"] == {"type": "length"}]
    largest = [line for line in server.stdout().splitlines() if "largest batch" in line]
    return {
        "mode": mode,
        "max_running_requests": max_running,
        "requests": len(finals),
        "complete": len(complete) == args.requests
        and all(m["completion_tokens"] == args.max_new_tokens for m in complete),
        "seconds": elapsed,
        "rps": len(finals) / elapsed,
        "cpu": cpu,
        "http_cpu": http_cpu,
        "client_cpu": client_cpu,
        "load": load,
        "rps_cpu": len(finals) / cpu,
        "accepted": sum(m["spec_accepted_draft_tokens"] for m in metas),
        "proposed": sum(m["spec_proposed_draft_tokens"] for m in metas),
        "scheduler": largest[0].removeprefix("[scheduler] ") if largest else "?",
        "exit": code,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--requests", type=int, default=64)
    p.add_argument("--max-new-tokens", type=int, default=32)
    args = p.parse_args(argv)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench_serving_") as tmp:
        rows = [
            measure("batched", args.clients, args, Path(tmp)),
            measure("one at a time", 1, args, Path(tmp)),
        ]
    print(
        f"{args.clients} concurrent clients, {args.requests} streaming /generate requests of "
        f"{args.max_new_tokens} tokens each (after a warm-up round of {args.clients}); "
        f"load average {load_before:.2f} before"
    )
    for r in rows:
        share = r["accepted"] / max(r["proposed"], 1)
        print(
            f"  {r['mode']:>13} (--max-running-requests {r['max_running_requests']:>2}): "
            f"{r['rps']:6.2f} req/s wall ({r['requests']} in {r['seconds']:.2f} s), "
            f"{r['rps_cpu']:6.2f} req per server CPU second ({r['cpu']:.2f} s, "
            f"{r['http_cpu']:.2f} s of it in the HTTP process; the clients {r['client_cpu']:.2f} s); "
            f"{r['scheduler']}; draft accepted {r['accepted']}/{r['proposed']} ({share:.0%}); "
            f"exit {r['exit']}; load average {r['load']:.2f} after"
        )
    ratio = rows[0]["rps"] / rows[1]["rps"]
    ratio_cpu = rows[0]["rps_cpu"] / rows[1]["rps_cpu"]
    complete = all(r["complete"] and r["exit"] == 0 for r in rows)
    ok = ratio > TARGET_RATIO and complete
    print(f"batching ratio {ratio:.2f}x (target > {TARGET_RATIO}x): {'met' if ok else 'FAILED'}")
    print(
        f"per server CPU second: {ratio_cpu:.2f}x (what the ratio would be with a core per "
        f"process; the wall figure counts waits on a shared machine)"
    )
    if not complete:
        print("a request was lost or cut short, or a server did not exit 0")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
