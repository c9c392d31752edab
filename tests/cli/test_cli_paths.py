"""Every path ctxlint prints opens from the working folder, as `check`'s do:
the fix report's lines, the warnings about PATHs, and `pytest --ctxlint`'s
failure lines, with the project below where the command ran."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from helpers import cli, write

BAD = "from specrt.context import get_server_args\n\n\ndef f():\n    return get_server_args().tp_size\n"


def test_fix_lines_open_from_the_working_folder(project: Path) -> None:
    write(project, {"app/bad.py": BAD, "app/broken.py": "def (:\n"})
    above = project.parent
    left = cli("fix", "proj", cwd=above)  # CTX101's fix is unsafe: left, with its place
    assert "proj/app/bad.py:5:12: CTX101 left:" in left.stdout, left.stdout
    assert "  not touched: proj/app/broken.py: " in left.stderr, left.stderr
    fixed = cli("fix", "--unsafe", "proj", cwd=above)
    assert fixed.stdout.startswith("proj/app/bad.py:5:12: CTX101 fixed"), fixed.stdout
    assert (above / fixed.stdout.split(":", 1)[0]).is_file()  # it opens from there
    here = cli("check", "--select", "CTX101", cwd=project)
    assert "app/bad.py" not in here.stdout  # it was fixed


def test_path_warnings_open_from_the_working_folder(project: Path) -> None:
    write(project, {"app/a.py": BAD, "app/notes.txt": "x\n"})
    above = project.parent
    res = cli("check", "proj", "proj/app/notes.txt", cwd=above)
    assert (
        "ctxlint: warning: proj/app/notes.txt is not a Python file: not checked\n" in res.stderr
    ), res.stderr


def test_an_exclude_from_the_command_line_is_named_as_such(project: Path) -> None:
    write(project, {"app/a.py": BAD})
    res = cli("check", "--exclude", "app/a.py", "app/a.py", cwd=project)
    assert res.stderr == (
        "ctxlint: warning: app/a.py is excluded by --exclude (exclude pattern 'app/a.py'): "
        "not checked\n"
    )
    above = cli(
        "check", "proj", "--extend-exclude", "app/*.py", "proj/app/a.py", cwd=project.parent
    )
    assert above.stderr == (
        "ctxlint: warning: proj/app/a.py is excluded by --extend-exclude (exclude pattern "
        "'app/*.py'): not checked\n"
    )
    cfg = project / "pyproject.toml"
    cfg.write_text(
        cfg.read_text().replace("[tool.ctxlint]", '[tool.ctxlint]\nexclude = ["app/a.py"]')
    )
    by_config = cli("check", "app/a.py", cwd=project)
    assert "app/a.py is excluded by the config (exclude pattern 'app/a.py')" in by_config.stderr


def test_pytest_failure_lines_open_from_where_pytest_ran(project: Path) -> None:
    write(project, {"app/bad.py": BAD})
    res = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--ctxlint",
         "--ctxlint-root", "proj", "-k", "CTX101"],
        cwd=project.parent, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert res.returncode == 1, res.stdout + res.stderr
    assert "  NEW   proj/app/bad.py:5:12 [f] " in res.stdout, res.stdout


def test_set_and_role_locations_open_from_the_working_folder(project: Path) -> None:
    """`sets` and `roles` print where each entry is as `path.py:LINE`; run from
    above the project, the path carries the project's folder, and it opens."""
    write(project, {"app/a.py": BAD})
    above = project.parent
    sets = cli("sets", "proj", cwd=above)
    places = re.findall(r"([\w./-]+\.py):\d+", sets.stdout)
    assert places and all(p.startswith("proj/") for p in places), sets.stdout
    assert all((above / p).is_file() for p in places)
    inside = cli("sets", cwd=project)  # from the project root: as the project writes them
    assert {p.removeprefix("proj/") for p in places} == set(
        re.findall(r"([\w./-]+\.py):\d+", inside.stdout)
    )
    roles = cli("roles", "proj", cwd=above)
    entries = re.findall(r"([\w./-]+\.py):\d+", roles.stdout)
    assert entries and all((above / p).is_file() for p in entries), roles.stdout
