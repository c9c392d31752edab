"""`ctxlint check` through a project's daemon (`ctxlint server --daemon`).

The client side (`ask`): a check whose project has a daemon running sends it
its parsed arguments, working folder and environment, and prints what comes
back; with no daemon (or one of another ctxlint version, or a socket that is
not this user's) it answers None and the check runs here, as a batch run.

The daemon's side (`Answers`): the same check command, in the daemon's
process, with the client's folder, environment and terminal, its output
captured; each setup's runs start where its last one ended (session.Resident),
reading again every file whose content changed on disk. The answer (stdout,
exit code) is the batch run's: the session and the renderer are the same
code, only the run's start differs, and the engine's findings do not depend
on where a run starts.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import sys
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from ctxlint import __version__, session
from ctxlint.core.errors import CtxlintError
from ctxlint.engine.keys import CODE_VERSION
from ctxlint.server import client

# the residents kept at once: a project checked with several configs or rule sets
KEEP = 4


def ask(args: argparse.Namespace, setup: session.Setup) -> int | None:
    """The daemon's answer, printed: the exit code; None when no daemon answers."""
    cache_dir = setup.config.cache_dir
    if (
        cache_dir is None
        or getattr(args, "no_cache", False)  # a cold run was asked for
        or os.environ.get("CTXLINT_NO_SERVER")
    ):
        return None
    message = {
        "op": "check",
        "version": __version__,
        "code": CODE_VERSION,
        "args": vars(args),
        "cwd": os.getcwd(),
        "env": _environment(),
        "tty": _isatty(sys.stdout),
    }
    try:
        json.dumps(message)
    except (TypeError, ValueError):  # an argument JSON cannot carry: checked here
        return None
    try:
        answer = client.ask(cache_dir, message)
    except client.NotOurs as exc:
        print(f"ctxlint: warning: not using the server socket {exc}", file=sys.stderr)
        return None
    if answer is None or not isinstance(answer.get("code"), int):
        return None
    sys.stdout.write(answer.get("stdout", ""))
    sys.stderr.write(answer.get("stderr", ""))
    return int(answer["code"])


class _Captured(io.StringIO):
    """A stream that is (or is not) a terminal as the client's is."""

    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


class Answers:
    """The daemon's answer to each check request, each setup kept resident."""

    def __init__(self) -> None:
        self.residents: OrderedDict[str, session.Resident] = OrderedDict()

    def resident(self, setup: session.Setup) -> session.Resident:
        """Where the last run of this setup (config, tree, rules) ended."""
        key = repr((setup.config, [r.id for r in setup.rules], setup.request.run.use_cache))
        found = self.residents.pop(key, None) or session.Resident()
        self.residents[key] = found
        while len(self.residents) > KEEP:
            self.residents.popitem(last=False)
        return found

    def prime(self, setup: session.Setup) -> None:
        """A first run that decodes every fact (no stored outcome replayed), so
        the first check after an edit starts from it."""
        session.Runs(setup).check(memo=False, resident=self.resident(setup))

    def __call__(self, message: dict[str, Any]) -> dict[str, Any]:
        if message.get("code") != CODE_VERSION:
            return {"fallback": "the daemon runs another version of ctxlint"}
        from ctxlint.cli import check
        from ctxlint.cli.main import guarded

        args = argparse.Namespace(**message["args"])
        out, err = _Captured(bool(message.get("tty"))), _Captured(False)
        with _as_client(message):
            try:
                with contextlib.redirect_stderr(io.StringIO()):  # the client said these
                    setup = check.options.resolve(args)
            except CtxlintError as exc:  # the config changed since the client read it
                return {"fallback": str(exc)}
            run = replace(setup.request.run, resident=self.resident(setup))
            setup = replace(setup, request=replace(setup.request, run=run))
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = guarded(lambda: check.report(args, setup))
        return {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}


@contextlib.contextmanager
def _as_client(message: dict[str, Any]) -> Iterator[None]:
    """The client's working folder and environment, for one request."""
    here, env = os.getcwd(), dict(os.environ)
    os.chdir(message["cwd"])
    os.environ.clear()
    os.environ.update(message.get("env") or {})
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(env)
        os.chdir(here)


def _environment() -> dict[str, str]:
    """This process's environment, with the terminal's width when the report
    goes to one (the daemon has no terminal to ask)."""
    env = dict(os.environ)
    if _isatty(sys.stdout) and not env.get("COLUMNS"):
        env["COLUMNS"] = str(shutil.get_terminal_size().columns)
    return env


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False
