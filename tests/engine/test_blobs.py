"""A round's facts entries stay in the cache until read (engine.blobs): an edit
that leaves every other file's facts as they were reads none of their entries,
and the outcome is the cold one whatever the cache holds."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from helpers import run_engine
from test_check_memo import _no_cache, _session, _shown
from test_rounds import _copy

from ctxlint import session
from ctxlint.cache.store import FactCache
from ctxlint.engine.blobs import DIGEST_PREFIX
from ctxlint.engine.keys import FACT_LAYOUT

APP = "examples/legacy_app"


def _findings(out: object) -> list[tuple[str, str, int, str]]:
    return [(f.rule, f.path, f.line, f.message) for f in out.findings]  # type: ignore[attr-defined]


def _entries_read(monkeypatch: pytest.MonkeyPatch) -> set[str]:
    """The paths whose rule facts entries the runs from now on read back (not
    the vocabulary's schema facts of the runtime's modules)."""
    read: set[str] = set()
    real = FactCache.get_many

    def get_many(self: FactCache, keys: object) -> dict[str, bytes]:
        keys = list(keys)  # type: ignore[call-overload]
        for k in keys:
            if k.startswith(f"{FACT_LAYOUT}:") and k.endswith("]") and ":schema:" not in k:
                read.add(k.rsplit('["', 1)[1].split('"')[0])
        return real(self, keys)

    monkeypatch.setattr(FactCache, "get_many", get_many)
    return read


def test_an_edit_keeping_the_facts_reads_no_other_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _copy("legacy_app", tmp_path)
    cold = run_engine(root / APP, use_cache=True)
    assert cold.files_parsed > 5
    edited = next(
        p for p in sorted((root / APP).glob("*.py")) if "get_server_args" in p.read_text()
    )
    edited.write_text(edited.read_text() + "\n# a comment: new bytes, the same facts\n")
    read = _entries_read(monkeypatch)
    out = run_engine(root / APP, use_cache=True)
    assert out.files_parsed == 1
    assert _findings(out) == _findings(cold)
    assert read == {edited.relative_to(root).as_posix()}  # its own, to digest it


def test_an_entry_gone_from_the_cache_is_extracted_again(tmp_path: Path) -> None:
    """The digests are there, the entries are not (deleted by hand): an edit that
    changes the facts decodes every file, and gets each one back by extracting it."""
    root = _copy("legacy_app", tmp_path)
    cold = run_engine(root / APP, use_cache=True)
    db = next(root.rglob("facts.sqlite"))
    con = sqlite3.connect(db)
    with con:
        gone = con.execute(f"DELETE FROM facts WHERE key LIKE '{FACT_LAYOUT}:%]'").rowcount
    con.close()
    assert gone > 5
    edited = root / APP / "extra_module_for_blobs.py"
    edited.write_text("from ctxrt.context import get_server_args\n\nX = get_server_args().port\n")
    out = run_engine(root / APP, use_cache=True)
    again = run_engine(root / APP)  # no cache
    assert _findings(out) == _findings(again)
    assert _findings(out) != _findings(cold)  # the edit changed the outcome: it was derived


def test_a_residents_runs_ask_the_cache_for_the_edited_files_digests_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resident's run knows the last run's entry digests by fact key
    (TreeMemo.digests): an edit's run asks the cache for the edited file's
    digest only; with the entries and digests gone from the cache, the next
    edit's run still equals a no-cache run (the entries read are extracted
    again), and so does every run's findings."""
    root = _copy("legacy_app", tmp_path)
    setup = _session(root)
    session.check(setup)
    asked: list[str] = []
    real = FactCache.get_many

    def get_many(self: FactCache, keys: object) -> dict[str, bytes]:
        keys = list(keys)  # type: ignore[call-overload]
        asked.extend(k for k in keys if k.startswith(DIGEST_PREFIX))
        return real(self, keys)

    monkeypatch.setattr(FactCache, "get_many", get_many)
    files = [p for p in sorted((root / APP).glob("*.py")) if "get_server_args" in p.read_text()]
    for n, edited in enumerate(files[:2]):
        edited.write_text(edited.read_text() + f"\nX_{n} = get_server_args().port\n")
        asked.clear()
        out = session.check(setup).out
        assert asked and all(edited.relative_to(root).as_posix() in k for k in asked), asked
        assert _shown(out) == _shown(_no_cache(root))
    db = next(root.rglob("facts.sqlite"))
    con = sqlite3.connect(db)
    with con:
        gone = con.execute(f"DELETE FROM facts WHERE key LIKE '{FACT_LAYOUT}:%]'").rowcount
        gone += con.execute(f"DELETE FROM facts WHERE key LIKE '{DIGEST_PREFIX}%'").rowcount
    con.close()
    assert gone > 10
    files[0].write_text(files[0].read_text() + "\nY = get_server_args().host\n")
    out = session.check(setup).out
    assert _shown(out) == _shown(_no_cache(root))
