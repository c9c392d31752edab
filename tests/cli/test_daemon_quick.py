"""The quick client of a project's daemon (cli.quick_check) finds the socket
the full command line would ask: its parse of `check`'s options is the full
parser's (or it steps aside), and its cache folder is the session's resolve's,
for every way a command line names a project."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest
from lspclient import APP, copy_legacy_app

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
