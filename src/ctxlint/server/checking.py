"""The server's one way into the check: the session's check sequence over the
tree as the editor holds it, started where the last check ended.

Everything the server asks of the session and the fix planner goes through
this module, so that a change in how they are sequenced is met here alone. A
check is `session.check` itself (the same baseline compare, the same disabled
rules, the same findings as `ctxlint check`), which

- reads each open buffer's text in place of that file's bytes (`texts`:
  unsaved edits count; nothing is written to the tree), and
- starts where the previous check ended (a `session.Resident` in the
  request's run options): the earlier rounds' tokens and prefilter
  decisions, and the facts decoded then for every file whose entry is byte
  for byte the same, so an edit re-extracts and decodes only the edited
  files. The fact cache (as `check` uses it) serves the rest.
"""

from __future__ import annotations

import ctypes
import gc
import traceback
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

from ctxlint import session
from ctxlint.baseline.ratchet import load_baseline
from ctxlint.core.findings import Finding
from ctxlint.facts import ruff
from ctxlint.fix.plan import FIXED
from ctxlint.fix_run import FixRun, fixable
from ctxlint.program.rule import Rule
from ctxlint.session import Checked, Resident, Setup


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


class Fixed(NamedTuple):
    """A fix of one file: the new text (None: nothing it can rewrite), the
    fixed findings' keys as "RULE scope snippet" lines, and why the others
    were left (the fix report's reasons)."""

    after: str | None
    fixed: list[str]
    left: list[str]


class Checker:
    """Checks one project again and again, each check starting where the last
    one ended; `setup` is the session's (config, rules, selection)."""

    def __init__(self, setup: Setup, *, use_cache: bool = True, jobs: int | None = None) -> None:
        request = setup.request
        # where the last check ended (session.Resident): the next one starts there
        self.resident = Resident(keep_program=True)  # navigation reads its facts
        run = replace(request.run, use_cache=use_cache, jobs=jobs, resident=self.resident)
        report = replace(request.report, disabled=session.QUIET, warn=None)
        self.setup = replace(setup, request=replace(request, run=run, report=report))
        self.failed: dict[str, str] = {}  # rule -> the traceback of its fault (left out since)

    @property
    def root(self) -> Path:
        return self.setup.config.root

    def check(self, texts: Mapping[str, str], *, replay: bool = False) -> Checked:
        """The session's check of the tree with `texts` in place of those files.
        With `replay`, a stored outcome of exactly this tree may answer (as a
        warm `ctxlint check` does): the findings without the program's facts.
        A rule that raises is left out of this check and the next ones (its
        fault kept in `failed`); a fault of the engine itself raises."""
        while True:
            setup = self._without_failed()
            held = ruff.BUFFERS.set(dict(texts))  # CTX401's ruff reads the buffers too
            self.resident.keep_program = not replay
            try:
                checked = session.check(setup, texts=texts)
                settle()
                return checked
            except Exception as exc:
                rid = _failing_rule(exc, setup.rules)
                if rid is None:
                    raise
                self.failed[rid] = "".join(traceback.format_exception(exc))
                self.resident.forget()
            finally:
                self.resident.keep_program = True
                ruff.BUFFERS.reset(held)

    def _without_failed(self) -> Setup:
        """The setup less the rules that raised."""
        if not self.failed:
            return self.setup
        keep = [r for r in self.setup.rules if r.id not in self.failed]
        return replace(
            self.setup, rules=keep, selected=[r for r in self.setup.selected if r in keep]
        )

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
    ) -> Fixed:
        """What `ctxlint fix` would make of `path` (with `texts` for the open
        buffers), fixing only the findings `only` keeps of `rules`."""
        setup = self._without_failed()
        config = setup.config
        baseline = load_baseline(config.baseline) if config.baseline else None
        # one worker, and the fix's own runs (not this checker's resident)
        run_options = replace(setup.request.run, jobs=1, resident=None)
        setup = replace(setup, request=replace(setup.request, run=run_options))
        run = FixRun(
            setup,
            select=rules,
            unsafe=unsafe,
            paths=lambda p: p == path,
            pins=baseline.pins if baseline is not None else None,
            texts=texts,
            only=only,
        )
        held = ruff.BUFFERS.set(dict(texts))
        try:
            result = run.run()
        finally:
            ruff.BUFFERS.reset(held)
        sites = result.plans.get(path, [])
        return Fixed(
            result.after.get(path),
            [f"{s.rule} {s.scope} {s.snippet}" for s in sites if s.status == FIXED],
            [s.reason for s in sites if s.status != FIXED and s.reason],
        )


def settle() -> None:
    """After a check: what it made (the program, millions of objects the engine
    made with the cyclic GC paused, all in its youngest generation) is frozen
    out of the collector's reach. Else the next collections, in whatever
    runs next (the next edit's layout compare, the publishing), traverse all
    of it two or three times: 20% of a statement edit's time on sglang 0.5.23.
    `collect_idle` collects what earlier checks left in cycles.

    Then the C library's heap is trimmed: the check's large blocks (the
    tables of the program it replaced, of its own transient indexes) went back
    to malloc, which keeps freed pages mapped; trimmed, they go back to the
    system (on sglang 0.5.23, 30 to 40 MiB of the server's resident memory
    after a statement edit, 90 MiB after the first check)."""
    gc.freeze()
    if _TRIM is not None:
        _TRIM(0)


def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's `malloc_trim`, where the process's C library has one."""
    try:
        return ctypes.CDLL(None).malloc_trim  # type: ignore[no-any-return]
    except (OSError, AttributeError):
        return None


_TRIM = _malloc_trim()


def collect_idle() -> None:
    """When the editor is quiet: the cycles earlier checks left (the frozen
    objects are looked at again), then everything left frozen again."""
    gc.unfreeze()
    gc.collect()
    settle()


def load(request: session.Request) -> Setup:
    """The session's setup for a request (ConfigError when it cannot be used)."""
    return session.resolve(request)
