"""Output does not depend on the interpreter's string hashing (issue 20).

Set iteration order changes with PYTHONHASHSEED, so only separate processes
with different seeds can show a set leaking into the output: rendering twice
in one process cannot. The fixture holds multi-rule suppressions, whose rule
ids come from a set and decide the fingerprint each CTX001 finding gets.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from helpers import populate

SEEDS = ("0", "1", "2", "3", "4", "5")


def _check(root: Path, seed: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctxlint.cli", "check", "--format", "json", "--jobs", "1", *args],
        cwd=root,
        env={**os.environ, "PYTHONHASHSEED": seed},
        capture_output=True,
        text=True,
        check=False,
    )


def test_json_is_byte_identical_across_hash_seeds_with_multi_rule_suppressions(
    project: Path,
) -> None:
    populate(project, n=3, multi_rule=2)
    runs = {seed: _check(project, seed, "--no-cache") for seed in SEEDS}
    assert {r.returncode for r in runs.values()} == {1}, [r.stderr for r in runs.values()]
    first = runs[SEEDS[0]].stdout
    assert [s for s, r in runs.items() if r.stdout != first] == []
    # the cache, filled under one seed and replayed under another, agrees too
    assert _check(project, "7").stdout == first
    assert _check(project, "8").stdout == first
    doc = json.loads(first)
    unused = Counter(
        (f["path"], f["message"])
        for f in doc["findings"]
        if f["rule"] == "CTX001" and f["path"].startswith("app/multi")
    )
    assert unused == {
        (f"app/multi{i}.py", f"unused suppression: no {rule} finding on this line"): 1
        for i in range(2)
        for rule in ("CTX101", "CTX201", "CTX202", "CTX301")
    }
