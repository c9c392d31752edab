"""Each fixable rule's spec: a "Fix" section, and each bad example's fixed form
(a ```python fixed``` block right after it) is exactly what `ctxlint fix
--unsafe --select RULE` writes; a bad example without one is left as it is."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from fixrun import fix_project
from helpers import write
from specs import DEFAULT_FILE, Example, examples

from ctxlint.engine.registry import SPEC_DIR, load_rules
from ctxlint.report.spec_markdown import EXPECT

FIXABLE = [r for r in load_rules() if r.fixes]
BLOCK = re.compile(r"^```python (bad|good|fixed)[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
FILE = re.compile(r"^# file: (\S+)\s*$")


def fixed_forms(spec: Path) -> list[dict[str, str] | None]:
    """Per bad block, in order: its fixed form's files, or None when it has none."""
    out: list[dict[str, str] | None] = []
    for m in BLOCK.finditer(spec.read_text(encoding="utf-8")):
        if m.group(1) == "bad":
            out.append(None)
        elif m.group(1) == "fixed":
            assert out and out[-1] is None, f"{spec.name}: a fixed block must follow a bad one"
            files: dict[str, list[str]] = {}
            current = DEFAULT_FILE
            for line in m.group(2).splitlines():
                fm = FILE.match(line)
                if fm:
                    current = fm.group(1)
                    continue
                files.setdefault(current, []).append(line)
            out[-1] = {p: "\n".join(ls) + "\n" for p, ls in files.items()}
    return out


def unmarked(text: str) -> str:
    return "\n".join(
        EXPECT.sub("", line).rstrip() if EXPECT.search(line) else line for line in text.split("\n")
    )


CASES: list[tuple[Example, dict[str, str] | None]] = []
for rule in FIXABLE:
    spec = SPEC_DIR / f"{rule.id}.md"
    bad = [ex for ex in examples(spec) if ex.kind == "bad"]
    CASES.extend(zip(bad, fixed_forms(spec), strict=True))


def test_the_fixable_rules_are_those_the_fixers_cover() -> None:
    from ctxlint.fix_run import fixers

    every = fixers(load_rules())
    assert {r.id for r in FIXABLE} == set(every) == {"CTX101", "CTX102", "CTX401", "CTX602"}
    assert list(every) == ["CTX401", "CTX101", "CTX102", "CTX602"]  # a rename plans first
    assert all(every.values())  # each has its fixer
    kinds = {r.id: r.fixes for r in FIXABLE}
    assert kinds == {
        "CTX101": ("safe", "unsafe"),
        "CTX102": ("unsafe",),
        "CTX401": ("safe", "unsafe"),
        "CTX602": ("safe",),
    }


@pytest.mark.parametrize("rule", FIXABLE, ids=lambda r: r.id)
def test_a_fixable_rule_has_a_fix_section_and_fixed_forms(rule) -> None:
    text = (SPEC_DIR / f"{rule.id}.md").read_text(encoding="utf-8")
    assert "\n## Fix\n" in text
    for kind in rule.fixes:
        assert kind.capitalize() in text.split("\n## Fix\n")[1].split("\n## ")[0]
    assert any(forms for ex, forms in CASES if ex.rule == rule.id)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0].id)
def test_the_fixed_form_is_what_fix_writes(case, project: Path) -> None:
    example, fixed = case
    write(project, example.files)
    result = fix_project(project, {example.rule}, unsafe=True)
    got = {p: (project / p).read_text() for p in example.files}
    if fixed is None:
        assert not result.after, (
            f"{example.id} has no fixed form, but fix changed {sorted(result.after)}"
        )
        assert got == example.files
        return
    assert sorted(result.after) == sorted(fixed)
    for path, text in example.files.items():
        want = fixed.get(path)
        if want is None:
            assert got[path] == text  # not in the fixed form: untouched
        else:
            assert unmarked(got[path]) == want
    # idempotent: a second run finds nothing more to change
    assert not fix_project(project, {example.rule}, unsafe=True).after
