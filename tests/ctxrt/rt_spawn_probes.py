"""Process entries for the spawn tests (importable by name in a spawned child).

Each takes the record the parent built, so the child never re-resolves (and never
imports torch): the declarations travel inside the pickled record."""

from __future__ import annotations

from multiprocessing.queues import Queue
from typing import Any

from ctxrt import context
from ctxrt.record import ServerArgs


def read_namespaces(
    server_args: ServerArgs, steps: list[tuple[str, list[str]]], results: Queue[Any]
) -> None:
    """For each (role, namespaces) step: publish under the role, then read each
    namespace's bag; report ('ok', role, ns) or (error type, role, ns) per read."""
    for role, namespaces in steps:
        context.publish(server_args, role=role)
        for ns in namespaces:
            try:
                getattr(context, f"get_{ns}")()
            except Exception as exc:
                results.put((type(exc).__name__, role, ns))
            else:
                results.put(("ok", role, ns))
    results.put(("done", "", ""))


def report_overridden_leaf(server_args: ServerArgs, results: Queue[Any]) -> None:
    """Publish the record handed over and report what this process sees."""
    context.publish(server_args, role="scheduler")
    results.put(
        (
            context.get_schedule().max_running_requests,
            len(context.get_context().overrides_log()),
        )
    )
