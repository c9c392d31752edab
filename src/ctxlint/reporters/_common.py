"""Small helpers shared by the reporters."""

from __future__ import annotations

from ctxlint.model import Result, RuleInfo


def rule_catalogue(result: Result) -> list[RuleInfo]:
    """The run's rules, plus a bare entry for any rule id that only appears in findings.

    A finding or stale entry whose rule is missing from `result.rules` (a retired rule
    still in the baseline, say) must still get a descriptor, e.g. a valid SARIF ruleIndex.
    """
    rules = list(result.rules)
    known = {r.id for r in rules}
    extra = {f.rule for f in result.findings} | {s.rule for s in result.stale}
    rules.extend(RuleInfo(id=r, name=r, summary="") for r in sorted(extra - known))
    return rules


def rule_title(rule: RuleInfo) -> str:
    """Title like `CTX101 seed-read` (or just the id when the name is unknown)."""
    return rule.id if rule.name in ("", rule.id) else f"{rule.id} {rule.name}"


def plural(n: int, word: str, plural_word: str | None = None) -> str:
    return f"{n} {word if n == 1 else (plural_word or word + 's')}"


UPDATE_HINT = "run `ctxlint baseline update`"
