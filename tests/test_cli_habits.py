"""ruff's habits at the command line: PATHs anywhere among the options, bare
`ctxlint`, `rule` for `explain`, `clean`, and the quiet and JSON spellings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import cli, write

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
