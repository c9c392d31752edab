"""CTX001 suppression-hygiene: every `# ctxlint: ignore[...]` must earn its place.

A suppression silences findings of the named rules on its own line. One that
silences nothing (the code was fixed, or the rule id is wrong), or that gives
no reason, is reported, so suppressions cannot outlive what they excused.

The engine applies the suppressions to the other rules' findings first
(engine/suppress.py), recording what each silenced; this rule then judges
them (Rule.check_suppressions), so its own findings are never suppressed.
"""

from __future__ import annotations

from collections.abc import Iterator

from ctxlint.program.rule import RawFinding, Rule
from ctxlint.program.suppressions import Suppression, Suppressions

ID = "CTX001"
MALFORMED = "malformed suppression: write `# ctxlint: ignore[CTXnnn] reason`"


class SuppressionHygiene(Rule):
    id = ID
    name = "suppression-hygiene"
    summary = (
        "A `# ctxlint: ignore[...]` comment that is unused, malformed, names an unknown rule "
        "or has no reason"
    )

    def check_suppressions(self, suppressions: Suppressions) -> Iterator[RawFinding]:
        known, ran = suppressions.known, suppressions.ran
        for s in suppressions.comments:
            if s.malformed:
                yield _finding(s, MALFORMED)
                continue
            for rid in s.rules:
                if rid not in known:
                    yield _finding(s, f"suppression names unknown rule {suppressions.asked(rid)}")
                elif rid in ran and rid not in s.used:
                    yield _finding(s, f"unused suppression: no {rid} finding on this line")
            if not s.reason:
                yield _finding(s, "suppression without a reason: say why after the ]")


def _finding(s: Suppression, message: str) -> RawFinding:
    return RawFinding(
        ID,
        s.path,
        s.scope,  # the def or class its comment is in
        " ".join(s.text.split()),
        [s.line, s.col, s.line, s.end_col],
        message,
        key_scope="<module>",  # known by its file and text (fingerprints.to_findings)
    )


RULE = SuppressionHygiene()
