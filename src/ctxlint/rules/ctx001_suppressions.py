"""CTX001 suppression-hygiene: every `# ctxlint: ignore[...]` must earn its place.

A suppression silences findings of the named rules on its own line. One that
silences nothing (the code was fixed, or the rule id is wrong), or that gives
no reason, is reported, so suppressions cannot outlive what they excused.
"""

from __future__ import annotations

from ctxlint.program.rule import Rule

ID = "CTX001"


class SuppressionHygiene(Rule):
    id = ID
    name = "suppression-hygiene"
    summary = (
        "A `# ctxlint: ignore[...]` comment that is unused, malformed, names an unknown rule "
        "or has no reason"
    )


RULE = SuppressionHygiene()
