from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "specrt"


def run_cli(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The real command line, in a subprocess, as a user runs it (`env`: its whole
    environment, default this process's)."""
    return subprocess.run(
        [sys.executable, "-m", "ctxlint.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A small project: the specrt runtime plus an `app` package to fill in."""
    root = tmp_path / "proj"
    shutil.copytree(FIXTURE, root)
    (root / "app").mkdir()
    (root / "app" / "__init__.py").write_text("")
    return root
