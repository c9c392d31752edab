"""The pytest plugin, --changed-since and --profile, through their real entry points."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import run_cli
from helpers import write

BAD = "from specrt.context import get_server_args\n\n\ndef f():\n    return get_server_args().tp_size\n"
GOOD = "from specrt.context import get_parallel\n\n\ndef f():\n    return get_parallel().tp_size\n"


def _pytest(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        cwd=root,
        capture_output=True,
        text=True,
        check=False,
    )


def test_pytest_plugin_gives_one_item_per_rule_failing_with_the_new_finding(project: Path) -> None:
    write(project, {"app/good.py": GOOD})
    clean = _pytest(project, "--ctxlint")
    assert clean.returncode == 0, clean.stdout
    assert "ctxlint::CTX101" not in clean.stdout
    assert " passed" in clean.stdout

    write(project, {"app/bad.py": BAD})
    failing = _pytest(project, "--ctxlint", "-rf")
    assert failing.returncode == 1, failing.stdout
    assert "FAILED ctxlint::CTX101" in failing.stdout
    assert "app/bad.py:5" in failing.stdout
    assert "FAILED ctxlint::CTX201" not in failing.stdout


# A hook wrapper shaped as pytest-lsp 1.0's: it yields only for an item with
# `funcargs` (a test function's fixtures), and fails any other item it wraps.
FUNCARGS_WRAPPER = """
import pytest


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    if not hasattr(item, "funcargs"):
        return
    yield
"""


def test_pytest_plugin_items_run_under_another_plugins_funcargs_wrapper(project: Path) -> None:
    write(project, {"app/good.py": GOOD, "conftest.py": FUNCARGS_WRAPPER})
    clean = _pytest(project, "--ctxlint")
    assert clean.returncode == 0, clean.stdout
    assert "did not yield" not in clean.stdout
    write(project, {"app/bad.py": BAD})
    failing = _pytest(project, "--ctxlint", "-rf")
    assert failing.returncode == 1, failing.stdout
    assert "FAILED ctxlint::CTX101" in failing.stdout
    assert "did not yield" not in failing.stdout


def test_pytest_plugin_is_inert_without_the_flag(project: Path) -> None:
    write(project, {"app/bad.py": BAD})
    result = _pytest(project)
    assert result.returncode == 5  # nothing collected: the plugin added no items


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def test_changed_since_reports_only_changed_files_but_derives_over_all(project: Path) -> None:
    write(project, {"app/old_bad.py": BAD})
    _git(project, "init", "-q")
    _git(project, "add", "-A")
    _git(project, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    write(project, {"app/new_bad.py": BAD})

    everything = run_cli("check", "--format", "json", "--no-cache", cwd=project)
    assert everything.stdout.count('"CTX101"') >= 2
    changed = run_cli(
        "check", "--changed-since", "HEAD", "--format", "json", "--no-cache", cwd=project
    )
    assert changed.returncode == 1
    assert '"app/new_bad.py"' in changed.stdout and "app/old_bad.py" not in changed.stdout

    bad_ref = run_cli("check", "--changed-since", "no-such-ref", cwd=project)
    assert bad_ref.returncode == 2
    assert "no-such-ref" in bad_ref.stderr and "Traceback" not in bad_ref.stderr


def test_unknown_profile_is_a_clear_error(project: Path) -> None:
    result = run_cli("check", "--profile", "sglagn", str(project), cwd=project)
    assert result.returncode == 2
    assert "did you mean 'sglang'" in result.stderr


def test_a_profile_baseline_lives_in_the_checked_tree(tmp_path: Path) -> None:
    """`baseline update --profile sglang TREE` must not write into the installed
    package (where the profile file lives): the default baseline is TREE's."""
    from ctxlint.session import PROFILES, Overrides, Request, resolve

    config = resolve(Request(profile="sglang", paths=(str(tmp_path),))).config
    assert config.root == tmp_path.resolve()
    assert config.baseline == tmp_path.resolve() / "ctxlint-baseline.json"
    assert not config.baseline.is_relative_to(PROFILES)
    given = tmp_path / "elsewhere.json"
    request = Request(
        profile="sglang",
        overrides=Overrides(baseline=str(given)),
        paths=(str(tmp_path),),
        command="baseline update",
    )
    assert resolve(request).config.baseline == given.resolve()
