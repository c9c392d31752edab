"""How the server processes stop: in order on a Shutdown message, and on their own
when the launcher is gone (so a killed launcher leaves no orphans)."""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import sys
from multiprocessing.queues import Queue
from typing import Any, NoReturn

PARENT_POLL_S = 0.5  # how often a server process checks that the launcher lives


def ignore_interrupts() -> None:
    """Ctrl-C reaches the whole process group: the launcher shuts the server processes
    down in order, so they do not die mid-message on their own SIGINT."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def launcher_alive() -> bool:
    parent = multiprocessing.parent_process()
    return parent is None or parent.is_alive()


def exit_now(code: int, *outboxes: Queue[Any]) -> NoReturn:
    """End an orderly-stopped process without the interpreter's teardown, which takes
    seconds once torch is imported (1.5 s on a busy 2-core box) and would make a
    SIGTERM outlast its deadline. Nothing is lost: what this process put on its
    queues is flushed first, and the log and the standard streams too."""
    for outbox in outboxes:
        outbox.close()
        outbox.join_thread()
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
