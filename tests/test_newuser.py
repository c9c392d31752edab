"""What a new user meets first, where the rest of the suite did not look: a
project kept in a subfolder of its git repository (pre-commit and CI start at
the repository's root), text paths seen from the working folder, the baseline
workflow from outside the project, moved findings, odd files."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import cli, write

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "specrt"

SEED_READ = """\
from specrt.context import get_server_args


def world() -> int:
    return get_server_args().tp_size
"""

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=True)


@pytest.fixture
def nested(tmp_path: Path) -> Path:
    """A git repository whose ctxlint project lives in services/server/."""
    repo = tmp_path / "repo"
    server = repo / "services" / "server"
    shutil.copytree(FIXTURE, server, ignore=shutil.ignore_patterns("__pycache__"))
    write(server, {"app/__init__.py": "", "app/stats.py": "X = 1\n"})
    (repo / "tool.py").write_text("print('not the project')\n")
    _git(repo, "init", "--quiet")
    _git(repo, "add", ".")
    return repo


def test_no_config_above_names_the_project_below_and_the_hook_args(nested: Path) -> None:
    out = cli("check", cwd=nested)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1, out.stderr
    assert "services/server/pyproject.toml has one" in out.stderr
    assert "`ctxlint check services/server`" in out.stderr
    assert "`args: [services/server]`" in out.stderr
    # from a folder between: the PATH is typed from there, the hook's args stay
    # relative to the repository's root (where pre-commit runs hooks)
    out = cli("check", cwd=nested / "services")
    assert "`ctxlint check server`" in out.stderr
    assert "`args: [services/server]`" in out.stderr
    # the command named is the one that was run
    out = cli("baseline", "update", cwd=nested)
    assert out.returncode == 2
    assert "`ctxlint baseline update services/server`" in out.stderr, out.stderr
    # what the message says works
    assert cli("check", "services/server", cwd=nested).returncode == 0


def test_a_config_not_yet_committed_is_named_below_an_ignored_one_is_not(tmp_path: Path) -> None:
    """A project set up before its first commit (hwalk): its config is found below
    as a tracked one is; one in an ignored folder (a vendored copy) is not."""
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo / "services" / "server")
    _git(repo, "init", "--quiet")  # nothing added
    out = cli("check", cwd=repo)
    assert out.returncode == 2
    assert "services/server/pyproject.toml has one" in out.stderr, out.stderr
    assert "`args: [services/server]`" in out.stderr
    (repo / ".gitignore").write_text("services/\n")
    out = cli("check", cwd=repo)
    assert out.returncode == 2 and "below it" not in out.stderr, out.stderr


def test_the_daemon_command_is_named_as_typed(nested: Path) -> None:
    out = cli("server", "--daemon", "status", cwd=nested)
    assert out.returncode == 2
    assert "`ctxlint server --daemon status services/server`" in out.stderr, out.stderr


def test_a_usage_error_is_one_line_as_every_error(project: Path) -> None:
    """argparse printed its whole usage above the error (hwalk): the README says
    errors are one line on stderr."""
    out = cli("check", "--jobs", "abc", cwd=project)
    assert out.returncode == 2
    assert out.stderr == (
        "ctxlint check: error: argument --jobs/-j: invalid int value: 'abc' "
        "(`ctxlint check --help` lists the options)\n"
    )
    out = cli("baseline", cwd=project)
    assert out.returncode == 2 and out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.startswith("ctxlint baseline: error: the following arguments are required")


def test_a_baseline_outside_names_the_project_root_not_the_configs_folder(
    tmp_path: Path,
) -> None:
    root = tmp_path / "proj"
    shutil.copytree(FIXTURE, root)
    table = (FIXTURE / "pyproject.toml").read_text().split("\n", 1)[1]
    write(
        root,
        {"tools/ctxlint.toml": "[tool.ctxlint]\nroot = '..'\nbaseline = '../../b.json'\n" + table},
    )
    _git(root, "init", "--quiet")
    out = cli("check", "tools", cwd=root)
    assert out.returncode == 2
    assert f"points outside the project {root.resolve()} (give --baseline" in out.stderr, out.stderr


def test_no_config_anywhere_says_only_how_to_add_one(tmp_path: Path) -> None:
    out = cli("check", cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr == (
        f"ctxlint: error: no ctxlint configuration found in {tmp_path.resolve()} or above: "
        "add a [tool.ctxlint] table to pyproject.toml or pass --config FILE\n"
    )


def test_text_paths_are_seen_from_the_working_folder_as_concise_ones(nested: Path) -> None:
    server = nested / "services" / "server"
    write(server, {"app/stats.py": SEED_READ, "app/broken.py": "def broken(:\n"})
    out = cli("check", "services/server", cwd=nested)
    assert out.returncode == 2
    assert "services/server/app/stats.py  (1 new finding)\n" in out.stdout
    assert "  services/server/app/stats.py:5:12  CTX101 seed-read  NEW\n" in out.stdout
    assert "  services/server/app/broken.py: syntax error at line 1" in out.stdout
    concise = cli("check", "--output-format", "concise", "services/server", cwd=nested)
    assert "\nservices/server/app/broken.py: error: syntax error at line 1" in concise.stdout
    assert "services/server/app/stats.py:5:12: CTX101 " in concise.stdout
    # from inside the project's package, as concise does; from the root, unchanged
    out = cli("check", cwd=server / "app")
    assert "  stats.py:5:12  CTX101 seed-read  NEW\n" in out.stdout
    out = cli("check", cwd=server)
    assert "  app/stats.py:5:12  CTX101 seed-read  NEW\n" in out.stdout
    # a stale entry too: pin the finding, then fix it
    write(server, {"app/broken.py": "X = 2\n"})
    baseline = ("baseline", "update", "--allow-growth", "--reason", "pinned", "--config")
    assert cli(*baseline, "services/server/pyproject.toml", cwd=nested).returncode == 0
    write(server, {"app/stats.py": "X = 1\n"})
    out = cli("check", "services/server", cwd=nested)
    assert "  services/server/app/stats.py  CTX101  in world" in out.stdout


def test_baseline_update_takes_the_project_folder_from_outside_it(nested: Path) -> None:
    server = nested / "services" / "server"
    write(server, {"app/stats.py": SEED_READ})
    out = cli("baseline", "update", "services/server", cwd=nested)
    assert out.returncode == 1
    assert "1 new finding was NOT added: fix it, or accept it with `ctxlint baseline update " in (
        out.stdout
    )
    grow = ("baseline", "update", "--allow-growth", "--reason", "legacy")
    out = cli(*grow, "services/server", cwd=nested)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "services/server/ctxlint-baseline.json: removed 0, added 1, kept 0\n"
    assert cli("check", "--strict", "services/server", cwd=nested).returncode == 0
    # a PATH inside the project would pin only part of it: refused, saying what works
    out = cli(*grow, "services/server/app", cwd=nested)
    assert out.returncode == 2
    assert out.stderr == (
        "ctxlint: error: baseline update works on the whole tree: give the project's folder "
        "(services/server) instead of a PATH inside it (--allow-growth would otherwise pin "
        "findings outside the PATHs)\n"
    )


def test_a_config_above_its_root_is_named_when_a_path_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "proj"
    shutil.copytree(FIXTURE, root)
    write(
        root,
        {
            "tools/ctxlint.toml": "[tool.ctxlint]\nroot = '..'\n"
            + (FIXTURE / "pyproject.toml").read_text().split("\n", 1)[1]
        },
    )
    _git(root, "init", "--quiet")  # a root above the config: inside its repository
    out = cli("baseline", "update", "tools", cwd=root)
    assert out.returncode == 2
    assert "give --config tools/ctxlint.toml instead of a PATH" in out.stderr


def test_a_renamed_file_with_a_baselined_finding_says_it_moved(project: Path) -> None:
    write(project, {"app/stats.py": SEED_READ})
    assert cli("baseline", "update", "--allow-growth", "--reason", "x", cwd=project).returncode == 0
    (project / "app" / "stats.py").rename(project / "app" / "metrics.py")
    moved = (
        "1 baselined finding moved to another file (a rename?): the baseline pins each "
        'finding\'s path, so after review run `ctxlint baseline update --allow-growth --reason "moved"`\n'
    )
    for strict in ((), ("--strict",)):
        out = cli("check", *strict, cwd=project)
        assert out.returncode == 1
        assert out.stderr == moved  # never "the code got better"
        assert (
            "1 stale baseline entry (no longer found; 1 moved to another file: after review, "
            '`ctxlint baseline update --allow-growth --reason "moved"` records the move)\n'
        ) in out.stdout
    # what it says works
    out = cli("baseline", "update", "--allow-growth", "--reason", "moved", cwd=project)
    assert out.stdout.endswith("removed 1, added 1, kept 0\n")
    assert cli("check", "--strict", cwd=project).returncode == 0
    # a finding really fixed is still "the code got better"
    write(project, {"app/metrics.py": "X = 1\n"})
    out = cli("check", "--strict", cwd=project)
    assert out.stderr == (
        "1 stale baseline entry: the code got better; run `ctxlint baseline update` to lock it in\n"
    )


def test_a_nul_byte_is_a_syntax_error_without_a_made_up_position(project: Path) -> None:
    write(project, {"app/nul.py": "\0x = 1\n"})
    out = cli("check", "--output-format", "concise", "-q", cwd=project)
    assert out.returncode == 2
    assert out.stdout.startswith("app/nul.py: error: ")
    assert "None" not in out.stdout


def test_extend_select_adds_to_the_configs_select_as_in_ruff(project: Path) -> None:
    write(project, {"app/stats.py": SEED_READ})
    config = project / "pyproject.toml"
    config.write_text(config.read_text() + 'select = ["CTX201"]\n')
    assert "1 rule (CTX201)" in cli("check", cwd=project).stdout
    out = cli("check", "--extend-select", "seed-read", cwd=project)
    assert out.returncode == 1
    assert "2 rules (CTX101 CTX201)" in out.stdout
    assert "app/stats.py:5:12  CTX101 seed-read  NEW" in out.stdout
    # the ignore list still applies; an unknown selector is named with its option
    assert (
        "1 rule (CTX201)"
        in cli("check", "--extend-select", "CTX101", "--ignore", "CTX1", cwd=project).stdout
    )
    out = cli("check", "--extend-select", "CTX9", cwd=project)
    assert out.returncode == 2
    assert out.stderr.startswith("ctxlint: error: unknown rule 'CTX9' in --extend-select")
    # no nearest id for a prefix (any CTXnnn is as near as another): the prefixes there are
    assert out.stderr.rstrip().endswith(
        "(prefixes of that length: CTX0, CTX1, CTX2, CTX3, CTX4, CTX5, CTX6, CTX7)"
    )
    assert "CTX703" not in out.stderr


def test_a_selection_that_leaves_no_rule_is_an_error_never_an_empty_pass(project: Path) -> None:
    # a CI typo must not switch the gate off: each of these used to check nothing and exit 0
    for args, said in (
        (("--ignore", "ALL"), "--ignore ALL leaves nothing"),
        (("--select", "CTX101", "--ignore", "CTX1"), "--select CTX101 with --ignore CTX1"),
    ):
        out = cli("check", *args, cwd=project)
        assert out.returncode == 2, out.stdout
        assert out.stderr.startswith("ctxlint: error: no rule to check: ") and said in out.stderr
    config = project / "pyproject.toml"
    config.write_text(config.read_text() + 'ignore = ["ALL"]\n')
    out = cli("check", cwd=project)
    assert out.returncode == 2
    assert "config key 'ignore' = [\"ALL\"] leaves nothing" in out.stderr
    # an empty list on the command line does not fall back to every rule
    for empty in ("", ","):
        out = cli("check", "--select", empty, cwd=project)
        assert out.returncode == 2
        assert f"argument --select: {empty!r} names no rule" in out.stderr


def test_a_prefix_hint_only_for_a_prefix_of_the_rule_ids(project: Path) -> None:
    out = cli("check", "--select", "CTX1,FOO", cwd=project)
    assert out.returncode == 2
    assert out.stderr.startswith("ctxlint: error: unknown rule 'FOO' in --select")
    assert "prefixes of that length" not in out.stderr


@pytest.mark.parametrize("command", ["sets", "show-settings", "audit"])
def test_every_report_command_takes_output_format_as_check_does(
    project: Path, command: str
) -> None:
    out = cli(command, "--output-format", "json", "--select", "CTX101", cwd=project)
    assert out.returncode == 0, out.stderr
    assert out.stdout.lstrip().startswith("{")


def test_explain_takes_a_rule_name_as_select_does(project: Path) -> None:
    by_id = cli("explain", "CTX101", "--color", "never", cwd=project)
    by_name = cli("explain", "seed-read", "--color", "never", cwd=project)
    assert by_name.returncode == 0 and by_name.stdout == by_id.stdout
    out = cli("explain", "seed-reed", cwd=project)
    assert out.stderr == "ctxlint: error: unknown rule 'seed-reed' (did you mean 'seed-read'?)\n"
    # a prefix names the rules it covers, not the nearest id (it suggested CTX104)
    out = cli("explain", "CTX10", cwd=project)
    assert out.returncode == 2
    assert out.stderr == (
        "ctxlint: error: 'CTX10' is a prefix of CTX101, CTX102, CTX103, CTX104, CTX105: "
        "give one rule\n"
    )


RUFF_OPTIONS = (
    "--select",
    "--ignore",
    "--extend-select",
    "--output-format",
    "--output-file",
    "--fix",
    "--diff",
    "--exit-zero",
    "--quiet",
    "--no-cache",
    "--unsafe-fixes",
)


def test_check_help_names_ruffs_options_and_says_what_each_value_is(project: Path) -> None:
    out = cli("check", "--help", cwd=project).stdout
    missing = [name for name in RUFF_OPTIONS if name not in out]
    assert missing == []
    for typed in ("--config FILE", "--baseline FILE", "--cache-dir DIR", "--jobs N", "-o FILE"):
        assert typed in out, typed
    assert "CONFIG" not in out and "CACHE_DIR" not in out and "JOBS" not in out
    write(project, {"app/stats.py": SEED_READ})
    assert cli("check", "--output-file", "r.txt", cwd=project).returncode == 1
    assert "CTX101" in (project / "r.txt").read_text()


def test_a_config_value_error_names_the_file_it_is_in(nested: Path) -> None:
    config = nested / "services" / "server" / "pyproject.toml"
    table = config.read_text()
    config.write_text(table + 'src = "."\n')
    out = cli("check", "services/server", cwd=nested)
    assert out.returncode == 2
    assert out.stderr == (
        "ctxlint: error: config key 'src' must be a list (in services/server/pyproject.toml)\n"
    )
    # one that names it already is left as it is
    config.write_text(table + "srcs = []\n")
    out = cli("check", "services/server", cwd=nested)
    assert out.stderr.startswith("ctxlint: error: unknown config key 'srcs' in ")
    assert out.stderr.count("pyproject.toml") == 1, out.stderr


def _unprivileged(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real command line without root's right to read any file (capsh drops it)."""
    argv = [sys.executable, "-m", "ctxlint.cli", *args]
    if os.geteuid() == 0:
        capsh = shutil.which("capsh")
        if capsh is None:
            pytest.skip("running as root without capsh: every folder is readable")
        argv = [capsh, "--drop=cap_dac_override,cap_dac_read_search", "--", "-c", " ".join(argv)]
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, check=False)


