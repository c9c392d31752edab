"""The run's `# ctxlint: ignore[...]` comments as the program model holds them:
every file's (facts/suppression_comments.py found them), each with the rules it
names and, once the engine has applied them to the findings, the rules it
silenced. CTX001 judges them (Rule.check_suppressions)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxlint.core.errors import did_you_mean
from ctxlint.facts.suppression_comments import SuppressionComment
from ctxlint.facts.typed import decoder
from ctxlint.program.core import Program


@dataclass(slots=True)
class Suppression:
    path: str
    line: int
    col: int
    end_col: int
    scope: str  # the def or class its comment is in
    text: str  # the comment as written
    rules: list[str]  # the rules it names, each name as its id (`seed-read` -> CTX101)
    reason: str
    malformed: bool
    used: set[str] = field(default_factory=set)  # the rules it silenced a finding of


@dataclass
class Suppressions:
    comments: list[Suppression]  # by path and line
    ran: set[str]  # the rules whose checks ran: only those can leave one unused
    known: dict[str, str]  # every rule's id, and its name upper-cased, -> its id

    @classmethod
    def of(cls, program: Program, ran: set[str], known: dict[str, str]) -> Suppressions:
        found = [
            _suppression(path, s, known)
            for path, entry in program.files.items()
            for s in _comments(entry.get("suppressions", ()))
        ]
        found.sort(key=lambda s: (s.path, s.line))  # stable: a file's own order kept
        return cls(found, ran, known)

    def asked(self, rid: str) -> str:
        """An unknown rule as written (a name in lower case), with the nearest known
        id or name (`seed-reed` -> `seed-read`)."""
        if "-" in rid:
            names = [k.lower() for k, v in self.known.items() if k != v]
            return rid.lower() + did_you_mean(rid.lower(), names)
        return rid + did_you_mean(rid, [k for k, v in self.known.items() if k == v])


_comments = decoder(list[SuppressionComment])


def _suppression(path: str, s: SuppressionComment, known: dict[str, str]) -> Suppression:
    return Suppression(
        path,
        s.line,
        s.col,
        s.end_col,
        s.scope,
        s.text,
        [known.get(r, r) for r in s.rules],
        s.reason,
        s.malformed,
    )
