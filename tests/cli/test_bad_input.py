"""Bad input from the command line and the checked tree (issue 11 D10-D17, issue
18 items 7 and 13): one line on stderr naming what is wrong, exit 2, nothing
lost, and nothing the checked tree carries gets to run or to write elsewhere."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import run_cli
from helpers import cli, write

BASE = 'runtime-module = "specrt.context"\nrecord-class = "specrt.record.ServerArgs"\n'
READ = "from specrt.context import get_server_args\n\n\ndef f() -> int:\n    return get_server_args().tp_size\n"
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


def _one_error_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert lines[0].startswith("ctxlint: error: "), stderr
    assert "Traceback" not in stderr and "internal error" not in stderr
    return lines[0]


def _check_error(project: Path) -> str:
    """The one error line of an uncached check that must exit 2."""
    res = cli("check", "--no-cache", cwd=project)
    assert res.returncode == 2, res.stdout + res.stderr
    return _one_error_line(res.stderr)


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(root), "-c", "core.fsmonitor=false", *args],
        check=True,
        capture_output=True,
    )


def _commit_all(root: Path) -> None:
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base", "--no-verify")


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """`folder` cannot take new files, even for root (which ignores the mode
    bits: then the immutable attribute does it, or the test is skipped)."""
    folder.chmod(0o555)
    immutable = False
    try:
        if IS_ROOT:
            done = subprocess.run(["chattr", "+i", str(folder)], capture_output=True, check=False)
            if done.returncode != 0:
                pytest.skip("running as root without chattr: no folder is read-only")
            immutable = True
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(folder)], check=False)
        folder.chmod(0o755)


# -- paths on the command line (D13, issue 18 items 7 and 13) --------------------
@pytest.mark.parametrize("command", [("check",), ("check", "--strict"), ("sets",)])
def test_a_path_that_does_not_exist_is_exit_2(project: Path, command: tuple[str, ...]) -> None:
    """A misspelt PATH is an error, not "All clear" (issue 11, D13)."""
    write(project, {"app/a.py": READ})
    res = cli(*command, "--no-cache", "app/a.pyy", cwd=project)
    assert res.returncode == 2
    assert res.stdout == ""
    assert _one_error_line(res.stderr) == "ctxlint: error: app/a.pyy: no such file or folder"


def test_a_missing_path_after_the_tree_given_with_config_is_exit_2(project: Path) -> None:
    """The issue's own repro: `check --strict --config FILE . examples/legacy_ap`."""
    res = cli(
        "check", "--strict", "--no-cache", "--config", "pyproject.toml", ".", "ap", cwd=project
    )
    assert res.returncode == 2
    assert _one_error_line(res.stderr) == "ctxlint: error: ap: no such file or folder"


def test_stdin_dash_is_a_clear_error(project: Path) -> None:
    res = cli("check", "--no-cache", "-", cwd=project)
    assert res.returncode == 2
    line = _one_error_line(res.stderr)
    assert "reading a file from stdin ('-') is not supported" in line


def test_paths_that_select_nothing_say_why(project: Path) -> None:
    """An excluded, non-Python, git-ignored or out-of-root PATH gets a warning
    naming the reason (as ruff warns); the report itself is unchanged."""
    write(project, {"app/a.py": READ, "gen/g.py": READ, "app/skipped.py": READ})
    (project / "notes.txt").write_text("hello\n")
    (project / ".gitignore").write_text("app/skipped.py\n")
    (project / "pyproject.toml").write_text(
        "[tool.ctxlint]\n" + BASE + 'exclude = ["gen/**", "app/a.py"]\n'
    )
    _commit_all(project)
    expected = {
        "app/a.py": "app/a.py is excluded by the config (exclude pattern 'app/a.py')",
        "gen": "gen is excluded by the config (exclude pattern 'gen/**')",
        "gen/g.py": "gen/g.py is excluded by the config (exclude pattern 'gen/**')",
        "notes.txt": "notes.txt is not a Python file",
        "app/skipped.py": "app/skipped.py is ignored by git",
    }
    for path, reason in expected.items():
        res = cli("check", "--no-cache", path, cwd=project)
        assert res.returncode == 0, res.stderr
        assert res.stderr == f"ctxlint: warning: {reason}: not checked\n", path
    checked = cli("check", "--no-cache", "specrt/context.py", "app", cwd=project)
    assert checked.returncode == 0 and checked.stderr == ""