@pytest.mark.parametrize("in_git", [True, False])
def test_a_folder_that_cannot_be_read_is_a_clear_error(project: Path, in_git: bool) -> None:
    write(project, {"app/stats.py": "X = 1\n"})
    if in_git:
        _git(project, "init", "--quiet")
        _git(project, "add", ".")
    (project / "app").chmod(0)
    try:
        out = _unprivileged("check", "--no-cache", cwd=project)
    finally:
        (project / "app").chmod(0o755)
    assert out.returncode == 2, out.stderr
    assert "Traceback" not in out.stderr and "internal error" not in out.stderr
    if in_git:  # git lists its files: each says why it was not checked
        assert "  app/stats.py: cannot read: Permission denied\n" in out.stdout
    else:  # a walk would have skipped the folder without a word: a file error, as a file's
        assert "  app/: cannot read folder: Permission denied\n" in out.stdout
        assert out.stderr == ""


def test_an_unreadable_folder_nothing_is_checked_in_is_passed_over(project: Path) -> None:
    config = project / "pyproject.toml"
    config.write_text(config.read_text() + 'exclude = ["private/"]\n')
    write(project, {"app/stats.py": "X = 1\n", "private/notes.py": "X = 1\n"})
    (project / "private").chmod(0)
    try:
        out = _unprivileged("check", "--no-cache", cwd=project)
    finally:
        (project / "private").chmod(0o755)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("All clear: checked ")


