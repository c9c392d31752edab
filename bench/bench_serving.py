"""Continuous batching in the example server, measured over HTTP.

Run: ``python bench/bench_serving.py``. Starts ``examples/serving_app`` twice on
loopback ports, identical but for ``--max-running-requests``: the batch's limit
(``--clients``), and 1 (one request at a time); each scheduler runs torch on one
thread. Each server gets an untimed warm-up round, then ``--rounds`` timed rounds
in which ``--clients`` concurrent clients stream ``--requests`` ``/generate``
requests; the two servers' rounds alternate, so a load that drifts on a shared
machine weighs on both. The batching ratio is the median requests per second of
the first over the second's; the target (issue 38) is above 4x. Also reported:
each round's ratio, the same ratio over the CPU time the server's processes
spent (on a busy shared machine, wall time also counts the waits for a core),
the clients' own CPU, the speculative draft's acceptance, the largest batch the
scheduler ran and the load average. Exits non-zero when the target fails or a
request is lost. Not a pytest test: timings on a shared machine are not pins."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import statistics
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


@dataclasses.dataclass
class Arm:
    """One server and what its timed rounds measured."""

    mode: str
    max_running: int
    server: Server
    rounds: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    exit: int | None = None

    def measure(self, args: argparse.Namespace) -> None:
        """One timed round: ``args.requests`` requests from ``args.clients`` clients."""
        pids = [self.server.proc.pid, *self.server.children()]
        cpu_before, http_before = _cpu_seconds(pids), _cpu_seconds(pids[:1])
        client_before = time.process_time()
        started = time.perf_counter()
        finals = asyncio.run(
            _run_clients(self.server.url, args.clients, args.requests, args.max_new_tokens)
        )
        elapsed = time.perf_counter() - started
        metas = [f["meta_info"] for f in finals]
        complete = [m for m in metas if m["finish_reason"] == {"type": "length"}]
        self.rounds.append(
            {
                "requests": len(finals),
                "complete": len(complete) == args.requests
                and all(m["completion_tokens"] == args.max_new_tokens for m in complete),
                "seconds": elapsed,
                "rps": len(finals) / elapsed,
                "cpu": _cpu_seconds(pids) - cpu_before,
                "http_cpu": _cpu_seconds(pids[:1]) - http_before,
                "client_cpu": time.process_time() - client_before,
                "accepted": sum(m["spec_accepted_draft_tokens"] for m in metas),
                "proposed": sum(m["spec_proposed_draft_tokens"] for m in metas),
                "load": os.getloadavg()[0],
            }
        )

    def summary(self) -> dict[str, Any]:
        """The median round by wall rate; CPU and acceptance summed over the rounds."""
        by_rate = sorted(self.rounds, key=lambda r: r["rps"])
        requests = sum(r["requests"] for r in self.rounds)
        cpu = sum(r["cpu"] for r in self.rounds)
        largest = [x for x in self.server.stdout().splitlines() if "largest batch" in x]
        return {
            "rps": statistics.median(r["rps"] for r in self.rounds),
            "median": by_rate[len(by_rate) // 2],
            "rps_cpu": requests / cpu,
            "cpu_per_round": cpu / len(self.rounds),
            "http_cpu_per_round": sum(r["http_cpu"] for r in self.rounds) / len(self.rounds),
            "client_cpu_per_round": sum(r["client_cpu"] for r in self.rounds) / len(self.rounds),
            "accepted": sum(r["accepted"] for r in self.rounds),
            "proposed": sum(r["proposed"] for r in self.rounds),
            "complete": all(r["complete"] for r in self.rounds) and self.exit == 0,
            "scheduler": largest[0].removeprefix("[scheduler] ") if largest else "?",
        }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--requests", type=int, default=64, help="per timed round")
    p.add_argument("--rounds", type=int, default=3, help="timed rounds per server, interleaved")
    p.add_argument("--max-new-tokens", type=int, default=32)
    args = p.parse_args(argv)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench_serving_") as tmp:
        arms = []
        try:
            for mode, max_running in (("batched", args.clients), ("one at a time", 1)):
                run_dir = Path(tmp) / mode.replace(" ", "_")
                run_dir.mkdir()
                server = Server(["--max-running-requests", str(max_running)], run_dir)
                arms.append(Arm(mode, max_running, server))
                server.wait_ready()
                # untimed warm-up round
                asyncio.run(
                    _run_clients(server.url, args.clients, args.clients, args.max_new_tokens)
                )
            for _ in range(args.rounds):  # interleaved: a drifting load hits both arms
                for arm in arms:
                    arm.measure(args)
        finally:
            for arm in arms:
                arm.exit = arm.server.terminate()
        rows = [(arm, arm.summary()) for arm in arms]  # reads the servers' logs
    print(
        f"{args.clients} concurrent clients, {args.rounds} timed rounds per server of "
        f"{args.requests} streaming /generate requests of {args.max_new_tokens} tokens each "
        f"(after a warm-up round of {args.clients}); the two servers' rounds interleaved; "
        f"torch threads 1 in each scheduler; load average {load_before:.2f} before"
    )
    for arm, r in rows:
        share = r["accepted"] / max(r["proposed"], 1)
        rates = ", ".join(f"{x['rps']:.1f}" for x in arm.rounds)
        loads = ", ".join(f"{x['load']:.2f}" for x in arm.rounds)
        print(
            f"  {arm.mode:>13} (--max-running-requests {arm.max_running:>2}): "
            f"{r['rps']:6.2f} req/s wall (median of {rates}), "
            f"{r['rps_cpu']:6.2f} req per server CPU second ({r['cpu_per_round']:.2f} s a round, "
            f"{r['http_cpu_per_round']:.2f} s of it in the HTTP process; the clients "
            f"{r['client_cpu_per_round']:.2f} s); {r['scheduler']}; draft accepted "
            f"{r['accepted']}/{r['proposed']} ({share:.0%}); exit {arm.exit}; load average "
            f"after each round {loads}"
        )
    ratios = [b["rps"] / o["rps"] for b, o in zip(arms[0].rounds, arms[1].rounds, strict=True)]
    ratio = rows[0][1]["rps"] / rows[1][1]["rps"]
    ratio_cpu = rows[0][1]["rps_cpu"] / rows[1][1]["rps_cpu"]
    complete = all(r["complete"] for _, r in rows)
    ok = ratio > TARGET_RATIO and complete
    print(
        f"batching ratio {ratio:.2f}x (target > {TARGET_RATIO}x): {'met' if ok else 'FAILED'}; "
        f"round by round {', '.join(f'{x:.2f}x' for x in ratios)}"
    )
    print(
        f"per server CPU second: {ratio_cpu:.2f}x (what the ratio would be with a core per "
        f"process; the wall figure counts waits on a shared machine)"
    )
    if not complete:
        print("a request was lost or cut short, or a server did not exit 0")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
