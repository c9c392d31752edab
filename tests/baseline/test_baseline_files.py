"""The baseline file itself: one that is not whole is refused (issue 34 N8), and
what a killed write leaves beside it is cleared by the next write (N7)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ctxlint.baseline.ratchet import SCHEMA, BaselineError, load_baseline
from ctxlint.core import outfiles
from ctxlint.core.outfiles import write_text


def test_a_baseline_without_entries_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "b.json"
    path.write_text(json.dumps({"schema": SCHEMA, "tool": "ctxlint"}))
    with pytest.raises(BaselineError, match='no "entries" list'):
        load_baseline(path)
    path.write_text(json.dumps({"schema": SCHEMA, "tool": "ctxlint", "entries": []}))
    assert load_baseline(path).entries == {}


def _leftover(folder: Path, name: str, pid: int | str) -> Path:
    tmp = folder / f".{name}.{pid}.abcd1234.tmp"
    tmp.write_text("half a baseline")
    return tmp


def test_a_killed_writes_temporary_file_is_cleared_by_the_next_write(tmp_path: Path) -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a process that no longer runs: what it left is a leftover
    dead = _leftover(tmp_path, "b.json", gone.pid)
    live = _leftover(tmp_path, "b.json", os.getppid())  # a writer still running: kept
    other = _leftover(tmp_path, "other.json", gone.pid)  # another file's: not ours
    old = tmp_path / ".b.json.x1y2z3.tmp"  # no process in its name (an older ctxlint)
    old.write_text("x")
    stale = time.time() - outfiles.STALE_SECONDS - 60
    os.utime(old, (stale, stale))
    fresh = tmp_path / ".b.json.q9w8e7.tmp"
    fresh.write_text("x")
    write_text(tmp_path / "b.json", "{}\n", "baseline")
    assert (tmp_path / "b.json").read_text() == "{}\n"
    assert not dead.exists() and not old.exists()
    assert live.exists() and other.exists() and fresh.exists()


def test_a_write_killed_midway_leaves_only_what_the_next_one_clears(tmp_path: Path) -> None:
    target = tmp_path / "b.json"
    code = (
        "import os, sys; from ctxlint.core import outfiles\n"
        "real = os.replace\n"
        "def stop(src, dst): os.kill(os.getpid(), 9)\n"
        "os.replace = stop\n"
        f"outfiles.write_text({str(target)!r}, 'new', 'baseline')\n"
    )
    killed = subprocess.run([sys.executable, "-c", code], check=False)
    assert killed.returncode == -signal.SIGKILL
    assert [p.name.startswith(".b.json.") for p in tmp_path.iterdir()] == [True]
    write_text(target, "{}\n", "baseline")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.json"]
