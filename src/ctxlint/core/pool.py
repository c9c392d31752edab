"""A process pool for per-file work that outlives a worker's death and dies
with its parent.

A worker killed mid-file (a native crash in a parser, the OOM killer) breaks a
ProcessPoolExecutor and every result still pending. Each worker marks the
items it starts in shared memory, so after a break the items started and not
delivered are the suspects: each is rerun alone in a fresh process, which
either delivers or names the file that kills it, and the pool restarts on the
rest. Workers also ask Linux to kill them when the parent dies
(PR_SET_PDEATHSIG), so a killed or timed-out run leaves none behind.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import sys
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.sharedctypes import RawArray
from typing import Any

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>

# Set in each worker by _start_worker.
_STATE: dict[str, Any] = {}


def die_with_parent(parent: int) -> None:
    """Have the kernel SIGKILL this process when its parent dies; exit now if
    the parent already has (it may die between the fork and the prctl). A
    Ctrl-C reaches the whole process group: the parent answers it and stops
    the workers, so a worker ignores it (no traceback per worker)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(1)


STARTED, FINISHED = 1, 2  # an item's state in the shared array (0: not started)
STOP = "stop"  # what `idle()` returns when the results are no longer wanted
CHUNK = 4  # items a worker takes at a time


def _start_worker(
    parent: int,
    states: Any,
    fn: Callable[[Any], Any],
    initializer: Callable[..., None],
    initargs: tuple[Any, ...],
) -> None:
    die_with_parent(parent)
    _STATE["states"], _STATE["fn"] = states, fn
    initializer(*initargs)


def _tracked(jobs: list[tuple[int, Any]]) -> list[tuple[int, Any]]:
    states, fn = _STATE["states"], _STATE["fn"]
    out = []
    for index, item in jobs:
        states[index] = STARTED
        out.append((index, fn(item)))
        states[index] = FINISHED
    return out


def _alone(
    conn: Any,
    parent: int,
    fn: Callable[[Any], Any],
    item: Any,
    initializer: Callable[..., None],
    initargs: tuple[Any, ...],
) -> None:
    die_with_parent(parent)
    initializer(*initargs)
    conn.send((fn(item),))  # a 1-tuple: any result, None included, is a delivery
    conn.close()


def _signal_name(exitcode: int | None) -> str:
    if exitcode is not None and exitcode < 0:
        try:
            return signal.Signals(-exitcode).name
        except ValueError:
            return f"signal {-exitcode}"
    return f"exit status {exitcode}"


def _context() -> Any:
    return multiprocessing.get_context("fork" if os.name == "posix" else "spawn")


def _run_alone(
    fn: Callable[[Any], Any],
    item: Any,
    initializer: Callable[..., None],
    initargs: tuple[Any, ...],
) -> tuple[Any, str | None]:
    """(result, None), or (None, how the process died) for an item that kills it."""
    ctx = _context()
    receive, send = ctx.Pipe(duplex=False)
    process = ctx.Process(
        target=_alone, args=(send, os.getpid(), fn, item, initializer, initargs), daemon=True
    )
    process.start()
    send.close()
    try:
        delivery: tuple[Any] | None = receive.recv()
    except EOFError:  # died before sending
        delivery = None
    process.join()
    receive.close()
    if delivery is None:
        return None, _signal_name(process.exitcode)
    return delivery[0], None


def _abandon(pool: ProcessPoolExecutor) -> None:
    """Drop the queued work and stop the workers now: leaving the `with` block
    would otherwise run every queued file first (a Ctrl-C on a cold run of
    SGLang took 86 s to land)."""
    pool.shutdown(wait=False, cancel_futures=True)
    # the executor keeps its processes private; a worker mid-file is stopped too
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.terminate()


def run(
    fn: Callable[[Any], Any],
    items: list[Any],
    *,
    jobs: int,
    initializer: Callable[..., None],
    initargs: tuple[Any, ...],
    died: Callable[[Any, str], Any],
    idle: Callable[[], bool | str] | None = None,
) -> Iterator[Any]:
    """fn(item) for each item on `jobs` worker processes (fn, initializer and
    items must be picklable), results in no fixed order; `died(item, how)`
    stands in for the result of an item whose process died.

    `idle()`, when given, is called whenever no result is ready: a small piece
    of the parent's own work, done while the workers parse (it returns False
    once it has nothing left, and is not called again; STOP when that work
    made the results needless: the workers are stopped and no more come)."""
    pending = list(items)
    while pending:
        states = RawArray("b", len(pending))
        delivered: set[int] = set()
        try:
            with ProcessPoolExecutor(
                max_workers=min(jobs, len(pending)),
                mp_context=_context(),
                initializer=_start_worker,
                initargs=(os.getpid(), states, fn, initializer, initargs),
            ) as pool:
                try:
                    jobs_of = list(enumerate(pending))
                    waiting = {
                        pool.submit(_tracked, jobs_of[i : i + CHUNK])
                        for i in range(0, len(jobs_of), CHUNK)
                    }
                    while waiting:
                        ready, waiting = wait(
                            waiting, timeout=0 if idle else None, return_when=FIRST_COMPLETED
                        )
                        verdict = idle() if not ready and idle is not None else True
                        if verdict == STOP:
                            _abandon(pool)
                            return
                        if not verdict:
                            idle = None  # nothing left to do meanwhile: block from now on
                        for future in ready:
                            for i, result in future.result():
                                delivered.add(i)
                                yield result
                except BrokenProcessPool:
                    raise
                except BaseException:  # Ctrl-C, or the caller stopped: not one more file
                    _abandon(pool)
                    raise
            return
        except BrokenProcessPool:
            # In progress when the pool broke: the item that killed a worker,
            # or one whose worker the broken pool then terminated.
            suspects = [i for i in range(len(pending)) if states[i] == STARTED]
            if not suspects and not delivered:  # died outside any item: no progress
                suspects = list(range(len(pending)))
            for i in suspects:
                result, how = _run_alone(fn, pending[i], initializer, initargs)
                yield result if how is None else died(pending[i], how)
            done = delivered.union(suspects)
            pending = [item for i, item in enumerate(pending) if i not in done]
