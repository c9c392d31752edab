"""Closed or full standard streams (N3): `>&-`, `2>&-`, stdout on /dev/full.
The command exits 2 with one line where one can be written: never a
traceback, never an "internal error", never an error passed off as output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import write

BAD = "from specrt.context import get_server_args\n\n\ndef f():\n    return get_server_args().tp_size\n"


def _sh(redirect: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`python -m ctxlint.cli ARGS REDIRECT` through a real shell (fds as a user's)."""
    line = " ".join([f'"{sys.executable}"', "-m", "ctxlint.cli", *args, redirect])
    return subprocess.run(["sh", "-c", line], cwd=cwd, capture_output=True, text=True, check=False)


@pytest.fixture
def failing(project: Path) -> Path:
    write(project, {"app/bad.py": BAD})
    return project


def test_stdout_closed(failing: Path) -> None:
    res = _sh(">&-", "check", cwd=failing)
    assert res.returncode == 2
    assert res.stderr == (
        "ctxlint: error: standard output is closed: nowhere to write the report "
        "(redirect it instead, e.g. >/dev/null)\n"
    )


def test_stderr_closed(failing: Path) -> None:
    """The one line goes where it can, stdout; no report pretends all went well."""
    res = _sh("2>&-", "check", "--format", "json", cwd=failing)
    assert res.returncode == 2
    assert res.stdout == (
        "ctxlint: error: standard error is closed: nowhere to write warnings and errors "
        "(redirect it instead, e.g. 2>/dev/null)\n"
    )


def test_both_closed(failing: Path) -> None:
    assert _sh(">&- 2>&-", "check", cwd=failing).returncode == 2


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
@pytest.mark.parametrize(
    "args",
    [("check",), ("check", "--format", "json"), ("check", "-q"), ("rules",), ("--version",),
     ("check", "--help")],
    ids=["text", "json", "quiet", "rules", "version", "help"],
)  # fmt: skip
def test_stdout_on_a_full_device(failing: Path, args: tuple[str, ...]) -> None:
    res = _sh(">/dev/full", *args, cwd=failing)
    assert (res.returncode, res.stderr) == (
        2,
        "ctxlint: error: cannot write the output (No space left on device)\n",
    )


@pytest.mark.parametrize("command", [("check",), ("audit",), ("sets",)])
def test_a_reader_that_closed_the_pipe(failing: Path, command: tuple[str, ...]) -> None:
    """`ctxlint check | head`: the reader is gone before the report is out. Every
    command exits 141, as a process killed by SIGPIPE does (git, grep), with
    nothing on stderr: never 0, which `set -o pipefail` would take for a clean
    check (it was, before), and not rich's 1 for some commands only."""
    read, write_end = os.pipe()
    os.close(read)  # gone before the first byte: every write meets EPIPE
    proc = subprocess.Popen(
        [sys.executable, "-m", "ctxlint.cli", *command],
        cwd=failing,
        stdout=write_end,
        stderr=subprocess.PIPE,
        text=True,
    )
    os.close(write_end)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 141, err
    assert err == ""
