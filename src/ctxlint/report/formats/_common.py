"""Small helpers shared by the reporters."""

from __future__ import annotations

import subprocess
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from ctxlint.core.findings import Result, RuleInfo


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


def update_hint(result: Result) -> str:
    return f"run `{result.update_command}`"


def moved_hint(result: Result) -> str:
    """The update that records a move: as typed from the working folder."""
    return f'`{result.update_command} --allow-growth --reason "moved"`'


PLAIN_UPDATE = "`ctxlint baseline update`"  # as the rules word their pin findings


def name_update_command(result: Result) -> None:
    """Pin findings say `ctxlint baseline update`: the engine words them (and
    caches them) wherever the run starts. The report names the command that
    reaches this project from the working folder, as every other hint does."""
    if f"`{result.update_command}`" == PLAIN_UPDATE:
        return
    named = f"`{result.update_command}`"
    result.findings = [
        replace(f, message=f.message.replace(PLAIN_UPDATE, named))
        if PLAIN_UPDATE in f.message
        else f
        for f in result.findings
    ]


def moved_findings(result: Result) -> int:
    """Stale entries matched one to one by a new finding of the same rule, scope
    and source: moved to another file (a rename), not fixed."""
    new = Counter((f.rule, f.scope, f.snippet) for f in result.new_findings)
    moved = 0
    for entry in result.stale:
        key = (entry.rule, entry.scope, entry.snippet)
        if entry.snippet and new[key]:
            new[key] -= 1
            moved += 1
    return moved


@dataclass(frozen=True)
class ReportBase:
    """Where CI formats anchor paths: annotations and code-scanning alerts resolve
    paths from the repository's root, not from the project root (SGLang's project
    lives in `python/`), so those formats prefix each project path."""

    folder: Path  # absolute: the git work tree's root, else the working folder
    prefix: str  # the project root below it, "" or ending in "/"

    def path(self, project_path: str) -> str:
        return self.prefix + project_path


def report_base(root: str) -> ReportBase:
    """The git root holding the project (else the working folder), if it holds it;
    otherwise the project root itself."""
    project = Path(root).resolve()
    folder = _git_toplevel(project) or Path.cwd().resolve()
    try:
        rel = project.relative_to(folder).as_posix()
    except ValueError:
        return ReportBase(project, "")
    return ReportBase(folder, "" if rel == "." else rel + "/")


def _git_toplevel(folder: Path) -> Path | None:
    if not folder.is_dir():
        return None
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError:  # no git: the working folder
        return None
    top = done.stdout.strip()
    return Path(top).resolve() if done.returncode == 0 and top else None
