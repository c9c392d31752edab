"""`ctxlint server --daemon start|status|stop|run`: the project held resident
for the command line (ctxlint.server.daemon; docs/daemon.md).

The project is found as `check` finds it (PATH, --config, --profile, else
the working folder); its daemon's socket, lock and log are in its cache
folder. `start` forks the daemon, which runs a first check (every fact
decoded, so the next check after an edit starts from it) before it listens,
and returns once it answers; `stop` asks it to exit (a daemon still on its
first check is sent SIGTERM) and waits until it has.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import traceback
from pathlib import Path

from ctxlint import session
from ctxlint.cli import options
from ctxlint.cli.daemon_checks import Answers
from ctxlint.core.errors import ConfigError, CtxlintError
from ctxlint.server import client
from ctxlint.server.daemon import (
    AlreadyRunning,
    Daemon,
    detach,
    gone,
    held_lock,
    lock_is_held,
    wait_ready,
)


def run(args: argparse.Namespace) -> int:
    setup = options.resolve(args)
    cache_dir = setup.config.cache_dir
    if cache_dir is None or args.no_cache:
        raise ConfigError("the daemon keeps its socket in the cache folder: not with --no-cache")
    action = {"start": start, "status": status, "stop": stop, "run": foreground}[args.daemon]
    try:
        return action(setup, cache_dir, args)
    except OSError as exc:  # the cache folder cannot hold the socket, lock or log
        raise CtxlintError(f"the daemon cannot use {cache_dir}: {exc.strerror or exc}") from None


def _ask(cache_dir: Path, op: str) -> dict[str, object] | None:
    try:
        return client.ask(cache_dir, {"op": op}, timeout=10)
    except client.NotOurs as exc:
        raise CtxlintError(f"not using the server socket {exc}") from None


def _said(answer: dict[str, object]) -> str:
    return (
        f"pid {answer['pid']}, up {answer['up']} s, {answer['checks']} checks answered, "
        f"socket {answer['socket']}"
    )


def status(setup: session.Setup, cache_dir: Path, _args: argparse.Namespace) -> int:
    """0 while a daemon runs for the project (or is starting), else 1."""
    root = setup.config.root
    answer = _ask(cache_dir, "status")
    if answer is not None:
        print(f"ctxlint server: running for {root} ({_said(answer)})")
        return 0
    if lock_is_held(cache_dir):
        print(f"ctxlint server: starting for {root} (its first check is running)")
        return 0
    if os.path.lexists(client.socket_path(cache_dir)):
        print(
            f"ctxlint server: not running for {root} (a stale socket, left by a daemon "
            "that was killed: `--daemon start` replaces it)"
        )
        return 1
    print(f"ctxlint server: not running for {root}")
    return 1


def stop(setup: session.Setup, cache_dir: Path, _args: argparse.Namespace) -> int:
    root = setup.config.root
    answer = _ask(cache_dir, "stop")
    pid = answer.get("pid") if answer is not None else _holder(cache_dir)
    if not isinstance(pid, int):
        print(f"ctxlint server: not running for {root}")
        return 0
    if answer is None:  # still on its first check: not listening yet
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    if not gone(pid, 30):
        raise CtxlintError(f"the daemon (pid {pid}) did not exit within 30 s")
    print(f"ctxlint server: stopped for {root} (pid {pid})")
    return 0


def _holder(cache_dir: Path) -> int | None:
    """The pid the daemon wrote in its lock, while it holds it."""
    if not lock_is_held(cache_dir):
        return None
    try:
        return int((cache_dir / client.LOCK).read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def start(setup: session.Setup, cache_dir: Path, args: argparse.Namespace) -> int:
    root = setup.config.root
    answer = _ask(cache_dir, "status")
    if answer is not None:
        print(f"ctxlint server: already running for {root} ({_said(answer)})")
        return 0
    if lock_is_held(cache_dir):
        print(f"ctxlint server: already starting for {root}")
        return 0
    cache_dir.mkdir(parents=True, exist_ok=True)
    log = cache_dir / client.LOG
    pid = detach(log)
    if pid == 0:  # the daemon's process: it never returns to the command line
        os._exit(_serve(setup, cache_dir))
    ready = wait_ready(cache_dir, pid, args.wait)
    if ready is None:
        tail = _tail(log)
        raise CtxlintError(
            f"the daemon did not start (its log, {log}, ends: {tail})"
            if tail
            else f"the daemon did not start (see {log})"
        )
    print(f"ctxlint server: started for {root} ({_said(ready)})")
    return 0


def foreground(setup: session.Setup, cache_dir: Path, _args: argparse.Namespace) -> int:
    """The daemon in this process, until stopped (a supervisor's way to run it)."""
    return _serve(setup, cache_dir)


def _serve(setup: session.Setup, cache_dir: Path) -> int:
    from ctxlint.server.watch import watching

    answers = Answers()
    try:
        # the tree's own watch (server.watch) from before the first check: the
        # checks after stat only the files changed on disk since the last one
        with held_lock(cache_dir), watching(setup.config.root):
            answers.prime(setup)
            print(f"ctxlint server: serving {setup.config.root} (pid {os.getpid()})", flush=True)
            Daemon(cache_dir, setup.config.root, answers).serve()
    except AlreadyRunning:
        print("ctxlint server: another daemon runs for this project", file=sys.stderr)
        return 1
    except Exception:  # said in the log; the daemon ends
        traceback.print_exc()
        return 2
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    return 0


def _tail(log: Path) -> str:
    try:
        lines = log.read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1] if lines else ""
