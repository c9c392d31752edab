"""`[tool.ctxlint]` loading: every bad configuration is exit 2 with one line on
stderr (a did-you-mean where a name is misspelt) and never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import FIXTURE, run_cli
from helpers import cli, run_engine, write

from ctxlint.engine.registry import load_rules

FIXTURE_CONFIG = FIXTURE / "pyproject.toml"

BASE = 'runtime-module = "specrt.context"\nrecord-class = "specrt.record.ServerArgs"\n'

CASES = {
    "unknown-key": (BASE + 'baselin = "b.json"\n', "unknown config key 'baselin'", "'baseline'"),
    "unknown-rule-in-select": (BASE + 'select = ["CTX1O1"]\n', "CTX1O1", "'CTX101'"),
    "unknown-rule-in-ignore": (BASE + 'ignore = ["CTX999"]\n', "unknown rule 'CTX999'", ""),
    "unknown-rule-in-per-rule-exclude": (
        BASE + 'per-rule-exclude = {CTX2O1 = ["a/**"]}\n',
        "unknown rule 'CTX2O1' in per-rule-exclude",
        "'CTX201'",
    ),
    "per-rule-exclude-not-a-list": (
        BASE + 'per-rule-exclude = {CTX201 = "a/**"}\n',
        "per-rule-exclude.CTX201 must be a list",
        "",
    ),
    "missing-runtime-module": (
        'record-class = "specrt.record.ServerArgs"\n',
        "'runtime-module' is required",
        "",
    ),
    "missing-record-class": (
        'runtime-module = "specrt.context"\n',
        "'record-class' is required",
        "",
    ),
    "unqualified-record-class": (
        'runtime-module = "specrt.context"\nrecord-class = "ServerArgs"\n',
        "qualified name",
        "",
    ),
    "runtime-module-not-found": (
        'runtime-module = "specrt.nope"\nrecord-class = "specrt.record.ServerArgs"\n',
        "runtime-module 'specrt.nope': no module 'specrt.nope' under the src roots (.)",
        "'specrt.context'",
    ),
    "record-module-not-found": (
        'runtime-module = "specrt.context"\nrecord-class = "nowhere.record.ServerArgs"\n',
        "record-class 'nowhere.record.ServerArgs': no module 'nowhere.record' under the src "
        "roots (.)",
        "",
    ),
    "record-class-not-found": (
        'runtime-module = "specrt.context"\nrecord-class = "specrt.record.Nope"\n',
        "no class Nope in specrt.record",
        "",
    ),
    "record-class-without-fields": (
        'runtime-module = "specrt.context"\nrecord-class = "specrt.context.RuntimeContext"\n',
        "found no fields",
        "",
    ),
    "wrong-type": (BASE + 'src = "specrt"\n', "config key 'src' must be a list", ""),
    "src-root-missing": (BASE + 'src = ["nope"]\n', "src root 'nope' is not a folder", ""),
    # Values of the wrong shape inside a well-typed key (issue 11, D10): config
    # errors naming the key, never "internal error".
    "src-item-not-a-string": (
        BASE + 'src = ["specrt", 3]\n',
        "config key 'src' must be a list of strings (item 2 is 3)",
        "",
    ),
    "exclude-item-not-a-string": (
        BASE + "exclude = [1]\n",
        "config key 'exclude' must be a list of strings (item 1 is 1)",
        "",
    ),
    "exclude-invalid-pattern": (BASE + 'exclude = ["!"]\n', "config key 'exclude':", ""),
    "per-rule-exclude-invalid-pattern": (
        BASE + 'per-rule-exclude = {CTX201 = ["a\\\\"]}\n',
        "config key 'per-rule-exclude.CTX201':",
        "",
    ),
    "nul-in-cache-dir": (BASE + 'cache-dir = "a\\u0000b"\n', "'cache-dir' holds a NUL", ""),
    "nul-in-baseline": (BASE + 'baseline = "a\\u0000b"\n', "'baseline' holds a NUL", ""),
    "runtime-module-not-a-dotted-name": (
        'runtime-module = "specrt/context.py"\nrecord-class = "specrt.record.ServerArgs"\n',
        "'runtime-module' must be a dotted Python name",
        "",
    ),
    # What a checked tree's config names for ctxlint to write stays inside the
    # project (issue 11, D17); the command line may point anywhere.
    "baseline-outside-the-project": (
        BASE + 'baseline = "../../outside.json"\n',
        "config key 'baseline' = '../../outside.json' points outside the project",
        "",
    ),
    "baseline-absolute": (
        BASE + 'baseline = "/tmp/ctxlint-baseline.json"\n',
        "config key 'baseline' must be a path inside the project",
        "",
    ),
    "cache-dir-outside-the-project": (
        BASE + 'cache-dir = "../../x"\n',
        "config key 'cache-dir' = '../../x' points outside the project",
        "",
    ),
    "cache-dir-absolute": (
        BASE + 'cache-dir = "/tmp/ctxlint-cache"\n',
        "config key 'cache-dir' must be a path inside the project",
        "",
    ),
    "cache-dir-is-the-project": (
        BASE + 'cache-dir = "."\n',
        "'cache-dir' must name a folder of its own",
        "",
    ),
}


def _set_table(project: Path, table: str) -> None:
    (project / "pyproject.toml").write_text("[tool.ctxlint]\n" + table)


def _one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("ctxlint: error: "), stderr
    assert "Traceback" not in stderr and "internal error" not in stderr
    return lines[0]


@pytest.mark.parametrize(("table", "message", "hint"), CASES.values(), ids=CASES.keys())
def test_bad_config_is_one_line_exit_2(project: Path, table: str, message: str, hint: str) -> None:
    """Each broken config fails before any output, with the reason on one line."""
    _set_table(project, table)
    res = cli("check", "--no-cache", cwd=project)
    assert res.returncode == 2
    assert res.stdout == ""
    line = _one_error_line(res.stderr)
    assert message in line
    if hint:
        assert f"did you mean {hint}" in line


def test_bad_config_in_a_real_process_has_no_traceback(project: Path) -> None:
    """The installed command prints one line too (checked in a subprocess)."""
    _set_table(project, BASE + "src = 3\n")
    res = run_cli("check", cwd=project)
    assert res.returncode == 2
    assert "config key 'src' must be a list" in _one_error_line(res.stderr)
    assert "Traceback" not in res.stdout


def test_invalid_toml(project: Path) -> None:
    """A TOML syntax error names the file."""
    (project / "pyproject.toml").write_text("[tool.ctxlint\n")
    res = cli("check", cwd=project)
    assert res.returncode == 2
    assert "invalid TOML in" in _one_error_line(res.stderr)


def test_missing_config(tmp_path: Path) -> None:
    """No [tool.ctxlint] anywhere up the tree: say how to add one."""
    (tmp_path / "pyproject.toml").write_text("[tool.other]\nx = 1\n")
    res = cli("check", cwd=tmp_path)
    assert res.returncode == 2
    line = _one_error_line(res.stderr)
    assert "no ctxlint configuration found" in line and "--config" in line


def test_missing_config_file_given(project: Path) -> None:
    """--config naming a file that does not exist."""
    res = cli("check", "--config", "nope.toml", cwd=project)
    assert res.returncode == 2
    assert "config file nope.toml not found" in _one_error_line(res.stderr)


def test_unknown_rule_on_the_command_line(project: Path) -> None:
    """--select / --ignore with a misspelt id: did-you-mean."""
    for opt in ("--select", "--ignore"):
        res = cli("check", opt, "CTX1O1", cwd=project)
        assert res.returncode == 2
        assert "did you mean 'CTX101'" in _one_error_line(res.stderr)


def test_corrupt_baseline_is_one_line(project: Path) -> None:
    """A baseline that is not valid JSON is a clear error, not a crash."""
    (project / "ctxlint-baseline.json").write_text('{"schema": 1, "entries": [')
    res = cli("check", "--no-cache", cwd=project)
    assert res.returncode == 2
    assert "invalid JSON" in _one_error_line(res.stderr)
    res = cli("baseline", "update", "--no-cache", cwd=project)
    assert res.returncode == 2
    assert "invalid JSON" in _one_error_line(res.stderr)


def test_config_for_a_tree_it_does_not_live_in(project: Path, tmp_path: Path) -> None:
    """`--config FILE PATH` checks PATH (an unpacked wheel) with FILE's settings,
    paths relative to PATH, baseline beside FILE."""
    write(
        project,
        {"app/m.py": "from specrt.context import get_server_args\nX = get_server_args().tp_size\n"},
    )
    cfg = tmp_path / "ctxlint.toml"
    cfg.write_text(BASE + 'baseline = "pinned.json"\n')
    (project / "pyproject.toml").unlink()
    res = cli("check", "--config", str(cfg), str(project), "--format", "json", cwd=tmp_path)
    assert res.returncode == 1, res.stderr
    assert '"path": "app/m.py"' in res.stdout
    res = cli(
        "baseline",
        "update",
        "--config",
        str(cfg),
        str(project),
        "--allow-growth",
        "--reason",
        "wheel",
        cwd=tmp_path,
    )
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "pinned.json").is_file()


def test_rule_options_are_accepted_keys(project: Path) -> None:
    """Keys declared by a rule's `options` load into config.options (not unknown)."""
    options = {k: v for r in load_rules() for k, v in r.options.items()}
    simple = {k: v for k, v in options.items() if isinstance(v, (list, str, bool, int))}
    if not simple:
        pytest.skip("no rule declares a simple option yet")
    key = sorted(simple)[0]
    (project / "pyproject.toml").write_text(
        "[tool.ctxlint]\n" + BASE + f"{key} = {json.dumps(simple[key])}\n"
    )
    assert run_engine(project).program.config.options == {key: simple[key]}


@pytest.mark.parametrize("name", ["ctxlint.toml", "pyproject.toml"])
def test_a_config_that_is_not_utf8_is_a_config_error(project: Path, name: str) -> None:
    """Issue 34 N4: a latin-1 config was an internal error, not a config error."""
    (project / "pyproject.toml").unlink()
    text = (FIXTURE_CONFIG.read_text() + "# caf\xe9\n").encode("latin-1")
    (project / name).write_bytes(text)
    res = run_cli("check", cwd=project)
    assert res.returncode == 2
    line = text[: text.index(b"\xe9")].count(b"\n") + 1
    assert res.stderr == (
        f"ctxlint: error: invalid TOML in {name}: not UTF-8 (byte 0xe9 on line {line})\n"
    )  # named as it opens from the working folder, as every config error names it
    above = run_cli("check", "proj", cwd=project.parent)
    assert f"invalid TOML in proj/{name}: not UTF-8" in above.stderr, above.stderr
