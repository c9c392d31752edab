"""A run's outcome, and its stored form: what a warm run replays instead of
reloading every fact and deriving again (the key is made in engine.run and
covers the code version, so a record is only read by the code that wrote it)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ctxlint.config.settings import Config
from ctxlint.core.findings import VIOLATION, FileError, Finding, Span
from ctxlint.facts.vocab import Vocabulary
from ctxlint.program.core import Program


@dataclass(frozen=True)
class RoundsEnd:
    """Where a check's fixed-point rounds ended: the prefilter tokens, and the
    files they let in. A check of the same tree with a few files rewritten may
    start its rounds there (Engine's `start`)."""

    tokens: tuple[str, ...]
    let_in: frozenset[str]


@dataclass
class RunOutput:
    program: Program
    findings: list[Finding]  # all statuses "new"; the baseline decides later
    errors: list[FileError]
    files_checked: int
    files_parsed: int
    timings: dict[str, float] = field(default_factory=dict)
    pins: dict[str, dict[str, Any]] = field(default_factory=dict)  # rule -> current pins
    # rule -> why it could not run on this codebase (a vocabulary set it needs is missing)
    disabled: dict[str, str] = field(default_factory=dict)
    rounds: RoundsEnd | None = None  # None: not known
    # the key its outcome is stored under (None: not stored): what else is
    # derived from exactly this run's inputs may be kept beside it (fix guards)
    memo_key: str | None = None
    # read back from a stored outcome: findings and sets, but no facts in the
    # program (a front end that asks the program itself must run again)
    replayed: bool = False


def _plain_sorted(value: Any) -> list[Any]:
    """JSON for sets (sorted: their iteration order varies between processes)."""
    return sorted(value) if isinstance(value, (set, frozenset)) else list(value)


def record(out: RunOutput) -> bytes:
    """The stored form of an outcome (read back by `replay`)."""
    return json.dumps(
        {
            "vocab": out.program.vocab.to_json(),
            "sets": out.program.sets,
            "findings": [
                {
                    "rule": f.rule,
                    "path": f.path,
                    "scope": f.scope,
                    "message": f.message,
                    "snippet": f.snippet,
                    "fingerprint": f.fingerprint,
                    "details": f.details,
                    "data": f.data,
                    "kind": f.kind,
                    "span": [f.span.line, f.span.column, f.span.end_line, f.span.end_column],
                }
                for f in out.findings
            ],
            "errors": [e.to_json() for e in out.errors],
            "pins": out.pins,
            "disabled": out.disabled,
            "rounds": None
            if out.rounds is None
            else {"tokens": out.rounds.tokens, "let_in": out.rounds.let_in},
        },
        sort_keys=True,
        default=_plain_sorted,
    ).encode()


def replay(
    data: dict[str, Any],
    config: Config,
    pinned: dict[str, dict[str, Any]],
    files: int,
    parsed: int,
    timings: dict[str, float],
) -> RunOutput:
    """The run's output from a stored outcome (checked by cache.entries.outcome_entry)."""
    vocab = Vocabulary.from_json(data["vocab"])
    program = Program(config, vocab, {}, sets=data["sets"], pinned=pinned)
    findings = [
        Finding(
            f["rule"],
            f["path"],
            Span(*f["span"]),
            f["scope"],
            f["message"],
            f["snippet"],
            f["fingerprint"],
            details=f.get("details", ""),
            data=dict(f.get("data", {})),
            kind=f.get("kind", VIOLATION),
        )
        for f in data["findings"]
    ]
    errors = [FileError(e["path"], e["message"]) for e in data["errors"]]
    return RunOutput(
        program,
        findings,
        errors,
        files,
        parsed,
        dict(timings),
        data["pins"],
        data.get("disabled", {}),
        _rounds(data.get("rounds")),
        replayed=True,
    )


def _rounds(value: Any) -> RoundsEnd | None:
    strings = lambda v: isinstance(v, list) and all(isinstance(t, str) for t in v)  # noqa: E731
    if isinstance(value, dict) and strings(value.get("tokens")) and strings(value.get("let_in")):
        return RoundsEnd(tuple(value["tokens"]), frozenset(value["let_in"]))
    return None
