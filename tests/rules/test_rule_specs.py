"""Every rule has a spec, and every example in it does what it says; and every
finding's message, on the examples and the repository's own trees, says what and
why in at most MAX_MESSAGE characters (issue 36: the path, the alternatives and
the long explanation go to the finding's details)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from helpers import run_engine, write
from specs import examples

from ctxlint.engine.registry import SPEC_DIR, load_rules

RULES = load_rules()
REPO = Path(__file__).resolve().parents[2]
MAX_MESSAGE = 200
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
    long = [(f.rule, f.message) for f in out.findings if len(f.message) > MAX_MESSAGE]
    assert not long, long
    got = Counter((f.path, f.line, f.rule) for f in out.findings if f.rule == example.rule)
    if example.kind == "bad":
        assert example.expected, f"{example.id}: a bad example must mark its findings"
        assert got == Counter(e for e in example.expected if e[2] == example.rule)
    else:
        assert not got, f"{example.id}: a good example produced {sorted(got)}"


@pytest.mark.parametrize("tree", ["examples/legacy_app", "."])
def test_messages_on_the_local_trees_say_what_and_why_briefly(tree: str) -> None:
    """The legacy app (every rule's debt) and the repository (ctxrt and the serving
    app): no message exceeds MAX_MESSAGE (the rest goes to the details)."""
    out = run_engine(REPO / tree)
    assert out.findings or tree == ".", "the legacy app must yield findings to measure"
    long = sorted(
        (f.rule, len(f.message), f.message) for f in out.findings if len(f.message) > MAX_MESSAGE
    )
    assert not long, long