@pytest.mark.parametrize(
    ("given", "why"),
    [
        ("app", "is a folder: give the config file in it (pyproject.toml or ctxlint.toml)"),
        (os.devnull, "is not a regular file"),
        ("nope.toml", "not found"),
    ],
)
def test_config_that_is_not_a_file_says_what_it_is(project: Path, given: str, why: str) -> None:
    out = cli("check", "--config", given, cwd=project)
    assert out.returncode == 2
    assert out.stderr == f"ctxlint: error: config file {given} {why}\n"


def test_a_baseline_named_on_the_command_line_that_does_not_exist_is_an_error(
    project: Path,
) -> None:
    # a mistyped --baseline would turn every accepted finding into a new one (issue 34:
    # in CI the whole debt read as new): exit 2, naming the file
    write(project, {"app/__init__.py": "", "app/reads.py": SEED_READ})
    out = cli("check", "--baseline", "typo.json", ".", cwd=project)
    assert out.returncode == 2
    assert out.stderr == (
        "ctxlint: error: baseline typo.json does not exist "
        "(ctxlint baseline update --baseline typo.json writes one)\n"
    )
    grow = ("--allow-growth", "--reason", "adopted")
    made = cli("baseline", "update", "--baseline", "typo.json", *grow, ".", cwd=project)
    assert made.returncode == 0, made.stderr
    assert (project / "typo.json").is_file()
    # the config's own baseline, not there yet, is a project's first run: no word
    first = cli("check", ".", cwd=project)
    assert "does not exist" not in first.stderr


