"""The server's one way into the check: the session's check sequence over the
tree as the editor holds it, started where the last check ended.

Everything the server asks of the engine, the session and the fix planner goes
through this module, so that a change in how they are sequenced is met here
alone. A check is `session.check` itself (the same baseline compare, the same
disabled rules, the same findings as `ctxlint check`) with an engine that

- reads each open buffer's text in place of that file's bytes (unsaved edits
  count; nothing is written to the tree), and
- starts where the previous check ended (engine.start): the earlier rounds'
  tokens and prefilter decisions, and the facts decoded then for every file
  whose entry is byte for byte the same, so an edit re-extracts and decodes
  only the edited files. The fact cache (as `check` uses it) serves the rest.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from ctxlint import session
from ctxlint.baseline.ratchet import load_baseline
from ctxlint.core.findings import FileError, Finding
from ctxlint.discover.files import SourceFile
from ctxlint.discover.sources import Sources, content_hash
from ctxlint.engine.outcome import RoundsEnd
from ctxlint.engine.run import Engine
from ctxlint.engine.start import Start
from ctxlint.facts import ruff
from ctxlint.fix.plan import FIXED
from ctxlint.fix_run import FixRun, fixable
from ctxlint.program.rule import Rule
from ctxlint.session import Checked, Setup


class _EditorEngine(Engine):
    """The engine over the tree with `texts` (path -> the buffer's text) in
    place of those files; `began` sets its start once the tree's hashes are
    known (before anything else reads `start`)."""

    def __init__(
        self,
        *args: Any,
        texts: Mapping[str, str],
        began: Callable[[dict[str, str]], Start | None],
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.texts = texts
        self.began = began
        self.hashes: dict[str, str] = {}

    def read_sources(self) -> tuple[list[SourceFile], Sources, list[FileError]]:
        files, sources, errors = super().read_sources()
        for rel, text in self.texts.items():
            if rel in sources.hashes:  # a buffer of a file the tree checks
                data = text.encode("utf-8")
                sources._bytes[rel] = data
                sources.hashes[rel] = content_hash(data)
        self.hashes = dict(sources.hashes)
        self.start = self.began(self.hashes)
        return files, sources, errors


class RuleFailed(Exception):
    """A rule raised during a check: which one, and the traceback."""

    def __init__(self, rule: str, detail: str) -> None:
        super().__init__(rule)
        self.rule = rule
        self.detail = detail


def _failing_rule(exc: BaseException, rules: list[Rule]) -> str | None:
    """The rule whose code raised `exc`, else None (a fault of the engine itself):
    the innermost engine frame that was running a rule (its local `rule`), else
    the innermost frame of a rule's own module."""
    ids = {id(r): r.id for r in rules}
    modules = {type(r).__module__: r.id for r in rules}
    running = in_module = None
    for frame, _ in traceback.walk_tb(exc.__traceback__):
        name = frame.f_globals.get("__name__", "")
        if name.startswith("ctxlint.engine.") and id(frame.f_locals.get("rule")) in ids:
            running = ids[id(frame.f_locals["rule"])]
        for module, rid in modules.items():
            if name == module or name.startswith(module + "."):
                in_module = rid
    return running or in_module


class Checker:
    """Checks one project again and again, each check starting where the last
    one ended; `setup` is the session's (config, rules, selection)."""

    def __init__(self, setup: Setup, *, use_cache: bool = True, jobs: int | None = None) -> None:
        self.setup = setup
        self.use_cache = use_cache
        self.jobs = jobs
        self._rounds: RoundsEnd | None = None
        self._decoded: dict[str, tuple[bytes, dict[str, Any]]] = {}
        self._hashes: dict[str, str] = {}  # the last check's content hashes
        self.failed: dict[str, str] = {}  # rule -> the traceback of its fault (left out since)

    @property
    def root(self) -> Path:
        return self.setup.config.root

    def check(self, texts: Mapping[str, str]) -> Checked:
        """The session's check of the tree with `texts` in place of those files.
        A rule that raises is left out of this check and the next ones (its
        fault kept in `failed`); a fault of the engine itself raises."""
        while True:
            setup = self.setup
            if self.failed:
                keep = [r for r in setup.rules if r.id not in self.failed]
                setup = replace(
                    setup, rules=keep, selected=[r for r in setup.selected if r in keep]
                )
            try:
                return self._check(setup, texts)
            except Exception as exc:
                rid = _failing_rule(exc, setup.rules)
                if rid is None:
                    raise
                self.failed[rid] = "".join(traceback.format_exception(exc))
                self._rounds, self._decoded, self._hashes = None, {}, {}

    def _check(self, setup: Setup, texts: Mapping[str, str]) -> Checked:
        made: list[_EditorEngine] = []

        def began(hashes: dict[str, str]) -> Start | None:
            if self._rounds is None:
                return None
            changed = frozenset(p for p, h in hashes.items() if self._hashes.get(p) != h)
            return Start(self._rounds, changed, self._decoded)

        def engine(*args: Any, **kwargs: Any) -> Engine:
            made.append(_EditorEngine(*args, texts=texts, began=began, **kwargs))
            return made[-1]

        held = ruff.BUFFERS.set(dict(texts))  # CTX401's ruff reads the buffers too
        try:
            checked = session.check(
                setup,
                jobs=self.jobs,
                use_cache=self.use_cache,
                disabled=session.QUIET,
                warn=None,
                engine=engine,
            )
        finally:
            ruff.BUFFERS.reset(held)
        ran = made[-1]
        self._hashes = ran.hashes
        if checked.out.rounds is not None:
            self._rounds = checked.out.rounds
        # the facts of this check (a replayed outcome decoded none: the last ones stay)
        decoded: dict[str, tuple[bytes, dict[str, Any]]] = {**self._decoded, **ran.decoded}
        self._decoded = {p: v for p, v in decoded.items() if p in self._hashes}
        return checked

    # -- fixes --------------------------------------------------------------------
    def fixable(self) -> dict[str, tuple[str, ...]]:
        """Rule id -> its kinds of fix ("safe", "unsafe"), for the selected rules."""
        return fixable([r for r in self.setup.selected if r.id not in self.failed])

    def fix(
        self,
        texts: Mapping[str, str],
        path: str,
        *,
        rules: set[str],
        unsafe: bool,
        only: Callable[[Finding], bool] = lambda _f: True,
    ) -> tuple[str | None, list[str]]:
        """What `ctxlint fix` would make of `path` (with `texts` for the open
        buffers), fixing only the findings `only` keeps of `rules`: the new text
        (None: nothing it can rewrite) and the fixed findings' keys
        (rule, scope, snippet) as "RULE scope snippet" lines."""
        config = self.setup.config
        baseline = load_baseline(config.baseline) if config.baseline else None
        run = FixRun(
            config,
            [r for r in self.setup.rules if r.id not in self.failed],
            select=rules,
            unsafe=unsafe,
            paths=lambda p: p == path,
            jobs=1,
            use_cache=self.use_cache,
            pinned=baseline.pins if baseline is not None else None,
            texts=dict(texts),
            only=only,
        )
        held = ruff.BUFFERS.set(dict(texts))
        try:
            result = run.run()
        finally:
            ruff.BUFFERS.reset(held)
        after = result.after.get(path)
        fixed = [
            f"{s.rule} {s.scope} {s.snippet}"
            for s in result.plans.get(path, [])
            if s.status == FIXED
        ]
        return after, fixed


def load(request: session.Request) -> Setup:
    """The session's setup for a request (ConfigError when it cannot be used)."""
    return session.resolve(request)
