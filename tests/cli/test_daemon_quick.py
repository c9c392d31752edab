"""The quick client of a project's daemon (cli.quick_check) finds the socket
the full command line would ask: its parse of `check`'s options is the full
parser's (or it steps aside), and its cache folder is the session's resolve's,
for every way a command line names a project."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest
from lspclient import APP, copy_legacy_app

import ctxlint
from ctxlint.cli.main import build_parser
from ctxlint.cli.options import resolve
from ctxlint.cli.quick_check import parsed, socket_folder


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return copy_legacy_app(tmp_path / "repo")


def _full(argv: list[str]) -> argparse.Namespace:
    return build_parser().parse_args(argv)


@pytest.mark.parametrize(
    "argv",
    [
        ["check"],
        ["check", APP, "--select", "CTX1,CTX301", "--format", "json", "-q"],
        ["check", "--profile", "sglang", ".", "--exit-zero", "--statistics"],
        ["check", "--config", "pyproject.toml", "--cache-dir", "elsewhere", "-j", "2", APP],
        ["check", APP, "--staged", "--strict", "--extend-exclude", "a/**,b"],
    ],
)
def test_the_quick_parse_is_the_full_parsers(argv: list[str]) -> None:
    quick = parsed(argv)
    assert quick is not None
    # every option the quick client reads, as the full parser gives it (which
    # adds defaults of its own: the daemon parses the command line itself)
    assert vars(quick).items() <= vars(_full(argv)).items()
    assert {"paths", "config", "profile", "cache_dir", "no_cache"} <= vars(quick).keys()


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--help"],
        ["check", "-h"],
        ["check", "--sel", "CTX1"],  # an abbreviation: the full parser takes it
        ["check", "--select", ""],  # a usage error: the full parser says it
        ["check", "--format", "xml"],
        ["baseline", "update"],
        [],
    ],
)
def test_the_quick_parse_steps_aside_for_the_full_parser(argv: list[str]) -> None:
    assert parsed(argv) is None


def test_the_quick_socket_folder_is_the_resolves_cache_folder(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = tree / APP
    text = (app / "ctxlint.toml").read_text()
    head = 'root = "../.."\n'
    assert head in text
    # a cache folder of its own; a config in another folder with its root above
    (app / "moved.toml").write_text(text.replace(head, head + 'cache-dir = "cache-here"\n'))
    (tree / "lib").mkdir()
    lib = text.replace(head, 'root = ".."\n').replace("../../baselines", "../baselines")
    (tree / "lib" / "ctxlint.toml").write_text(lib)
    cases = [
        (tree, ["check", APP]),
        (app, ["check"]),
        (app, ["check", "--cache-dir", str(tmp_path / "given")]),
        (tree, ["check", "--config", f"{APP}/moved.toml", APP]),
        (tree, ["check", "--config", f"{APP}/moved.toml", "--cache-dir", "rel"]),
        (tree, ["check", "--profile", "sglang", "."]),
        (tree / "lib", ["check"]),
    ]
    checked = 0
    for cwd, argv in cases:
        monkeypatch.chdir(cwd)
        args = parsed(argv)
        assert args is not None
        try:
            want = resolve(_full(argv)).config.cache_dir
        except Exception:  # (a config the resolve refuses: the quick client may not guess)
            continue
        assert socket_folder(args) == want, argv
        checked += 1
    assert checked >= 6
    monkeypatch.chdir(tmp_path)  # no config found from here: no socket
    assert socket_folder(parsed(["check"])) is None  # type: ignore[arg-type]
    os.chdir(tree)


def test_a_daemon_gives_a_report_it_made_for_the_same_run_again(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """cli.daemon_checks.LastAnswers: a check whose run has the memo key of one
    answered before (no edit) gets that report without rendering it again;
    an edit (a comment: the findings stay, a code frame may not) renders
    again; a report written to a file is never kept; each answer is the
    batch run's."""
    from helpers import cli

    from ctxlint.cli import check as check_module
    from ctxlint.cli.daemon_checks import Answers
    from ctxlint.cli.daemon_message import client_message

    rendered: list[int] = []
    real = check_module.print_text
    monkeypatch.setattr(
        check_module, "print_text", lambda *a, **k: rendered.append(1) or real(*a, **k)
    )
    monkeypatch.chdir(tree)
    answers = Answers()

    def ask(*argv: str) -> dict[str, object]:
        return answers(client_message(argv=["check", *argv, APP]))

    def batch(*argv: str) -> tuple[int, str]:
        monkeypatch.setenv("CTXLINT_NO_SERVER", "1")
        try:
            done = cli("check", *argv, APP, cwd=tree)
        finally:
            monkeypatch.delenv("CTXLINT_NO_SERVER")
        return done.returncode, done.stdout

    first = ask("--strict")  # (its run starts afresh; the next ones where it ended)
    second = ask("--strict")
    assert second == first and len(rendered) == 2
    again = ask("--strict")
    assert again == first and len(rendered) == 2  # (the same run: not rendered again)
    assert (again["code"], again["stdout"]) == batch("--strict")
    readback = tree / APP / "readback.py"
    readback.write_text("# a comment above\n" + readback.read_text())
    rendered.clear()
    edited = ask("--strict")
    assert len(rendered) == 1
    assert (edited["code"], edited["stdout"]) == batch("--strict")
    out = tree / "report.txt"
    for _ in range(2):
        assert ask("--output", str(out))["code"] == edited["code"]
        assert out.read_text() == edited["stdout"]
        out.unlink()


# the quick client's whole way to the socket, in a fresh interpreter, and what it imported
_IMPORTED = """
import sys
from ctxlint.cli.quick_check import parsed, socket_folder
folder = socket_folder(parsed(sys.argv[1:]))
unwanted = ("pathspec", "subprocess", "ctxlint.core.gitcmd", "ctxlint.discover.files")
print(folder is not None, sorted(m for m in unwanted if m in sys.modules))
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["check", APP],
        ["check", "--profile", "sglang", ".", "--exit-zero"],
        ["check", "--strict", APP],
    ],
)
def test_the_quick_client_leaves_the_linters_imports_unimported(
    tree: Path, argv: list[str]
) -> None:
    """The client finds its socket folder (the config read, its cache folder
    made) without pathspec (a third of its imports: config.settings used it
    at the top for one check of the globs) or a subprocess (git, asked only
    when a config's root leads outside its folder, or to name configs)."""
    done = subprocess.run(
        [sys.executable, "-c", _IMPORTED, *argv],
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(Path(ctxlint.__file__).parents[1])},
    )
    assert done.stdout.split("\n")[0] == "True []"
