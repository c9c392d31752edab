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
import sys
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

from ctxlint import session
from ctxlint.cli.daemon_message import client_message
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
    message = client_message(args=vars(args))
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
        self.answered = LastAnswers()

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

        out, err = _Captured(bool(message.get("tty"))), _Captured(False)
        said = io.StringIO()  # what the resolve says (the full client said it already)
        with _as_client(message):
            try:
                args = _arguments(message)
                with contextlib.redirect_stderr(said):
                    setup = check.options.resolve(args)
            except (CtxlintError, _Refused) as exc:  # (the client says it, running it)
                return {"fallback": str(exc)}
            run = replace(setup.request.run, resident=self.resident(setup))
            setup = replace(setup, request=replace(setup.request, run=run))
            seen = self.answered.seen(args, message)
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    code = guarded(lambda: check.report(args, setup, seen=seen))
                    answer = self.answered.keep(code, out.getvalue(), err.getvalue())
                except Answered as again:  # (this check's own output so far: the same)
                    answer = again.answer
        told = said.getvalue() if "argv" in message else ""
        return {"code": answer[0], "stdout": answer[1], "stderr": told + answer[2]}


Answer = tuple[int, str, str]  # exit code, standard output, standard error


class Answered(BaseException):
    """The check's run is one whose report the daemon gave already: that
    answer (a BaseException: cli.main.guarded lets it through)."""

    def __init__(self, answer: Answer) -> None:
        super().__init__()
        self.answer = answer


class LastAnswers:
    """The last reports, by what a report is made of: the request (options,
    folder, environment, terminal, and the config the folder finds, which the
    report's `baseline update` command names) and the run's memo key (its
    inputs, the config, rules and pins, and every file's content hash). A
    check whose run has a key given before is answered with that report, not
    rendered again (with no edit, the text report was 80% of the answer on
    sglang 0.5.23). Not kept: a report written to a file (--output), one with
    the run's timings, one filtered by git (--staged, --changed-since)."""

    def __init__(self) -> None:
        self.kept: OrderedDict[tuple[str, str], Answer] = OrderedDict()
        self._key: tuple[str, str] | None = None

    def seen(self, args: argparse.Namespace, message: dict[str, Any]) -> Any:
        """What check.report calls with its run (None: not kept)."""
        self._key = None
        if any(getattr(args, k, None) for k in ("output", "timings", "staged", "changed_since")):
            return None
        from ctxlint.config.settings import find_config

        cwd = message.get("cwd", "")
        request = json.dumps(
            [vars(args), cwd, message.get("env"), message.get("tty"), str(find_config(Path(cwd)))],
            sort_keys=True,
            default=str,
        )

        def seen(checked: session.Checked) -> None:
            memo_key = checked.out.memo_key
            self._key = (request, memo_key) if memo_key else None
            if self._key is not None and self._key in self.kept:
                self.kept.move_to_end(self._key)
                raise Answered(self.kept[self._key])

        return seen

    def keep(self, code: int, stdout: str, stderr: str) -> Answer:
        answer = (code, stdout, stderr)
        if self._key is not None:
            self.kept[self._key] = answer
            while len(self.kept) > KEEP:
                self.kept.popitem(last=False)
        return answer


class _Refused(Exception):
    """A command line the parser refuses, or one for another command."""


def _arguments(message: dict[str, Any]) -> argparse.Namespace:
    """The check's options: parsed by the full client, or its command line
    (the quick client: cli.quick_check) parsed here as `ctxlint` parses it."""
    if "args" in message:
        return argparse.Namespace(**message["args"])
    from ctxlint.cli.main import build_parser

    argv = message.get("argv")
    if not isinstance(argv, list) or argv[:1] != ["check"]:
        raise _Refused("not a check")
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            return build_parser().parse_args([str(a) for a in argv])
    except SystemExit:  # (a usage error, a help: the client's own parser says it)
        raise _Refused("a command line the parser refuses") from None


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
