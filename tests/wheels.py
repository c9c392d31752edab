"""The unpacked sglang wheels the slow tests and benches check (outside any git
checkout), downloaded once when missing."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path
from types import ModuleType

SGLANG = "0.5.23"
WHEELS = Path.home() / ".cache" / "ctxlint" / "wheels"  # outside any git checkout


def sglang_tree(version: str = SGLANG) -> Path:
    """The unpacked sglang wheel (0.5.23: $CTXLINT_SGLANG_TREE or /tmp/sg/wheel when
    present), else downloaded once (`pip download --no-deps`) and unpacked under WHEELS
    by the bench's fetch_tree, under a lock: the suite's workers unpack it once."""
    for candidate in (os.environ.get("CTXLINT_SGLANG_TREE"), "/tmp/sg/wheel"):
        if version == SGLANG and candidate and (Path(candidate) / "sglang" / "srt").is_dir():
            return Path(candidate)
    return _bench("bench_sglang").fetch_tree(WHEELS, version)


def _bench(name: str) -> ModuleType:
    """A module of bench/ (its scripts import each other by plain name)."""
    bench = str(Path(__file__).resolve().parents[1] / "bench")
    if bench not in sys.path:
        sys.path.insert(0, bench)
    return importlib.import_module(name)


def shared_fact_cache(version: str = SGLANG) -> Path:
    """The fact cache of a wheel's history working copy (bench/sglang_history.py):
    the model-invariance test fills it, the slow tests after it run warm on it (the
    cache is keyed by content alone, so any copy of the wheel hits it)."""
    return _bench("sglang_history").tree_cache(version)