@pytest.mark.parametrize("in_git", [False, True])
def test_a_link_to_nothing_is_reported_not_skipped(project: Path, in_git: bool) -> None:
    write(project, {"app/__init__.py": "", "app/ok.py": "X = 1\n"})
    (project / "app" / "gone.py").symlink_to(project / "app" / "missing.py")
    if in_git:
        _git(project, "init", "--quiet")
        _git(project, "add", ".")
    out = cli("check", ".", cwd=project)
    assert out.returncode == 2
    assert "app/gone.py" in out.stdout + out.stderr
    assert "a symbolic link to nothing" in out.stdout + out.stderr


def test_exclude_and_extend_exclude_follow_ruff(project: Path) -> None:
    write(project, {"app/__init__.py": "", "app/a.py": SEED_READ, "app/b.py": SEED_READ})

    def reported(*extra: str) -> list[str]:
        out = cli("check", "--output-format", "concise", *extra, ".", cwd=project)
        return sorted(
            {line.split(":")[0] for line in out.stdout.splitlines() if ": CTX101 " in line}
        )

    assert reported() == ["app/a.py", "app/b.py"]
    assert reported("--extend-exclude", "app/b.py") == ["app/a.py"]
    # --exclude replaces the config's list
    config = (project / "pyproject.toml").read_text()
    (project / "pyproject.toml").write_text(
        config.replace("[tool.ctxlint]", '[tool.ctxlint]\nexclude = ["app/a.py"]', 1)
    )
    assert reported() == ["app/b.py"]
    assert reported("--exclude", "app/b.py") == ["app/a.py"]
    assert reported("--exclude", "app/b.py", "--extend-exclude", "app/a.py") == []


