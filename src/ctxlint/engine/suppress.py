"""Applying `# ctxlint: ignore[...]` comments to a run's findings: a finding on
a suppression's line (its first or last) of a rule the comment names is
dropped, and the comment records that it was used. Judging the comments
themselves is CTX001's (rules/ctx001_suppressions.py, Rule.check_suppressions).
"""

from __future__ import annotations

from ctxlint.program.core import Program
from ctxlint.program.rule import RawFinding
from ctxlint.program.suppressions import Suppression, Suppressions


def apply_suppressions(
    raw: list[RawFinding], program: Program, ran: set[str], known: dict[str, str]
) -> tuple[list[RawFinding], Suppressions]:
    """The findings no suppression silences, and the suppressions with what
    each silenced. `ran` are the rules whose checks ran; `known` maps every
    rule's id and its name, upper-cased (`SEED-READ`), to its id. (A finding
    about a suppression is made after this, so none silences another.)"""
    suppressions = Suppressions.of(program, ran, known)
    by_line: dict[tuple[str, int], list[Suppression]] = {}
    for s in suppressions.comments:
        by_line.setdefault((s.path, s.line), []).append(s)
    if not by_line:
        return raw, suppressions
    kept: list[RawFinding] = []
    for f in raw:
        hit = None
        for line in {f.span[0], f.span[2]}:
            for s in by_line.get((f.path, line), ()):
                if f.rule in s.rules:
                    hit = s
        if hit is None:
            kept.append(f)
        else:
            hit.used.add(f.rule)
    return kept, suppressions
