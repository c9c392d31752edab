"""CTX301 (bag read before publish), on the reference runtime: a spawned worker
starts with an empty context, so a bag read above its entry's ``publish`` raises
there, and only there; the same read after the publish answers."""

from __future__ import annotations

import multiprocessing as mp
from multiprocessing.queues import Queue
from typing import Any

from ctxrt.context import get_schedule, publish
from ctxrt.record import ServerArgs


def worker_entry(server_args: ServerArgs, results: Queue[Any]) -> None:
    """A process entry with the read above the publish (the bug), then below it."""
    try:
        results.put(("before publish", "ok", get_schedule().max_running_requests))
    except Exception as exc:
        results.put(("before publish", type(exc).__name__, str(exc)))
    publish(server_args, role="scheduler")
    results.put(("after publish", "ok", get_schedule().max_running_requests))


def test_a_bag_read_before_publish_raises_in_a_spawned_worker() -> None:
    server_args = ServerArgs(model_path="dummy", max_running_requests=3)
    publish(server_args, role="tokenizer")  # the parent has published ...
    assert get_schedule().max_running_requests == 3

    spawn = mp.get_context("spawn")
    results = spawn.Queue()
    proc = spawn.Process(target=worker_entry, args=(server_args, results))
    proc.start()
    before, after = results.get(timeout=60), results.get(timeout=60)
    proc.join(30)

    assert proc.exitcode == 0
    # ... but the child's context is empty until its own entry publishes.
    assert before[:2] == ("before publish", "ConfigNotPublishedError")
    assert "'schedule' not published" in before[2]
    assert after == ("after publish", "ok", 3)
