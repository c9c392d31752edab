"""Each rule's derived sets and findings, remembered by exactly what they read.

A resident front end (the language server, the daemon) checks the same tree
again after every edit. A rule's derivation and check read the program, but
only some of it: the rule's own facts, the facts of the program parts it
requires (and of the parts those are built from), the file list, the
vocabulary, the config and the baseline's pins. So each rule's outcome (its derived sets, its raw
findings less its per-rule excludes, its pins) is remembered in memory by the
digests of just those facts, WITH their positions (findings and sets carry
spans): an edit that leaves them as they were replays it, and a program part
is built (Program.memo) only when a rule that needs it runs again.

What a rule reads besides its facts cannot be keyed by them: a rule with an
environment (CTX401 runs ruff over the files' text) always runs. No rule reads
another rule's derived sets (program.sets); tests/engine/test_check_memo.py checks,
rule by rule, that a rule's outcome depends on nothing but `check_reads`.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ctxlint.core.findings import Finding
from ctxlint.engine import checks
from ctxlint.engine.part_digests import ERROR, PartDigests, placed
from ctxlint.engine.rounds import RoundCache
from ctxlint.program.core import Program
from ctxlint.program.parts import DEPENDS, required
from ctxlint.program.rule import RawFinding, Rule

Timed = Callable[[str, float], None]
# entries (path -> entry digest, hex) -> their part digests by entry digest (the
# workers', the fact cache's, or worked out: engine.rounds.RoundMemo.digests)
LoadDigests = Callable[[dict[str, str]], dict[str, PartDigests]]

# The parts each part's whole-program side is built from, past the walk's own
# dependencies (parts.DEPENDS): the call graph asks the class index and the
# record convention; the resolution model asks the call graph.
BUILT_FROM: dict[str, tuple[str, ...]] = {
    "calls": ("classes", "records"),
    "resolution": ("calls",),
}


def check_reads(rule: Rule) -> tuple[str, ...]:
    """The facts keys a rule's derivation, check and pins may read: its own, its
    parts' and those their models are built from or query (no side part:
    parts.SIDE, read by the fixes and the server's navigation)."""
    parts = required([rule])
    todo = list(parts)
    while todo:
        part = todo.pop()
        for more in (*DEPENDS.get(part, ()), *BUILT_FROM.get(part, ())):
            if more not in parts:
                parts.add(more)
                todo.append(more)
    return (ERROR, *sorted({rule.id, *rule.reads_facts, *parts}))


def replayable(rule: Rule) -> bool:
    """Whether a rule reads nothing but the program: one with an environment
    (a helper tool it runs) reads past the facts."""
    return not rule.environment()


@dataclass(frozen=True)
class Outcome:
    """One rule's outcome: its sets (after its check), its raw findings and
    pins (None: it was not selected, so not checked)."""

    sets: dict[str, Any]
    found: tuple[RawFinding, ...] | None
    pins: dict[str, Any] | None


class CheckMemo:
    """The outcome of each rule's last run, by its key; the part digests of the
    entries the last run held. Lives in memory, with a resident front end."""

    def __init__(self) -> None:
        self._placed: dict[bytes, PartDigests] = {}  # entry digest -> digests, positions kept
        self._last: dict[str, tuple[str, Outcome]] = {}  # rule -> (key, outcome)
        # the rules derived (not replayed) by the last run, in order
        self.derived: tuple[str, ...] = ()
        self.rounds = RoundCache()  # what the rounds work out per file, kept between runs

    def forget(self) -> None:
        self._placed, self._last, self.derived = {}, {}, ()
        self.rounds = RoundCache()

    def _columns(
        self, digests: Mapping[str, bytes], modules: Mapping[str, str], load: LoadDigests
    ) -> tuple[bytes, dict[str, bytes]]:
        """Every file's path and module (or error), and per facts key the
        (path, digest with positions) of each file that has it, in path order."""
        wanted = {p: d.hex() for p, d in digests.items() if d not in self._placed}
        if wanted:
            found = load(wanted)
            for path, d in wanted.items():
                self._placed[digests[path]] = placed(found[d])
        self._placed = {d: self._placed[d] for d in set(digests.values())}
        files: list[str] = []
        columns: dict[str, list[str]] = {}
        for path in sorted(digests):
            parts = self._placed[digests[path]]
            files.append(f"\0{path}\0{modules[path]}\0{parts.get(ERROR, '')}")
            for key, digest in parts.items():
                columns.setdefault(key, []).append(f"\0{path}\0{digest}")

        def encoded(lines: list[str]) -> bytes:
            return "".join(lines).encode("utf-8", "surrogateescape")

        return encoded(files), {k: encoded(v) for k, v in columns.items()}

    def run(
        self,
        program: Program,
        runnable: list[Rule],
        selected: set[str],
        pinned: dict[str, dict[str, Any]],
        head: str,
        digests: Mapping[str, bytes],
        modules: Mapping[str, str],
        load: LoadDigests,
        timed: Timed,
    ) -> tuple[list[Finding], dict[str, dict[str, Any]]]:
        """checks.derive, checks.check and checks.pins of the program, each
        rule replayed whose key is its last run's; the findings and pins."""
        t = time.perf_counter()
        files, columns = self._columns(digests, modules, load)
        common = hashlib.blake2b(head.encode(), digest_size=16)
        common.update("\0".join(program.paths).encode("utf-8", "surrogateescape"))
        common.update(files)
        keys: dict[str, str] = {}
        for rule in runnable:
            if replayable(rule):
                h = common.copy()
                h.update(f"\0{rule.id}\0{rule.id in selected}".encode())
                for key in check_reads(rule):
                    h.update(f"\0{key}".encode())
                    h.update(columns.get(key, b""))
                keys[rule.id] = h.hexdigest()
        replayed = {
            rid: hit[1]
            for rid, key in keys.items()
            if (hit := self._last.get(rid)) is not None and hit[0] == key
        }
        timed("check memo", t)
        t = time.perf_counter()
        for rule in runnable:  # checks.derive, less the replayed
            if rule.id in replayed:
                program.sets[rule.id] = replayed[rule.id].sets
            else:
                one = time.perf_counter()
                program.sets[rule.id] = rule.derive(program)
                timed(f"rule {rule.id} derive", one)
        timed("derive", t)
        program.pinned = pinned  # the checks compare with the baseline's pins
        raw: list[RawFinding] = []
        pins: dict[str, dict[str, Any]] = {}
        for rule in runnable:
            done = replayed.get(rule.id)
            if done is None:
                found = pinning = None
                if rule.id in selected:
                    found = tuple(checks.rule_findings(program, rule, program.config, timed))
                    pinning = rule.pins(program)
                done = Outcome(program.sets[rule.id], found, pinning)
                if rule.id in keys:
                    self._last[rule.id] = (keys[rule.id], done)
            if done.found is not None:
                raw.extend(done.found)
            if done.pins:
                pins[rule.id] = done.pins
        self._last = {rid: v for rid, v in self._last.items() if rid in keys}
        self.derived = tuple(r.id for r in runnable if r.id not in replayed)
        return checks.judged(program, raw, runnable, selected), pins