def test_a_path_outside_the_src_roots_says_so(project: Path) -> None:
    write(project, {"app/a.py": READ, "tools/t.py": "X = 1\n"})
    (project / "lib").mkdir()
    (project / "specrt").rename(project / "lib" / "specrt")
    (project / "pyproject.toml").write_text("[tool.ctxlint]\n" + BASE + 'src = ["lib", "app"]\n')
    res = cli("check", "--no-cache", "tools/t.py", cwd=project)
    assert res.returncode == 0
    assert res.stderr == (
        "ctxlint: warning: tools/t.py is outside the src roots (lib, app): not checked\n"
    )


@pytest.mark.parametrize("jobs", ["0", "-3"])
def test_jobs_below_one_is_a_one_line_error(project: Path, jobs: str) -> None:
    """Issue 18, item 13 (in a real process: argparse would print its usage)."""
    res = run_cli("check", "--no-cache", f"--jobs={jobs}", cwd=project)
    assert res.returncode == 2
    assert _one_error_line(res.stderr) == (
        f"ctxlint: error: --jobs must be 1 or more worker processes, not {jobs}"
    )


# -- config values (D10) -----------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('tool = "x"\n', "key 'tool' in {path} must be a table, not a string"),
        ("[tool]\nctxlint = 3\n", "key 'tool.ctxlint' in {path} must be a table"),
    ],
)
def test_a_pyproject_whose_tool_is_not_a_table(project: Path, text: str, message: str) -> None:
    cfg = project / "pyproject.toml"
    cfg.write_text(text)
    error = _check_error(project)  # run in the project: the file as it opens from there
    assert error == "ctxlint: error: " + message.format(path=cfg.name)


# -- where ctxlint writes (D17) ----------------------------------------------------
def test_the_command_line_may_put_baseline_and_cache_outside_the_project(
    project: Path, tmp_path: Path
) -> None:
    """The confinement is for paths a config names; a path the user types is theirs."""
    write(project, {"app/a.py": READ})
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    res = cli(
        "baseline",
        "update",
        "--allow-growth",
        "--reason",
        "r",
        "--baseline",
        str(outside / "b.json"),
        "--cache-dir",
        str(outside / "cache"),
        cwd=project,
    )
    assert res.returncode == 0, res.stderr
    assert (outside / "b.json").is_file() and (outside / "cache" / "facts.sqlite").is_file()
    assert not (project / ".ctxlint_cache").exists()


def test_a_symlinked_cache_folder_is_refused(project: Path, tmp_path: Path) -> None:
    """A checked tree's `.ctxlint_cache -> /somewhere` must not be written through."""
    target = tmp_path / "target"
    target.mkdir()
    (project / ".ctxlint_cache").symlink_to(target, target_is_directory=True)
    res = cli("check", cwd=project)
    assert res.returncode == 2
    line = _one_error_line(res.stderr)
    assert "is reached through a symbolic link" in line and ".ctxlint_cache" in line
    assert list(target.iterdir()) == []
    # a link to a folder above it is refused too
    (project / ".ctxlint_cache").unlink()
    (project / "build").symlink_to(target, target_is_directory=True)
    (project / "pyproject.toml").write_text(
        "[tool.ctxlint]\n" + BASE + 'cache-dir = "build/cache"\n'
    )
    assert cli("check", cwd=project).returncode == 2
    assert list(target.iterdir()) == []


