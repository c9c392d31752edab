"""Issue 18's integration items as a user meets them: ruff as a dependency,
paths in CI formats, the pytest plugin's tree root, configs found from a path,
`explain`'s labelled examples."""

from __future__ import annotations

import sys
from pathlib import Path

from helpers import cli, write

from ctxlint.rules import ctx401_accessor_binding as ctx401

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]

TWICE = "from specrt.context import get_model\nfrom specrt.context import get_model\n"


# -- item 12: ruff is the linter's dependency; without it CTX401 says it is partial
def test_ruff_is_a_dependency_of_the_linter_not_only_of_dev() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    names = {d.split(">")[0].split("=")[0].split(";")[0].strip() for d in project["dependencies"]}
    assert "ruff" in names


def test_without_ruff_ctx401_is_reported_partial_on_every_run(project: Path, monkeypatch) -> None:
    write(project, {"app/m.py": TWICE})
    monkeypatch.setattr(ctx401, "_ruff_command", lambda: None)
    warning = "ctxlint: warning: CTX401 accessor-binding is partial: ruff F811"
    for extra in (["--no-cache"], [], [], ["--format", "json"]):  # cold, stored, replayed, json
        out = cli("check", *extra, cwd=project)
        assert out.stderr.count(warning) == 1, out.stderr
    # CTX401 not selected: nothing to say
    assert "partial" not in cli("check", "--select", "CTX101", cwd=project).stderr


def test_with_ruff_ctx401_is_complete_and_says_nothing(project: Path) -> None:
    write(project, {"app/m.py": TWICE})
    out = cli("check", "--no-cache", cwd=project)
    assert "partial" not in out.stderr
    assert "ruff F811" in out.stdout


# -- item 16: `explain` says which example is bad and which good, and what specrt is
def test_explain_labels_every_example_and_says_what_specrt_is(tmp_path: Path) -> None:
    from ctxlint.specs import examples

    for rid in ("CTX101", "CTX202", "CTX601"):
        blocks = examples(REPO / "rules" / f"{rid}.md")
        kinds = [e.kind for e in blocks]
        out = cli("explain", rid, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        text = " ".join(out.stdout.split())  # rich wraps at the console width
        for kind in ("bad", "good"):
            n = kinds.count(kind)
            labels = [f"{kind.upper()} example {i} of {n}" for i in range(1, n + 1)]
            assert [label for label in labels if label in text] == labels
            assert f"{kind.upper()} example {n + 1} " not in text
        assert text.count("The examples import specrt, the small fixture runtime") == 1
        assert "ctxlint reports nothing here" in text or "good" not in kinds
        first_bad = next(e for e in blocks if e.kind == "bad")
        marks = len(first_bad.expected)
        assert f"BAD example 1 of {kinds.count('bad')}: ctxlint reports {marks} finding" in text
