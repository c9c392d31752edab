"""What a fix run did: each file's sites, the texts it changed, the checks it ran."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from ctxlint.core.findings import FileError, Finding
from ctxlint.fix.plan import Site


class Checked(Protocol):
    """What the fix reports read of a check (the engine's RunOutput)."""

    findings: list[Finding]
    disabled: dict[str, str]


@dataclass
class FixResult:
    plans: dict[str, list[Site]] = field(default_factory=dict)  # path -> its sites
    before: dict[str, str] = field(default_factory=dict)  # path -> text, files changed
    after: dict[str, str] = field(default_factory=dict)
    sites: list[Site] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)  # files left because they do not parse
    checks: int = 0  # whole-program checks run
    planned: int = 0  # files planned by this run
    replayed: int = 0  # files whose earlier outcome still held (fix.plan_cache)
    output: Checked | None = None  # the last check (of the fixed program)
    # the runtime module's file -> the accessors the fix adds to it (fix.added_accessors)
    added: dict[str, list[str]] = field(default_factory=dict)
    # the files a dropped parameter edits (fix.param_chain): kept or rolled back together
    units: list[set[str]] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for s in self.sites if s.status == status)