def test_rules_prints_the_catalogue_as_json(tmp_path: Path) -> None:
    import json

    from ctxlint.engine.registry import load_rules

    out = cli("rules", "--output-format", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert [r["id"] for r in data] == [r.id for r in load_rules()]
    assert {r["id"]: r["fixes"] for r in data}["CTX102"] == ["unsafe"]


def test_the_update_hint_names_the_project_as_it_was_reached(project: Path) -> None:
    """A hook runs from the repository's root with the project's folder as PATH:
    the command the hint gives works from there (`baseline update proj`)."""
    write(project, {"app/stats.py": SEED_READ})
    assert cli("baseline", "update", "--allow-growth", "--reason", "x", cwd=project).returncode == 0
    write(project, {"app/stats.py": "X = 1\n"})
    above = project.parent
    out = cli("check", "--strict", "proj", cwd=above)
    hint = "run `ctxlint baseline update proj`"
    assert f"the code got better; {hint} to lock it in" in out.stderr
    assert f"no longer found; {hint} to drop them" in out.stdout
    github = cli("check", "proj", "--output-format", "github", cwd=above)
    assert f"{hint}." in github.stdout
    # what it says works, from there
    assert cli(*hint[5:-1].split()[1:], cwd=above).returncode == 0
    assert cli("check", "--strict", "proj", cwd=above).returncode == 0
    # from the project's own folder, no PATH is needed
    write(project, {"app/stats.py": SEED_READ})
    assert cli("baseline", "update", "--allow-growth", "--reason", "x", cwd=project).returncode == 0
    write(project, {"app/stats.py": "X = 1\n"})
    assert (
        "run `ctxlint baseline update` to lock it in"
        in cli("check", "--strict", cwd=project).stderr
    )


def test_the_update_hints_name_a_config_whose_root_is_elsewhere(project: Path) -> None:
    """examples/legacy_app's layout: a config in a subfolder whose `root` is the
    repository's. Its folder is a PATH filter there, so `baseline update sub`
    refused; the plain command updated the root project's baseline. Every hint
    (check, fix, baseline update, pytest) names the config, and it works."""
    sub = project / "sub"
    sub.mkdir()
    config = (project / "pyproject.toml").read_text().replace("[tool.ctxlint]\n", "")
    (sub / "ctxlint.toml").write_text(
        'root = ".."\nbaseline = "sub/baseline.json"\ncache-dir = "sub/.cache"\n' + config
    )
    write(project, {"sub/__init__.py": "", "sub/stats.py": SEED_READ, "sub/more.py": SEED_READ})
    pin = ("baseline", "update", "--config", "sub/ctxlint.toml", "--allow-growth", "--reason", "x")
    assert cli(*pin, cwd=project).returncode == 0
    write(project, {"sub/stats.py": "X = 1\n"})
    hint = "`ctxlint baseline update --config sub/ctxlint.toml`"
    out = cli("check", "--strict", "sub", cwd=project)
    assert f"the code got better; run {hint} to lock it in" in out.stderr, out.stderr
    fixed = cli("fix", "--unsafe", "sub", cwd=project)
    assert f"then run {hint}." in fixed.stdout, fixed.stdout
    assert cli(*hint.strip("`").split()[1:], cwd=project).returncode == 0
    assert cli("check", "--strict", "sub", cwd=project).returncode == 0
