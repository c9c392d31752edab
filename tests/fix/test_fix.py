"""`ctxlint fix` on examples/legacy_app (a copy): what it fixes, what it leaves
and why, and that the result holds (it compiles, imports and runs, the diff
touches only rewritten expressions and imports, a second run changes nothing,
the baseline is not rewritten)."""

from __future__ import annotations

import difflib
import json
import py_compile
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from conftest import REPO
from helpers import cli

CONFIG = "examples/legacy_app/ctxlint.toml"
BASELINE = "baselines/legacy_app.json"
APP = "examples/legacy_app"
# The legacy app is a lint target, not a program with tests of its own: this
# runs the parts that can run (the changed modules imported, a model runner built
# from a published record, the readback) in the fixed tree.
SMOKE = """
import importlib
# the modules that import before a publish (scheduler.py reads a bag at import
# time, CTX602, in the original as in the fixed tree)
for name in ("detokenizer", "model_runner", "readback", "speculative"):
    importlib.import_module(f"examples.legacy_app.{name}")
from ctxrt.context import publish
from ctxrt.record import ServerArgs
sa = ServerArgs(model_path="tiny-lm")
publish(sa, role="scheduler")
from examples.legacy_app import readback
from examples.legacy_app.model_runner import ModelRunner
runner = ModelRunner(sa)
print(readback.max_total_tokens(), runner.greedy([1, 2, 3], 4), runner.attention_backend)
"""


def copy_tree(root: Path) -> Path:
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", ".ctxlint_cache")
    shutil.copytree(REPO / "src" / "ctxrt", root / "src" / "ctxrt", ignore=skip)
    shutil.copytree(REPO / APP, root / APP, ignore=skip)
    shutil.copy2(REPO / "examples" / "__init__.py", root / "examples" / "__init__.py")
    (root / "baselines").mkdir()
    shutil.copy2(REPO / BASELINE, root / BASELINE)
    return root


def texts(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*.py"))}


def run(root: Path, *args: str):
    return cli(*args, "--config", CONFIG, "--jobs", "1", ".", cwd=root)


def smoke(root: Path) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": f"{root / 'src'}:{root}", "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, "-c", SMOKE], cwd=root, capture_output=True, text=True, env=env
    )


