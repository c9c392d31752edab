"""ruff's habits at the command line: PATHs anywhere among the options, bare
`ctxlint`, `rule` for `explain`, `clean`, and the quiet and JSON spellings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import run_cli
from helpers import cli, write

from ctxlint.engine.registry import load_rules

READ = "from specrt.context import get_server_args\n\n\ndef f() -> int:\n    return get_server_args().tp_size\n"


@pytest.fixture
def two_files(project: Path) -> Path:
    """One CTX101 in app/a.py and one in app/b.py."""
    write(project, {"app/a.py": READ, "app/b.py": READ})
    return project


def _paths(res: object) -> list[str]:
    return sorted(f["path"] for f in json.loads(res.stdout)["findings"])  # type: ignore[attr-defined]


def test_paths_after_options_are_taken_as_ruff_takes_them(two_files: Path) -> None:
    """`check --select CTX101 app/a.py` and PATHs split around the options
    report what `check app/a.py --select CTX101` reports."""
    before = cli("check", "app/a.py", "--select", "CTX101", "--format", "json", cwd=two_files)
    assert before.returncode == 1, before.stderr
    assert _paths(before) == ["app/a.py"]
    after = cli("check", "--select", "CTX101", "--format", "json", "app/a.py", cwd=two_files)
    assert (after.returncode, _paths(after)) == (1, ["app/a.py"]), after.stderr
    split = cli(
        "check", "app/a.py", "--select", "CTX101", "app/b.py", "--format", "json", cwd=two_files
    )
    assert (split.returncode, _paths(split)) == (1, ["app/a.py", "app/b.py"]), split.stderr


def test_paths_after_options_with_config_take_the_first_as_the_tree(two_files: Path) -> None:
    """With --config, the first PATH is the tree wherever it stands."""
    res = cli(
        "check", "--config", "pyproject.toml", "--select", "CTX101", ".", "--format", "json",
        "app/b.py", cwd=two_files,
    )  # fmt: skip
    assert (res.returncode, _paths(res)) == (1, ["app/b.py"]), res.stderr


def test_an_unknown_option_is_still_refused(two_files: Path) -> None:
    res = cli("check", "app/a.py", "--bogus", cwd=two_files)
    assert res.returncode == 2
    assert "unrecognized arguments: --bogus" in res.stderr


def test_baseline_show_takes_format_json(two_files: Path) -> None:
    upd = cli("baseline", "update", "--allow-growth", "--reason", "r", cwd=two_files)
    assert upd.returncode == 0, upd.stderr
    res = cli("baseline", "show", "--format", "json", cwd=two_files)
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["total"] == len(doc["entries"]) >= 2
    assert doc["per_rule"]["CTX101"] == 2
    assert {e["path"] for e in doc["entries"] if e["rule"] == "CTX101"} == {"app/a.py", "app/b.py"}
    text = cli("baseline", "show", cwd=two_files)
    assert text.stdout.startswith(f"{doc['total']} baseline entries")


def test_quiet_passing_run_prints_no_stale_entries(two_files: Path) -> None:
    """-q prints what fails the run: stale entries without --strict do not."""
    assert (
        cli("baseline", "update", "--allow-growth", "--reason", "r", cwd=two_files).returncode == 0
    )
    (two_files / "app" / "a.py").write_text("X = 1\n")
    for fmt in ("text", "concise"):
        quiet = cli("check", "-q", "--format", fmt, cwd=two_files)
        assert (quiet.returncode, quiet.stdout, quiet.stderr) == (0, "", ""), fmt
        loud = cli("check", "--format", fmt, cwd=two_files)
        assert "app/a.py" in loud.stdout, fmt  # the entry is still reported without -q
        strict = cli("check", "-q", "--strict", "--format", fmt, cwd=two_files)
        assert strict.returncode == 1 and "app/a.py" in strict.stdout, fmt


def test_wrapped_messages_keep_their_indent_at_80_columns(
    two_files: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    res = cli("check", "--select", "CTX101", "app/a.py", cwd=two_files)
    lines = res.stdout.splitlines()
    start = next(i for i, x in enumerate(lines) if "CTX101 seed-read  NEW" in x) + 1
    message = lines[start : next(i for i in range(start, len(lines)) if "in f" in lines[i]) + 1]
    assert len(message) > 2, lines  # the message wrapped
    assert all(x.startswith("    ") and len(x) <= 80 for x in message), message


def test_closing_line_counts_every_rule_and_names_a_few(two_files: Path) -> None:
    every = cli("check", "-q", "--exit-zero", cwd=two_files)
    closing = cli("check", "--exit-zero", cwd=two_files).stdout.splitlines()[-1]
    ids = [r.id for r in load_rules()]
    assert ids[-1] not in closing and f" {len(ids)} rules," in closing, closing
    assert every.returncode == 0
    few = cli("check", "--select", "CTX1", "--exit-zero", cwd=two_files).stdout.splitlines()[-1]
    assert "5 rules (CTX101 CTX102 CTX103 CTX104 CTX105)" in few, few


def test_bare_ctxlint_prints_the_help_as_ruff_does() -> None:
    """No command: the help on stderr and exit 2 (ruff's usage-error exit), not an error line."""
    res = run_cli()
    assert res.returncode == 2
    assert res.stdout == ""
    assert res.stderr.startswith("usage: ctxlint") and "check the tree against" in res.stderr
    assert "error" not in res.stderr


def test_rule_is_an_alias_of_explain(project: Path) -> None:
    by_explain = cli("explain", "CTX101", cwd=project)
    by_rule = cli("rule", "CTX101", cwd=project)
    assert (by_rule.returncode, by_rule.stdout) == (0, by_explain.stdout)
    assert "CTX101 seed-read" in by_rule.stdout


def test_explain_an_unknown_id_names_the_rules(project: Path) -> None:
    res = cli("explain", "CTX999", cwd=project)
    assert res.returncode == 2
    ids = [r.id for r in load_rules()]
    assert res.stderr == (
        f"ctxlint: error: unknown rule 'CTX999' (the rules are {', '.join(ids)}; "
        "`ctxlint rules` names them)\n"
    )
    near = cli("explain", "CTX106", cwd=project)  # a near miss still gets one suggestion
    assert "did you mean 'CTX10" in near.stderr


def test_clean_removes_the_cache_folder(project: Path) -> None:
    write(project, {"app/a.py": READ})
    assert cli("check", "--exit-zero", cwd=project).returncode == 0
    cache = project / ".ctxlint_cache"
    assert (cache / "facts.sqlite").is_file()
    res = cli("clean", cwd=project)
    assert (res.returncode, res.stdout) == (0, "removed the cache .ctxlint_cache\n"), res.stderr
    assert not cache.exists()
    assert (project / "app" / "a.py").read_text() == READ
    again = cli("clean", cwd=project)
    assert (again.returncode, again.stdout) == (0, "no cache at .ctxlint_cache\n")


def test_clean_touches_only_the_files_the_cache_wrote(project: Path, tmp_path: Path) -> None:
    """A --cache-dir that holds other files (the project's own .gitignore, a
    source file, a link named like the database) keeps them: only the cache's
    own files go, and nothing outside the folder."""
    outside = tmp_path / "precious.sqlite"
    outside.write_text("keep")
    shared = project / "shared"
    shared.mkdir()
    (shared / "notes.txt").write_text("keep")
    (shared / ".gitignore").write_text("*.log\n")
    assert cli("check", "--cache-dir", "shared", "--exit-zero", cwd=project).returncode == 0
    assert (shared / "facts.sqlite").is_file()
    res = cli("clean", "--cache-dir", "shared", cwd=project)
    assert res.returncode == 0, res.stderr
    assert "the folder stays: it holds .gitignore, notes.txt" in res.stdout
    assert sorted(p.name for p in shared.iterdir()) == [".gitignore", "notes.txt"]
    (shared / "facts.sqlite").symlink_to(outside)
    assert cli("clean", "--cache-dir", "shared", cwd=project).returncode == 0
    assert (shared / "facts.sqlite").is_symlink() and outside.read_text() == "keep"


EXCEPT_STAR = "def f():\n    try:\n        pass\n    except* ValueError:\n        pass\n"


def test_syntax_newer_than_the_target_names_the_version_it_needs(project: Path) -> None:
    write(project, {"app/eg.py": EXCEPT_STAR, "app/alias.py": "type Size = int\n"})
    res = cli("check", "--format", "concise", "-q", cwd=project)
    assert res.returncode == 2
    errors = dict(line.split(": error: ", 1) for line in res.stdout.splitlines())
    assert "needs Python 3.11, target-version is py310 (" in errors["app/eg.py"], errors
    assert "needs Python 3.12, target-version is py310 (" in errors["app/alias.py"], errors
    assert "--target-version py311" in errors["app/eg.py"]
    # a plain syntax error gets no such hint
    write(project, {"app/eg.py": "def (:\n", "app/alias.py": "X = 1\n"})
    plain = cli("check", "--format", "concise", "-q", cwd=project).stdout
    assert "needs Python" not in plain and "app/eg.py: error: syntax error" in plain


def test_target_version_on_the_command_line(project: Path) -> None:
    write(project, {"app/eg.py": EXCEPT_STAR})
    assert cli("check", cwd=project).returncode == 2
    res = cli("check", "--target-version", "py311", cwd=project)
    assert res.returncode == 0, res.stdout + res.stderr
    shown = cli("show-settings", "--target-version", "py311", "--format", "json", cwd=project)
    assert json.loads(shown.stdout)["target-version"] == "py311"
    old = cli("check", "--target-version", "py39", cwd=project)
    assert old.returncode == 2 and "invalid choice: 'py39'" in old.stderr
