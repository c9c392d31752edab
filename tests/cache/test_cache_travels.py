"""The cache travels: restored into a fresh checkout elsewhere (new absolute
path, new mtimes and inodes, the same bytes), it is warm; CI's recipe
(.github/workflows/ci.yml, docs/adopting-sglang.md) relies on it."""

from __future__ import annotations

import shutil
from pathlib import Path

from helpers import populate, run_engine


def _findings(out: object) -> list[tuple[str, str, int, str]]:
    return [(f.rule, f.path, f.line, f.fingerprint) for f in out.findings]  # type: ignore[attr-defined]


def _fresh_checkout(project: Path, where: Path) -> Path:
    # shutil.copy, not copy2: every mtime is new, as in a CI checkout
    shutil.copytree(project, where, copy_function=shutil.copy)
    return where


def test_a_restored_cache_is_warm_in_a_fresh_checkout(project: Path, tmp_path: Path) -> None:
    populate(project, n=6)
    first = run_engine(project, use_cache=True)
    assert first.files_parsed > 6
    fresh = _fresh_checkout(project, tmp_path / "elsewhere" / "checkout")
    # facts themselves hit (memo=False skips the stored whole-run outcome)
    facts_only = run_engine(fresh, use_cache=True, memo=False)
    assert facts_only.files_parsed == 0
    replayed = run_engine(fresh, use_cache=True)
    assert replayed.files_parsed == 0
    assert _findings(replayed) == _findings(facts_only) == _findings(first)
    assert _findings(replayed) == _findings(run_engine(fresh))  # --no-cache agrees


def test_a_pull_request_reparses_only_what_it_changed(project: Path, tmp_path: Path) -> None:
    populate(project, n=6)
    run_engine(project, use_cache=True)
    fresh = _fresh_checkout(project, tmp_path / "pr")
    for name in ("mod00.py", "mod03.py"):  # the seed readers
        edited = fresh / "app" / name
        edited.write_text(edited.read_text().replace(".tp_size", ".dp_size"))
    out = run_engine(fresh, use_cache=True)
    assert out.files_parsed == 2
    assert _findings(out) == _findings(run_engine(fresh))
    changed = sorted(f.path for f in out.findings if f.rule == "CTX101" and "dp_size" in f.snippet)
    assert changed == ["app/mod00.py", "app/mod03.py"]
