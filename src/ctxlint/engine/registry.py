"""The rule registry: every rule module in `ctxlint.rules`, and each rule's spec."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from ctxlint.facts.visitor import FileVisitor
from ctxlint.program.parts import visitors_for
from ctxlint.program.rule import Rule

# The specs live at rules/ in the repository; a built package carries a copy
# beside the rule modules (setup.py), which is where an installed ctxlint reads them.
PACKAGED_SPEC_DIR = Path(__file__).resolve().parents[1] / "rules"
SPEC_DIR = Path(__file__).resolve().parents[3] / "rules"


def load_rules() -> list[Rule]:
    """Every rule module in ctxlint.rules, ordered by id."""
    from ctxlint import rules as package

    found: list[Rule] = []
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        rule = getattr(module, "RULE", None)
        if isinstance(rule, Rule):
            found.append(rule)
    return sorted(found, key=lambda r: r.id)


def spec_path(rule_id: str) -> Path:
    """The rule's spec: the installed package's copy, else the source tree's."""
    packaged = PACKAGED_SPEC_DIR / f"{rule_id}.md"
    return packaged if packaged.is_file() else SPEC_DIR / f"{rule_id}.md"


def file_visitors(rules: list[Rule]) -> list[tuple[str, type[FileVisitor]]]:
    """What one file's traversal runs: the program parts these rules require,
    then each rule's own visitor, as (facts key, visitor class)."""
    return visitors_for(rules) + [(r.id, r.visitor) for r in rules if r.visitor is not None]
