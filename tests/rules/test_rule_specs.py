"""Every rule has a spec, and every example in it does what it says."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from helpers import run_engine, write
from specs import examples

from ctxlint.engine.registry import SPEC_DIR, load_rules

RULES = load_rules()
# a missing spec fails test_every_rule_has_a_spec..., not the collection
ALL_EXAMPLES = [
    ex
    for r in RULES
    if (SPEC_DIR / f"{r.id}.md").is_file()
    for ex in examples(SPEC_DIR / f"{r.id}.md")
]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_every_rule_has_a_spec_with_bad_and_good_examples(rule) -> None:
    spec = SPEC_DIR / f"{rule.id}.md"
    assert spec.is_file(), f"{rule.id} has no spec at rules/{rule.id}.md"
    kinds = Counter(ex.kind for ex in examples(spec))
    assert kinds["bad"] >= 1 and kinds["good"] >= 1
    text = spec.read_text()
    for heading in ("## What it protects", "## Why", "## How to fix"):
        assert heading in text, f"rules/{rule.id}.md lacks {heading!r}"


@pytest.mark.parametrize("example", ALL_EXAMPLES, ids=lambda e: e.id)
def test_spec_example(example, project: Path) -> None:
    write(project, example.files)
    out = run_engine(project)
    assert not out.errors, out.errors
    got = Counter((f.path, f.line, f.rule) for f in out.findings if f.rule == example.rule)
    if example.kind == "bad":
        assert example.expected, f"{example.id}: a bad example must mark its findings"
        assert got == Counter(e for e in example.expected if e[2] == example.rule)
    else:
        assert not got, f"{example.id}: a good example produced {sorted(got)}"