@pytest.fixture(scope="module")
def fixed(tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = copy_tree(tmp_path_factory.mktemp("fix") / "repo")
    before = texts(root)
    diff = run(root, "fix", "--unsafe", "--diff")
    assert texts(root) == before  # --diff changes nothing
    done = run(root, "fix", "--unsafe")
    return {"root": root, "before": before, "after": texts(root), "diff": diff, "fix": done}


def test_diff_prints_the_change_and_exits_1_without_writing(fixed: dict) -> None:
    diff = fixed["diff"]
    assert diff.returncode == 1, diff.stderr
    changed = sorted(re.findall(r"^\+\+\+ b/(\S+)", diff.stdout, re.M))
    assert changed == sorted(p for p in fixed["after"] if fixed["after"][p] != fixed["before"][p])
    assert "Would fix 14 sites in 4 files (13 unsafe); 10 left:" in diff.stderr


def test_fix_reports_every_site_fixed_or_left_with_its_reason(fixed: dict) -> None:
    out = fixed["fix"]
    assert out.returncode == 1  # sites are left
    lines = [
        line for line in out.stdout.splitlines() if re.match(r"examples/\S+:\d+:\d+: CTX", line)
    ]
    status = Counter(
        (line.split(": ")[1].split()[0], line.split(": ")[1].split()[1].rstrip(":"))
        for line in lines
    )
    assert status == Counter(
        {
            ("CTX101", "fixed"): 6,
            ("CTX102", "fixed"): 5,  # Scheduler.__init__'s tp_size/pp_size: parameter reads (hdeb)
            ("CTX102", "left"): 7,  # four reads before their process publishes (CTX301)
            ("CTX401", "fixed"): 3,  # model_loader's own def meets no accessor: no finding
            ("CTX602", "left"): 3,  # import-time reads and a legacy call: moved by hand
        }
    )
    # the CTX102 rewrites that would read a bag before their process publishes (a
    # new CTX301 finding) are left, not made and rolled back with their whole file
    assert sum(" left: " in line and "(CTX301)" in line for line in lines) == 7
    assert not any("rolled back" in line for line in lines)
    assert "Fixed 14 sites in 4 files (13 unsafe); 10 left:" in out.stdout
    assert "-> removed" in out.stdout and "`(removed)`" not in out.stdout  # not code
    assert "14 entries are now stale" in out.stdout
    assert "ctxlint baseline update" in out.stdout


def test_after_fix_no_seed_read_is_left_and_nothing_new_appears(fixed: dict) -> None:
    root = fixed["root"]
    assert (root / BASELINE).read_text() == (REPO / BASELINE).read_text()  # not rewritten
    res = run(root, "check", "--format", "json")
    report = json.loads(res.stdout)
    assert [f for f in report["findings"] if f["status"] == "new"] == []
    left = Counter(f["rule"] for f in report["findings"])
    assert left["CTX101"] == 0
    assert left["CTX102"] == 7 and left["CTX401"] == 0  # those before publish
    assert len(report["stale"]) == 14


def test_every_file_compiles_imports_and_runs(fixed: dict) -> None:
    root = fixed["root"]
    for path in (root / APP).glob("*.py"):
        py_compile.compile(str(path), doraise=True, cfile=str(path) + "c.tmp")
    done = smoke(root)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[0] == "1024"
    # before the fix the runner read the raw load_format ('auto') off the record
    # it was handed; the fixed read is the resolved leaf ('dummy'), which loads
    original = smoke(copy_tree(root.parent / "orig"))
    assert "no loader for load_format 'auto'" in original.stderr


def test_the_diff_touches_only_rewritten_expressions_and_imports(fixed: dict) -> None:
    before, after = fixed["before"], fixed["after"]
    changed = [p for p in after if after[p] != before[p]]
    assert sorted(changed) == [
        f"{APP}/{n}.py" for n in ("detokenizer", "model_runner", "readback", "scheduler")
    ]
    rewrites: dict[str, list[tuple[str, str]]] = {}
    for m in re.finditer(
        r"^(\S+):\d+:\d+: CTX\d+ fixed `(.+?)` -> `(.*?)`", fixed["fix"].stdout, re.M
    ):
        rewrites.setdefault(m.group(1), []).append((m.group(2), m.group(3)))

    def masked(text: str, subs: list[str]) -> list[str]:
        lines = []
        in_import = False  # inside an import wrapped in parentheses
        for line in text.splitlines():
            if in_import:
                in_import = line.strip() != ")"
                continue
            if line.strip().startswith(("from ", "import ")):
                in_import = line.rstrip().endswith("(")
                continue  # imports may change (and be wrapped past the line length)
            for sub in sorted({s for s in subs if s != "(removed)"}, key=len, reverse=True):
                line = re.sub(rf"(?<![\w.]){re.escape(sub)}(?!\w)", "<rewritten>", line)
            lines.append(line)
        return lines

    for path in changed:
        # a renamed import (`get_model as model_loader_get_model`) renames its uses
        renames = [b.split(" as ") for _, b in rewrites[path] if " as " in b]
        # both sides masked alike: a target already spelled elsewhere is unchanged text
        subs = [x for pair in rewrites[path] + renames for x in pair]
        old, new = masked(before[path], subs), masked(after[path], subs)
        for line in difflib.ndiff(old, new):
            # what remains: an alias of the seed, or a member binding, removed
            assert line[:2] not in ("+ ", "? "), (path, line)
            if line.startswith("- "):
                assert re.fullmatch(r"\s*[\w.<>]+ = [\w.<>]+(\(\))?(\s+#.*)?", line[2:]), (
                    path,
                    line,
                )


def test_a_second_run_changes_nothing(fixed: dict) -> None:
    root = fixed["root"]
    again = run(root, "fix", "--unsafe")
    assert texts(root) == fixed["after"]
    assert "Fixed 0 sites in 0 files; 10 left:" in again.stdout
    assert run(root, "fix", "--unsafe", "--diff").returncode == 0


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed")
def test_the_imports_it_grows_are_as_isort_would_lay_them_out(fixed: dict) -> None:
    """Wrapped past the project's line length (88 here: the copy has no ruff or
    black settings), so ruff's isort check passes on every file the fix wrote."""
    root = fixed["root"]
    changed = sorted(p for p in fixed["after"] if fixed["after"][p] != fixed["before"][p])
    out = subprocess.run(
        ["ruff", "check", "--isolated", "--select", "I", "--output-format", "concise", *changed],
        cwd=root,
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "import (\n" in fixed["after"][f"{APP}/readback.py"]


def _left(out: str) -> list[str]:
    """`path:line:col: RULE left: ...` of each site left, as printed."""
    return sorted(m.group(1) for m in re.finditer(r"^(\S+:\d+:\d+: CTX\d+) left", out, re.M))


def test_the_sites_left_are_shown_where_they_are_in_the_file_as_written(fixed: dict) -> None:
    """As a second run (which rewrites nothing) places them: lines above a site
    may have changed (readback.py's import lines became one)."""
    root = fixed["root"]
    first = _left(fixed["fix"].stdout)
    assert len(first) == 10
    assert _left(run(root, "fix", "--unsafe").stdout) == first
    assert (
        _left(fixed["diff"].stderr + fixed["diff"].stdout) != first
    )  # --diff: the lines as they are


def test_safe_fixes_only_without_unsafe(tmp_path: Path) -> None:
    root = copy_tree(tmp_path / "repo")
    out = run(root, "check", "--fix")  # the alias of `ctxlint fix`
    # a seed read that becomes a bag leaf changes value where resolution decides the
    # field (the seed holds the raw input): like CTX102's, that fix needs --unsafe
    assert "Fixed 1 site in 1 file; 23 left:" in out.stdout, out.stdout + out.stderr
    assert "6 x CTX101 left: an unsafe fix" in out.stdout
    assert " CTX102 fixed" not in out.stdout and " CTX101 fixed" not in out.stdout


def test_check_diff_is_fix_diff(tmp_path: Path) -> None:
    root = copy_tree(tmp_path / "repo")
    before = texts(root)
    out = run(root, "check", "--diff", "--unsafe", "--select", "CTX101")
    assert out.returncode == 1
    assert out.stdout.count("+++ b/") == 2
    # without CTX401's rename, `get_model` still names the loader in model_runner.py
    assert "`get_model` means something else here" in out.stderr
    assert texts(root) == before


def test_no_fixable_rule_selected_is_an_error(tmp_path: Path) -> None:
    root = copy_tree(tmp_path / "repo")
    out = run(root, "fix", "--select", "CTX201")
    assert out.returncode == 2
    assert "none of the selected rules has a fix" in out.stderr


def test_rules_shows_which_rules_can_fix(tmp_path: Path) -> None:
    out = cli("rules", "--color", "never", cwd=tmp_path)
    rows = {
        line.split("│")[1].strip(): line.split("│")[-2].strip()
        for line in out.stdout.splitlines()
        if line.startswith("│ CTX")
    }
    assert rows["CTX101"] == "safe, unsafe" and rows["CTX102"] == "unsafe"
    assert rows["CTX401"] == "safe, unsafe" and rows["CTX201"] == "-"
    # and `fix --help` says where to look
    assert "`ctxlint rules` shows which rules can fix" in " ".join(
        cli("fix", "--help", cwd=tmp_path).stdout.split()
    )


def test_the_pool_plans_the_same_diff_as_one_process(fixed: dict, tmp_path: Path) -> None:
    root = copy_tree(tmp_path / "repo")
    pooled = cli("fix", "--unsafe", "--diff", "--config", CONFIG, "--jobs", "2", ".", cwd=root)
    serial = fixed["diff"]  # --jobs 1
    assert pooled.stdout.count("+++ b/") == 4
    assert (pooled.returncode, pooled.stdout, pooled.stderr) == (
        serial.returncode,
        serial.stdout,
        serial.stderr,
    )


def test_the_diff_applies_with_git_at_the_repository_root(tmp_path: Path) -> None:
    # a project in a subfolder of its repository: the patch's paths are the
    # repository's, as GitHub's and `git apply`'s are (not the project's)
    top = tmp_path / "git"
    root = copy_tree(top / "services" / "repo")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1"}
    for cmd in (["init", "-q"], ["add", "-A"]):
        subprocess.run(["git", *cmd], cwd=top, check=True, env=env, capture_output=True)
    out = run(root, "fix", "--diff", "--unsafe", "--select", "CTX101")
    assert out.returncode == 1, out.stderr
    assert "+++ b/services/repo/examples/legacy_app/" in out.stdout
    patch = tmp_path / "fix.patch"
    patch.write_text(out.stdout)
    applied = subprocess.run(
        ["git", "apply", "--check", str(patch)], cwd=top, env=env, capture_output=True, text=True
    )
    assert applied.returncode == 0, applied.stderr


def test_sites_left_before_publish_do_not_depend_on_the_cache(tmp_path: Path) -> None:
    """The sites a rewrite would read a bag at before publish come from the tree's
    program: when the first check replays a stored outcome (no program), it is
    built again, so a warm fix says what a cold one says."""
    root = copy_tree(tmp_path / "repo")
    cold = run(root, "fix", "--unsafe", "--diff", "--no-cache")
    run(root, "check")  # a warm cache: the fix's first check replays it
    warm = run(root, "fix", "--unsafe", "--diff")
    assert (warm.returncode, warm.stdout, warm.stderr) == (
        cold.returncode,
        cold.stdout,
        cold.stderr,
    )
    assert cold.stderr.count("before its record is published") == 2  # two groups of 4


def test_quiet_and_exit_zero_as_check_takes_them(tmp_path: Path) -> None:
    """`-q` drops the summary (the diff or the sites stay); `--exit-zero` exits 0
    with sites left or a diff printed: on `fix` and on `check --fix`, as ruff's."""
    root = copy_tree(tmp_path / "repo")
    loud = run(root, "fix", "--unsafe", "--diff")
    quiet = run(root, "fix", "--unsafe", "--diff", "-q", "--exit-zero")
    assert (loud.returncode, quiet.returncode) == (1, 0)
    assert quiet.stdout == loud.stdout and quiet.stdout.startswith("--- a/")
    assert "Would fix" in loud.stderr and quiet.stderr == ""
    applied = run(root, "check", "--fix", "--unsafe", "-q", "--exit-zero")
    assert applied.returncode == 0  # sites are left, and it says so per site only
    assert " left: " in applied.stdout and "Fixed " not in applied.stdout
