"""The whole-program phase of a run: every runnable rule derives its sets (the
cache does not depend on the selection), the selected ones check, each less
its per-rule excludes; then the suppressions are applied and judged (CTX001),
and the findings fingerprinted."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from ctxlint.config.settings import Config
from ctxlint.core.findings import Finding
from ctxlint.discover.files import path_matcher
from ctxlint.engine.fingerprints import to_findings
from ctxlint.engine.registry import load_rules
from ctxlint.engine.suppress import apply_suppressions
from ctxlint.facts.vocab import Vocabulary
from ctxlint.program.core import Program
from ctxlint.program.rule import RawFinding, Rule

Timed = Callable[[str, float], None]  # (timing name, its start): the run's clock


def derive(program: Program, runnable: list[Rule], timed: Timed) -> None:
    """Each rule's derived sets, in program.sets[rule.id]."""
    t = time.perf_counter()
    for rule in runnable:
        one = time.perf_counter()
        program.sets[rule.id] = rule.derive(program)
        timed(f"rule {rule.id} derive", one)
    timed("derive", t)


def check(
    program: Program, runnable: list[Rule], selected: set[str], config: Config, timed: Timed
) -> list[Finding]:
    """The selected rules' findings, less what the suppressions silence, plus
    what the suppressions themselves are worth, fingerprinted."""
    raw: list[RawFinding] = []
    for rule in runnable:
        if rule.id in selected:
            raw.extend(rule_findings(program, rule, config, timed))
    return judged(program, raw, runnable, selected)


def rule_findings(program: Program, rule: Rule, config: Config, timed: Timed) -> list[RawFinding]:
    """One rule's raw findings, less its per-rule excludes."""
    t = time.perf_counter()
    found = list(rule.check(program))
    excluded = config.per_rule_exclude.get(rule.id)
    if excluded:
        spec = path_matcher(excluded)
        found = [f for f in found if not spec.match_file(f.path)]
    timed(f"rule {rule.id} check", t)
    return found


def judged(
    program: Program, raw: list[RawFinding], runnable: list[Rule], selected: set[str]
) -> list[Finding]:
    """The selected rules' raw findings less what the suppressions silence, plus
    what the suppressions themselves are worth (CTX001), fingerprinted."""
    ran = {r.id for r in runnable} & selected
    every = load_rules()
    known = {r.id: r.id for r in every} | {r.name.upper(): r.id for r in every}
    raw, suppressions = apply_suppressions(raw, program, ran, known)
    for rule in runnable:  # (CTX001)
        if rule.id in selected:
            raw.extend(rule.check_suppressions(suppressions))
    return to_findings(raw)


def pins(program: Program, runnable: list[Rule], selected: set[str]) -> dict[str, dict[str, Any]]:
    """Each selected rule's pinned facts (Rule.pins), for the rules that pin any."""
    found = {r.id: r.pins(program) for r in runnable if r.id in selected}
    return {k: v for k, v in found.items() if v}


def disabled(rules: list[Rule], selected: set[str], vocab: Vocabulary) -> dict[str, str]:
    """Each selected rule this codebase cannot run, with why (Rule.needs)."""
    return {r.id: why for r in rules if r.id in selected and (why := r.disabled_because(vocab))}