def test_no_gitignore_in_a_folder_ctxlint_did_not_create(project: Path) -> None:
    """`cache-dir = "app"` (a folder of the project): the cache lives there, but
    the `*` .gitignore that hides everything goes only into a folder ctxlint made."""
    write(project, {"app/a.py": READ})
    (project / "pyproject.toml").write_text("[tool.ctxlint]\n" + BASE + 'cache-dir = "app"\n')
    assert cli("check", cwd=project).returncode == 1
    assert (project / "app" / "facts.sqlite").is_file()
    assert not (project / "app" / ".gitignore").exists()
    (project / "pyproject.toml").write_text("[tool.ctxlint]\n" + BASE + 'cache-dir = "new/cache"\n')
    assert cli("check", cwd=project).returncode == 1
    assert (project / "new" / "cache" / ".gitignore").read_text() == "# created by ctxlint\n*\n"


# -- output files (D11) ------------------------------------------------------------
def test_output_errors_name_the_path(project: Path) -> None:
    """A folder, a missing folder or a full disk as --output: one line, exit 2."""
    write(project, {"app/a.py": READ})
    (project / "out").mkdir()
    cases = {
        "out": "cannot write the report out: it is a folder",
        "missing/r.json": "cannot write the report missing/r.json: folder missing does not exist",
    }
    if os.path.exists("/dev/full"):
        cases["/dev/full"] = "cannot write the report /dev/full: No space left on device"
    for path, message in cases.items():
        res = cli("check", "--no-cache", "--format", "json", "--output", path, cwd=project)
        assert res.returncode == 2, path
        assert _one_error_line(res.stderr) == f"ctxlint: error: {message}"


def test_output_into_a_read_only_folder(project: Path) -> None:
    write(project, {"app/a.py": READ})
    reports = project / "reports"
    reports.mkdir()
    (reports / "r.json").write_text("old report\n")
    with read_only(reports):
        res = cli("check", "--no-cache", "--output", "reports/new.json", cwd=project)
        assert res.returncode == 2
        assert _one_error_line(res.stderr) == (
            "ctxlint: error: cannot write the report reports/new.json: "
            "folder reports is not writable"
        )
    assert (reports / "r.json").read_text() == "old report\n"
    assert sorted(p.name for p in reports.iterdir()) == ["r.json"]


def test_a_report_overwritten_keeps_its_mode_and_the_write_is_whole(project: Path) -> None:
    write(project, {"app/a.py": READ})
    report = project / "r.json"
    report.write_text("old\n")
    report.chmod(0o644)
    res = cli("check", "--no-cache", "--format", "json", "-o", "r.json", cwd=project)
    assert res.returncode == 1  # the CTX101 finding in app/a.py
    assert json.loads(report.read_text())["findings"][0]["path"] == "app/a.py"
    assert report.stat().st_mode & 0o777 == 0o644
    assert sorted(p.name for p in project.iterdir() if p.name.startswith(".r.json")) == []


