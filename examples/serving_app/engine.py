"""The in-process engine (SGLang's ``sgl.Engine``): launches the scheduler and
detokenizer processes, answers ``generate`` and the readbacks in the caller's
process, and shuts the server processes down. The HTTP server serves one."""

from __future__ import annotations

import dataclasses
import multiprocessing as mp
import sys
import threading
import time
from collections.abc import AsyncIterator, Callable
from multiprocessing.connection import Connection, wait
from multiprocessing.process import BaseProcess
from typing import Any

from ctxrt.context import assert_published, get_context, get_server_args
from ctxrt.record import ServerArgs
from examples.serving_app.control_plane import effective_value
from examples.serving_app.detokenizer import run_detokenizer_process
from examples.serving_app.messages import SchedulerReady, Shutdown
from examples.serving_app.scheduler import run_scheduler_process
from examples.serving_app.tokenizer_manager import GenerateChunk, TokenizerManager

STARTUP_TIMEOUT_S = 180.0  # model build (and its first compile) on a busy CPU
SHUTDOWN_TIMEOUT_S = 3.0  # every server process is gone within this, killed if need be


class Engine:
    def __init__(
        self, server_args: ServerArgs, on_failure: Callable[[], None] | None = None
    ) -> None:
        """``on_failure`` is called (from a watchdog thread) when a server process
        exits on its own: the open streams are ended first, new requests refused."""
        assert_published(server_args, role="tokenizer")  # the entry published, not us
        spawn = mp.get_context("spawn")
        self._to_scheduler, to_detokenizer, to_manager = (spawn.Queue() for _ in range(3))
        self._to_detokenizer = to_detokenizer
        ready, ready_child = spawn.Pipe(duplex=False)
        self.procs: list[BaseProcess] = [
            spawn.Process(
                target=run_scheduler_process,
                args=(server_args, self._to_scheduler, to_detokenizer, ready_child),
                name="scheduler",
                daemon=True,
            ),
            spawn.Process(
                target=run_detokenizer_process,
                args=(server_args, to_detokenizer, to_manager),
                name="detokenizer",
                daemon=True,
            ),
        ]
        for proc in self.procs:
            proc.start()
        ready_child.close()
        self._stopped = False
        try:
            self.max_running_requests = self._await_ready(ready).max_running_requests
        except BaseException:
            self.shutdown()
            raise
        self.tokenizer_manager = TokenizerManager(server_args, self._to_scheduler, to_manager)
        threading.Thread(
            target=_watch, args=(self, on_failure), name="watchdog", daemon=True
        ).start()

    def _await_ready(self, ready: Connection) -> SchedulerReady:
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                if ready.poll(0.5):
                    return ready.recv()
            except EOFError:  # the scheduler closed its end without a word: it died
                pass
            dead = [p.name for p in self.procs if not p.is_alive()]
            if dead:
                raise RuntimeError(f"server process exited during startup: {dead}")
        raise TimeoutError(f"the scheduler was not ready within {STARTUP_TIMEOUT_S}s")

    def generate(
        self, text: str, max_new_tokens: int | None = None
    ) -> AsyncIterator[GenerateChunk]:
        return self.tokenizer_manager.generate(text, max_new_tokens)

    # ---------------------------------------------------------------- readbacks
    # Siblings of the HTTP routes of the same names (http_server.py): ctxlint's
    # CTX502 checks that they report the same keys.
    def get_server_info(self) -> dict[str, Any]:
        overrides = [dataclasses.asdict(e) for e in get_context().overrides_log()]
        return {
            "role": get_context().role,
            "resolved_config": get_server_args().resolved_dict(),
            "overrides": overrides,
            "effective_overridden": {e["field"]: effective_value(e["field"]) for e in overrides},
        }

    def get_model_info(self) -> dict[str, Any]:
        return {
            name: get_context().config_leaf(name)
            for name in ("model_path", "served_model_name", "context_length", "dtype")
        }

    # ---------------------------------------------------------------- shutdown
    def shutdown(self) -> dict[str, int | None]:
        """Stop the pipeline in order (scheduler, then detokenizer), within
        ``SHUTDOWN_TIMEOUT_S``; kill what is left; end every open stream. Returns
        each process's exit code."""
        if not self._stopped:
            self._stopped = True
            self._to_scheduler.put(Shutdown())
            deadline = time.monotonic() + SHUTDOWN_TIMEOUT_S
            for proc in self.procs:
                proc.join(timeout=max(deadline - time.monotonic(), 0.1))
                if proc.name == "scheduler" and proc.exitcode != 0:
                    self._to_detokenizer.put(Shutdown())  # nobody else will forward it
            for proc in self.procs:
                if proc.is_alive():
                    proc.kill()
                    proc.join()
            self._to_scheduler.cancel_join_thread()  # a dead reader must not block our exit
            self._to_detokenizer.cancel_join_thread()
            manager = getattr(self, "tokenizer_manager", None)
            if manager is not None:
                manager.close()
        return {p.name: p.exitcode for p in self.procs}


def _watch(engine: Engine, on_failure: Callable[[], None] | None) -> None:
    """The watchdog: a server process that exits before ``shutdown`` leaves a server
    that cannot answer. Say which, end the open streams, hand over to ``on_failure``."""
    ended = wait([proc.sentinel for proc in engine.procs])
    if engine._stopped:
        return
    dead = [proc.name for proc in engine.procs if proc.sentinel in ended]
    print(f"[launcher] error: server process exited early: {dead}", file=sys.stderr, flush=True)
    engine.tokenizer_manager.close()
    if on_failure is not None:
        on_failure()
