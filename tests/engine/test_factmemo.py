"""The suite's memo of files' facts (tests/factmemo.py) answers a second run with the
entries a fresh extraction makes, and keys a test's own visitors apart."""

from __future__ import annotations

from pathlib import Path

import factmemo
from helpers import populate, run_engine

from ctxlint.engine import workers


def _outcome(root: Path) -> list[tuple[str, int, str, str]]:
    out = run_engine(root)
    assert not out.errors, out.errors
    return sorted((f.path, f.line, f.rule, f.message) for f in out.findings)


def test_a_second_run_is_served_the_entries_a_fresh_extraction_makes(project: Path) -> None:
    populate(project, n=6)
    with factmemo.memo_on(False):
        fresh = _outcome(project)
    with factmemo.memo_on(True):
        _outcome(project)
        hits = factmemo.stats()["hits"]
        misses = factmemo.stats()["misses"]
        served = _outcome(project)
        assert factmemo.stats()["misses"] == misses  # every file answered from the memo
        assert factmemo.stats()["hits"] > hits
    assert served == fresh and fresh


def test_other_visitors_are_not_served_another_sets_entries(project: Path) -> None:
    populate(project, n=3)
    item = ("app/mod00.py", "app.mod00", (project / "app/mod00.py").read_bytes())
    workers._init_worker(None, "py310")
    with factmemo.memo_on(True):
        factmemo._work(item)  # the full set of visitors: stored
        misses = factmemo.stats()["misses"]
        workers._WORKER["visitors"] = workers._WORKER["visitors"][:1]
        fewer = factmemo._work(item)
        again = factmemo._work(item)
    assert factmemo.stats()["misses"] == misses + 1  # a miss, then a hit
    real = workers._work(item)  # (the engine's own, with the fewer visitors)
    assert (fewer[:2], fewer[3]) == (again[:2], again[3]) == (real[:2], real[3])
