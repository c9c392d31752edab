"""A real editor: headless Neovim (Debian's `neovim` package, which .ci/run
installs) with its built-in LSP client opens a file of examples/legacy_app,
reads back the diagnostics `ctxlint server` serves and applies a quick fix,
its edit resolved lazily (codeAction/resolve) as Neovim asks for it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lspclient import APP, batch

CLIENT = Path(__file__).with_name("neovim_client.lua")
SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "img" / "make_editor_screenshot.py"
RUNNER = f"{APP}/model_runner.py"  # its CTX401 (an accessor name shadowed) has a safe fix

pytestmark = pytest.mark.skipif(
    shutil.which("nvim") is None,
    reason="nvim is not installed (Debian's neovim package; .ci/run installs it)",
)


def test_neovim_shows_the_diagnostics_and_applies_a_quick_fix(root: Path, tmp_path: Path) -> None:
    out = tmp_path / "nvim.json"
    env = dict(os.environ) | {
        "CTXLINT_FILE": str(root / RUNNER),
        "CTXLINT_FOLDER": str(root / APP),
        "CTXLINT_PYTHON": sys.executable,
        "CTXLINT_OUT": str(out),
        # nvim's LSP log (cache in 0.7, state later) and data, not the user's
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
    subprocess.run(
        ["nvim", "--headless", "-u", "NONE", "-i", "NONE", "-c", f"luafile {CLIENT}"],
        env=env,
        cwd=tmp_path,
        timeout=240,
        check=False,
        capture_output=True,
    )
    seen = json.loads(out.read_text())
    assert "error" not in seen, seen["error"]
    assert seen["attached"]
    expected = sorted(
        (f["rule"], f["line"]) for f in batch(root)["findings"] if f["path"] == RUNNER
    )
    assert sorted((d["code"], d["line"]) for d in seen["before"]) == expected
    assert any(t.startswith("Fix CTX401 (safe fix)") for t in seen["titles"]), seen["titles"]
    # Neovim advertises codeAction resolveSupport: the title came without its
    # edit, and codeAction/resolve made it
    assert seen["lazy"], seen
    assert "resolve_error" not in seen, seen["resolve_error"]
    assert "import get_model as model_loader_get_model" in seen["text"]
    assert "self.model = model_loader_get_model(" in seen["text"]
    assert seen["cleared"], seen["after"]
    assert "get_model as model_loader_get_model" not in (root / RUNNER).read_text()


def test_the_docs_screenshot_is_made_from_the_editors_screen(tmp_path: Path) -> None:
    """docs/img/make_editor_screenshot.py (docs/server.md's picture) still runs:
    nvim in a pseudo-terminal shows the new error and the hover, and pyte's
    screen of it is written as SVG."""
    pytest.importorskip("pyte", reason="pyte (a dev dependency) makes the screenshot")
    out = tmp_path / "shot.svg"
    done = subprocess.run(
        [sys.executable, str(SCREENSHOT), str(out)],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    screen = done.stdout
    assert "E  17         self.load_format = get_server_args().load_format" in screen
    assert "CTX101 `load_format` read off the seed record" in screen
    assert "`exec.enable_torch_compile` — config leaf" in screen
    assert out.read_text().startswith("<svg")
