"""Calls on a thread with a large stack, for valid code that nests deeper than
the main thread's stack allows.

LibCST builds `a and b and ...` and implicitly concatenated strings as nested
pairs: its native parser segfaults near 20,000 operands on an 8 MiB stack, and
its codegen (positions) and the rules' helpers recurse once per level. So
LibCST's part of a file's work runs here, with 512 MiB of stack and a high
recursion limit. One thread serves a batch of calls (a fresh thread per file
costs about a third more parse time, faulting in new stack pages each time);
it is stopped before the caller can fork a pool.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

STACK_BYTES = 512 * 2**20
RECURSION_LIMIT = 100_000


class _Runner:
    def __init__(self) -> None:
        self.owner = os.getpid()
        self.jobs: queue.SimpleQueue[tuple[Callable[..., Any], tuple[Any, ...]] | None] = (
            queue.SimpleQueue()
        )
        self.results: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
        old = threading.stack_size(STACK_BYTES)
        try:
            self.thread = threading.Thread(target=self._serve, name="ctxlint-deep", daemon=True)
            self.thread.start()  # RuntimeError where 512 MiB cannot be had
        finally:
            threading.stack_size(old)

    def _serve(self) -> None:
        while (job := self.jobs.get()) is not None:
            fn, args = job
            try:
                self.results.put((True, fn(*args)))
            except BaseException as exc:  # re-raised in the caller's thread
                self.results.put((False, exc))

    def call(self, fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, RECURSION_LIMIT))
        try:
            self.jobs.put((fn, args))
            ok, value = self.results.get()
        finally:
            sys.setrecursionlimit(limit)
        if not ok:
            raise value
        return value

    def close(self) -> None:
        self.jobs.put(None)
        self.thread.join()


_current: _Runner | None = None


def _start() -> _Runner | None:
    try:
        return _Runner()
    except RuntimeError:  # no room for the stack (strict overcommit, ulimit -v)
        return None


def start() -> None:
    """A runner for the rest of this process's life (a pool worker's)."""
    global _current
    _current = _start()


@contextmanager
def running() -> Iterator[None]:
    """A runner for the calls made inside the block, stopped at its end."""
    global _current
    previous, _current = _current, _start()
    try:
        yield
    finally:
        if _current is not None:
            _current.close()
        _current = previous


def call(fn: Callable[..., Any], *args: Any) -> Any:
    """fn(*args) on the deep thread (this process's runner, else a runner for
    this call alone), or on this thread where no such thread can start."""
    runner = _current
    if runner is not None and runner.owner == os.getpid():
        return runner.call(fn, args)
    runner = _start()
    if runner is None:
        return fn(*args)
    try:
        return runner.call(fn, args)
    finally:
        runner.close()
