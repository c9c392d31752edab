"""The reference runtime and its example obey the rules they exist to demonstrate:
``ctxlint check --strict`` over both reports nothing with an empty baseline."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from rt_fixtures import fresh_context  # noqa: F401 - autouse: empty context per test

REPO = Path(__file__).resolve().parents[2]


def test_ctxlint_reports_nothing_on_ctxrt_and_the_example(tmp_path: Path) -> None:
    pytest.importorskip("ctxlint.cli")
    empty = tmp_path / "baseline.json"
    empty.write_text(json.dumps({"schema": 1, "tool": "ctxlint", "entries": [], "pins": {}}))
    run = "import sys; from ctxlint.cli.main import main; sys.exit(main(sys.argv[1:]))"
    args = ["check", "--strict", "--no-cache", "--jobs", "1", "--baseline", str(empty)]
    proc = subprocess.run(
        [sys.executable, "-c", run, *args, "src/ctxrt", "examples/serving_app"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 new" in proc.stdout or "All clear" in proc.stdout
