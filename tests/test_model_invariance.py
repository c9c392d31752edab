"""The program model's refactors change no output: `check --format json` and
`sets --format json` on every pinned tree, byte for byte (issue 35, "must not change").

Each run's stdout is pinned by its sha256 in tests/data/model_invariance.json, with
the per-rule finding counts (or the per-rule set sizes) beside it, so a failure says
which rule moved. The default suite covers examples/legacy_app, the repository
(ctxrt and examples/serving_app) and the spec fixture runtime; the slow suite adds
the five sglang wheels. Each tree is checked with --no-cache, then its sets and a
second check run against a fresh cache directory: the warm check must give the
same bytes as the cold one.

The pins were recorded at 5f5de74, before the model refactor (sglang 0.5.17 to
0.5.23 from a cold `sets` and the warm check on its cache, the rest as `record`
does), and change only when an output is meant to change:

    PYTHONPATH=src:. python3 tests/test_model_invariance.py --record [NAME ...]
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from helpers import cli

REPO = Path(__file__).resolve().parents[1]
PINS = REPO / "tests" / "data" / "model_invariance.json"
SGLANG_VERSIONS = ("0.5.14", "0.5.17", "0.5.19", "0.5.21", "0.5.23")

# name -> the arguments that select the tree (the command runs from the repository root)
LOCAL_TREES: dict[str, tuple[str, ...]] = {
    "legacy_app": ("examples/legacy_app",),
    "ctxrt": (),
    "specrt": ("tests/fixtures/specrt",),
}


def tree_args(name: str) -> tuple[str, ...]:
    if name in LOCAL_TREES:
        return LOCAL_TREES[name]
    sys.path.insert(0, str(REPO / "tests"))
    from wheels import sglang_tree

    return ("--profile", "sglang", str(sglang_tree(name.removeprefix("sglang-"))))


def ctxlint(*args: str, here: bool = False) -> str:
    """stdout of `ctxlint ARGS`, run from the repository root (stable paths): `here`,
    in this process (helpers.cli: main() as the command line calls it; a small tree's
    pins are of its output, not of a process start), else in a subprocess."""
    if here:
        res: Any = cli(*args, cwd=REPO)
    else:
        cmd = [sys.executable, "-m", "ctxlint.cli", *args]
        res = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False)
    assert res.returncode in (0, 1), res.stderr[-3000:] or res.stdout[-3000:]
    return res.stdout


def digest(kind: str, out: str) -> dict[str, Any]:
    """The pin of one output: its sha256 and a readable summary of what it holds."""
    data = json.loads(out)
    if kind == "check":
        counts = Counter(f"{f['rule']} {f['status']}" for f in data["findings"])
        summary: dict[str, Any] = {
            "findings": dict(sorted(counts.items())),
            "stale": len(data["stale"]),
            "errors": len(data["errors"]),
            "disabled": sorted(d["rule"] if isinstance(d, dict) else d for d in data["disabled"]),
        }
    else:
        summary = {
            rule: {name: len(v) if isinstance(v, list | dict) else v for name, v in sets.items()}
            for rule, sets in data.items()
        }
    return {"sha256": hashlib.sha256(out.encode()).hexdigest(), "summary": summary}


def outputs(name: str, cache: Path) -> dict[str, str]:
    """check cold (no cache), sets (filling `cache`), check warm (from `cache`)."""
    args = tree_args(name)
    # a small tree runs in this process, in one job: its files are parsed here, where
    # a cold run after another's (the sets after the --no-cache check) is answered
    # by the suite's memo of facts (tests/factmemo.py), and no interpreter or pool
    # starts; the output does not depend on the jobs (the pins hold either way)
    here = name in LOCAL_TREES
    json_out = ("--format", "json", *(("--jobs", "1") if here else ()))
    return {
        "check": ctxlint("check", "--no-cache", *json_out, *args, here=here),
        "sets": ctxlint("sets", "--cache-dir", str(cache), *json_out, *args, here=here),
        "check warm": ctxlint("check", "--cache-dir", str(cache), *json_out, *args, here=here),
    }


def sglang_cache(version: str) -> Path:
    """A fresh fact cache for a wheel's run: the one its history working copy uses
    (bench/sglang_history.py), so tests/test_sglang_history.py and the bench then run
    warm on what this test filled cold (the cache is keyed by content alone)."""
    sys.path.insert(0, str(REPO / "tests"))
    from wheels import shared_fact_cache

    cache = shared_fact_cache(version)
    shutil.rmtree(cache, ignore_errors=True)
    cache.parent.mkdir(parents=True, exist_ok=True)
    return cache


def assert_unchanged(name: str, cache: Path) -> None:
    pins = json.loads(PINS.read_text())[name]
    got = outputs(name, cache)
    for kind in ("check", "sets"):
        now = digest(kind, got[kind])
        assert now["summary"] == pins[kind]["summary"], (name, kind)
        assert now["sha256"] == pins[kind]["sha256"], f"{name} {kind}: same counts, other bytes"
    assert got["check warm"] == got["check"], f"{name}: warm check differs from --no-cache"


@pytest.mark.parametrize("name", sorted(LOCAL_TREES))
def test_local_tree_output_is_pinned_byte_for_byte(name: str, tmp_path: Path) -> None:
    assert_unchanged(name, tmp_path / "cache")


def on_its_cache(version: str) -> Any:
    """A test of a wheel that reads or fills its shared fact cache (shared_fact_cache),
    in that wheel's xdist group: the suite's workers run a group's tests on one
    worker in the collection's order (this file first: it fills the cache, the
    tests after it run warm), never two of them on one cache at once."""
    return pytest.param(version, marks=pytest.mark.xdist_group(f"sglang-{version}"))


@pytest.mark.slow
@pytest.mark.parametrize("version", [on_its_cache(v) for v in SGLANG_VERSIONS])
def test_sglang_output_is_pinned_byte_for_byte(version: str) -> None:
    assert_unchanged(f"sglang-{version}", sglang_cache(version))


def record(names: list[str]) -> None:
    """Pin the named trees' outputs (all when none is named) from this checkout."""
    import tempfile

    pins = json.loads(PINS.read_text()) if PINS.exists() else {}
    for name in names or [*LOCAL_TREES, *(f"sglang-{v}" for v in SGLANG_VERSIONS)]:
        with tempfile.TemporaryDirectory() as tmp:
            sglang = name.removeprefix("sglang-") if name.startswith("sglang-") else None
            got = outputs(name, sglang_cache(sglang) if sglang else Path(tmp) / "cache")
        assert got["check warm"] == got["check"], f"{name}: warm check differs from --no-cache"
        pins[name] = {kind: digest(kind, got[kind]) for kind in ("check", "sets")}
        print(name, pins[name]["check"]["sha256"][:12], pins[name]["sets"]["sha256"][:12])
        PINS.write_text(json.dumps(pins, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    if sys.argv[1:2] != ["--record"]:
        sys.exit("usage: test_model_invariance.py --record [NAME ...]")
    record(sys.argv[2:])