def test_baseline_update_into_a_read_only_folder_keeps_the_old_baseline(project: Path) -> None:
    write(project, {"app/a.py": READ})
    pinned = project / "pinned"
    pinned.mkdir()
    (project / "pyproject.toml").write_text(
        "[tool.ctxlint]\n" + BASE + 'baseline = "pinned/b.json"\n'
    )
    assert cli("baseline", "update", "--allow-growth", "--reason", "r", cwd=project).returncode == 0
    before = (pinned / "b.json").read_bytes()
    write(project, {"app/b.py": READ.replace("f()", "g()")})
    with read_only(pinned):
        res = cli("baseline", "update", "--allow-growth", "--reason", "r", cwd=project)
        assert res.returncode == 2
        line = _one_error_line(res.stderr)
    assert line == (
        f"ctxlint: error: cannot write baseline {pinned / 'b.json'}: folder {pinned} is not writable"
    )
    assert (pinned / "b.json").read_bytes() == before
    assert sorted(p.name for p in pinned.iterdir()) == ["b.json"]


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_a_baseline_that_is_a_device_is_refused(project: Path) -> None:
    """`--baseline /dev/full` would read NULs forever, and replacing it would
    replace the device node: neither is a baseline."""
    import resource

    def bounded() -> None:  # a regression must fail this test, not exhaust the machine
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    res = subprocess.run(
        [sys.executable, "-m", "ctxlint.cli", "check", "--no-cache", "--baseline", "/dev/full"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=bounded,
        check=False,
    )
    assert res.returncode == 2
    assert _one_error_line(res.stderr) == "ctxlint: error: baseline /dev/full: not a regular file"


# -- --changed-since (D14) ---------------------------------------------------------
def test_changed_since_outside_a_git_tree_says_so(project: Path) -> None:
    res = cli("check", "--no-cache", "--changed-since", "HEAD", cwd=project)
    assert res.returncode == 2
    assert _one_error_line(res.stderr) == (
        f"ctxlint: error: --changed-since needs a git work tree: {project} is not inside one"
    )


def test_changed_since_a_ref_that_is_an_option_is_refused(project: Path) -> None:
    """`--changed-since=--output=FILE` must not reach git as an option (it would write FILE)."""
    _commit_all(project)
    res = cli("check", "--no-cache", "--changed-since=--output=leak.txt", cwd=project)
    assert res.returncode == 2
    assert "not a commit in the repository" in _one_error_line(res.stderr)
    assert not (project / "leak.txt").exists()


# -- the runtime and record modules (D15) ------------------------------------------
def test_an_excluded_runtime_module_says_it_is_excluded(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        "[tool.ctxlint]\n" + BASE + 'exclude = ["specrt/context.py"]\n'
    )
    error = _check_error(project)
    assert error == (
        "ctxlint: error: runtime-module 'specrt.context': its file specrt/context.py exists, "
        "but is excluded by the config (exclude pattern 'specrt/context.py')"
    )


def test_an_unreadable_record_module_says_it_is_unreadable(project: Path) -> None:
    """Run in a subprocess; as root, without the capability that reads any file."""
    prefix: list[str] = []
    if IS_ROOT:
        capsh = shutil.which("capsh")
        if capsh is None:
            pytest.skip("running as root without capsh: every file is readable")
        prefix = [capsh, "--drop=cap_dac_override,cap_dac_read_search", "--"]
    record = project / "specrt" / "record.py"
    record.chmod(0)
    try:
        argv = [sys.executable, "-m", "ctxlint.cli", "check", "--no-cache"]
        if prefix:  # capsh runs its arguments through bash -c
            argv = [*prefix, "-c", " ".join(argv)]
        res = subprocess.run(argv, cwd=project, capture_output=True, text=True, check=False)
    finally:
        record.chmod(0o644)
    assert res.returncode == 2, res.stderr
    assert _one_error_line(res.stderr) == (
        "ctxlint: error: record-class 'specrt.record.ServerArgs': its file specrt/record.py "
        "is unreadable (cannot read: Permission denied)"
    )


# -- git in the checked tree (D16) -------------------------------------------------
def test_the_checked_trees_git_config_runs_nothing(project: Path, tmp_path: Path) -> None:
    """A checked tree's .git/config names programs for fsmonitor, filter drivers,
    textconv and signatures; discovery, --changed-since and the audit's history
    run git there, and none of those programs may run (a marker file shows it)."""
    marks = tmp_path / "marks"
    marks.mkdir()
    write(project, {"app/a.py": READ})
    (project / ".gitattributes").write_text("*.py filter=evil diff=evil\n")
    _commit_all(project)
    for key, name in [
        ("core.fsmonitor", "fsmonitor"),
        ("filter.evil.clean", "clean"),
        ("filter.evil.smudge", "smudge"),
        ("filter.evil.process", "process"),
        ("diff.evil.textconv", "textconv"),
        ("gpg.program", "gpg"),
    ]:
        _git(project, "config", key, f"touch {marks / name}; cat")
    _git(project, "config", "filter.evil.required", "true")
    _git(project, "config", "log.showSignature", "true")
    (project / "app" / "a.py").write_text(READ + "\n")  # a work-tree change for diff to look at
    runs = [
        ("check", "--no-cache"),
        ("check", "--no-cache", "--changed-since", "HEAD"),
        ("audit", "--no-cache", "--history", "1", "--format", "json"),
    ]
    for argv in runs:
        res = run_cli(*argv, cwd=project)
        assert res.returncode in (0, 1), (argv, res.stderr)
        assert sorted(p.name for p in marks.iterdir()) == [], argv
    # the marker does appear when git runs the same repository unhardened
    subprocess.run(["git", "-C", str(project), "ls-files"], capture_output=True, check=False)
    assert "fsmonitor" in [p.name for p in marks.iterdir()]


def test_a_runtime_the_project_does_not_hold_says_what_to_do(project: Path) -> None:
    """A typo gets a did-you-mean; an installed runtime (not in the project) is
    never imported, so the message says to copy it under a src root."""
    config = project / "pyproject.toml"
    config.write_text(config.read_text().replace('"specrt.context"', '"specrt.contxt"'))
    error = _check_error(project)
    assert error.startswith(
        "ctxlint: error: runtime-module 'specrt.contxt': no module 'specrt.contxt' under "
        "the src roots (.) (did you mean 'specrt.context'?)."
    )
    assert "never imports them" in error and "copy it under a src root" in error


def test_a_src_root_outside_the_project_is_a_clear_error(project: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for root in (str(elsewhere), "../elsewhere"):
        (project / "pyproject.toml").write_text(f'[tool.ctxlint]\n{BASE}src = [".", "{root}"]\n')
        error = _check_error(project)
        assert f"src root '{root}' is outside the project root" in error


def test_a_runtime_behind_a_symbolic_link_says_so_not_git(project: Path, tmp_path: Path) -> None:
    (project / "specrt").rename(tmp_path / "specrt")
    (project / "vendor").mkdir()
    (project / "vendor" / "specrt").symlink_to(tmp_path / "specrt")
    (project / "pyproject.toml").write_text("[tool.ctxlint]\n" + BASE + 'src = ["vendor", "."]\n')
    _commit_all(project)
    error = _check_error(project)
    assert error == (
        "ctxlint: error: runtime-module 'specrt.context': its file vendor/specrt/context.py "
        "exists, but is behind the symbolic link vendor/specrt, which discovery does not follow"
    )


def test_an_empty_src_is_a_config_error(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.ctxlint]\n" + BASE + "src = []\n")
    error = _check_error(project)
    assert error.startswith("ctxlint: error: src = [] names no folder: give at least one")


def test_a_link_in_the_project_to_a_file_elsewhere_is_not_read(
    project: Path, tmp_path: Path
) -> None:
    """The config is looked for where the path is as typed, not where the link leads
    (that said "no ctxlint configuration found"), and the file is reported at its
    path in the project, as a plain check reports it: as a file that is not read,
    since it leads out of the project (issue 34 N5: its lines reached the report)."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "real.py").write_text(READ)
    (project / "app" / "linked.py").symlink_to(outside / "real.py")
    _commit_all(project)
    whole = cli("check", "--no-cache", "--output-format", "json", cwd=project)
    one = cli("check", "--output-format", "json", "app/linked.py", cwd=project)
    assert one.returncode == whole.returncode == 2, one.stderr
    for res in (one, whole):
        out = json.loads(res.stdout)
        assert out["findings"] == []
        assert out["errors"] == [
            {"path": "app/linked.py", "message": "not read: a symbolic link out of the project"}
        ]


def test_ctrl_c_on_a_cold_run_stops_it_at_once(project: Path) -> None:
    """A Ctrl-C reaches the process group: the run says so and exits 130 within
    moments, instead of parsing every queued file first (86 s on SGLang)."""
    body = "".join(
        f"def f{i}(server_args) -> int:\n    return server_args.tp_size + {i}\n\n\n"
        for i in range(300)
    )  # 600 such files: about half a minute of parsing on two workers
    write(project, {f"app/m{k:03d}.py": READ + "\n\n" + body for k in range(600)})
    proc = subprocess.Popen(
        [sys.executable, "-m", "ctxlint.cli", "check", "--no-cache", "--jobs", "2"],
        cwd=project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own group, as a terminal's foreground job
        # SIGINT at its default, as a terminal starts a job: a child inherits an
        # ignored SIGINT, and Python then never installs its KeyboardInterrupt
        # handler. pytest started in the background by a shell without job
        # control (`pytest &` in a script, nohup) has it ignored: POSIX shells do
        # that to background jobs (`bash -c 'python3 -c ... & wait'` shows it)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    time.sleep(3)
    assert proc.poll() is None, "the cold run ended before it could be interrupted"
    os.killpg(proc.pid, signal.SIGINT)
    sent = time.monotonic()
    _, err = proc.communicate(timeout=60)
    took = time.monotonic() - sent
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "ctxlint: interrupted" and "Traceback" not in err
    assert took < 5, f"took {took:.1f} s to stop"


def test_a_cache_that_cannot_be_used_is_said_once(project: Path) -> None:
    """Every run would be cold: a file where the cache folder should be (or a
    cache restored read-only in CI) gets one warning line, and the run goes on."""
    write(project, {"app/a.py": READ})
    (project / "afile").write_text("")
    res = cli("check", "--cache-dir", "afile", cwd=project)
    assert res.returncode == 1, res.stderr
    assert res.stderr.count("ctxlint: warning: the cache ") == 1
    assert "cannot be used" in res.stderr and "running without it" in res.stderr
    assert "(--cache-dir DIR puts it in a folder that can be written)" in res.stderr


def test_a_read_only_tree_is_told_of_cache_dir(project: Path, tmp_path: Path) -> None:
    """A tree that cannot take the cache folder (a read-only mount) says how to
    keep a cache elsewhere, and --cache-dir then does, writing nothing in the tree."""
    write(project, {"app/a.py": READ})
    with read_only(project):
        res = cli("check", cwd=project)
        assert res.returncode == 1, res.stderr
        assert "--cache-dir DIR" in res.stderr
        elsewhere = tmp_path / "cache"
        res = cli("check", "--cache-dir", str(elsewhere), cwd=project)
        assert res.returncode == 1 and "warning" not in res.stderr, res.stderr
    assert (elsewhere / "facts.sqlite").is_file()
    assert not (project / ".ctxlint_cache").exists()


def test_a_ctxlint_toml_with_a_tool_table_and_top_level_keys_is_an_error(project: Path) -> None:
    """`[per-rule-exclude]` after `[tool.ctxlint]` is a top-level table: it was
    dropped without a word, and the run checked more than asked."""
    (project / "pyproject.toml").unlink()
    (project / "ctxlint.toml").write_text(
        "[tool.ctxlint]\n" + BASE + '\n[per-rule-exclude]\nCTX201 = ["specrt/record.py"]\n'
    )
    error = _check_error(project)
    assert "ctxlint.toml has a [tool.ctxlint] table and top-level keys (per-rule-exclude)" in (
        error
    )


def test_a_runtime_one_folder_down_names_the_tree_to_check(project: Path) -> None:
    """`--profile sglang` from a checkout's root, where the package is in python/:
    the message names the folder to give, not just "not under the src roots"."""
    (project / "python").mkdir()
    (project / "specrt").rename(project / "python" / "specrt")
    error = _check_error(project)
    assert error.endswith(
        "no module 'specrt.context' under the src roots (.), but python/specrt/context.py is "
        "that module: the tree to check is python/ (give it as PATH), or add 'python' to `src`"
    )
