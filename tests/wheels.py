"""The unpacked sglang wheels the slow tests and benches check (outside any git
checkout), downloaded once when missing."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

SGLANG = "0.5.23"
WHEELS = Path.home() / ".cache" / "ctxlint" / "wheels"  # outside any git checkout


def sglang_tree(version: str = SGLANG) -> Path:
    """The unpacked sglang wheel (0.5.23: $CTXLINT_SGLANG_TREE or /tmp/sg/wheel when
    present), else downloaded once (`pip download --no-deps`) and unpacked under WHEELS."""
    for candidate in (os.environ.get("CTXLINT_SGLANG_TREE"), "/tmp/sg/wheel"):
        if version == SGLANG and candidate and (Path(candidate) / "sglang" / "srt").is_dir():
            return Path(candidate)
    root = WHEELS / f"sglang-{version}"
    marker = root / ".unpacked"  # written last: a half-finished unzip is redone
    if not marker.exists():
        import sys
        import zipfile

        WHEELS.mkdir(parents=True, exist_ok=True)
        wheels = sorted(WHEELS.glob(f"sglang-{version}-*.whl"))
        if not wheels:
            pip = [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet"]
            subprocess.run([*pip, f"sglang=={version}", "-d", str(WHEELS)], check=True)
            wheels = sorted(WHEELS.glob(f"sglang-{version}-*.whl"))
        shutil.rmtree(root, ignore_errors=True)
        with zipfile.ZipFile(wheels[0]) as zf:
            zf.extractall(root)
        marker.write_text(wheels[0].name + "\n")
    return root


def shared_fact_cache(version: str = SGLANG) -> Path:
    """The fact cache of a wheel's history working copy (bench/sglang_history.py):
    the model-invariance test fills it, the slow tests after it run warm on it (the
    cache is keyed by content alone, so any copy of the wheel hits it)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))
    from sglang_history import tree_cache

    return tree_cache(version)
