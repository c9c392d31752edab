"""A resident front end's per-edit overheads (docs/server.md, hstore): its runs'
cache writes are held and written after the answer (cache.pending), and an
edited buffer's facts are decoded from the kept module's entry, not its JSON
(engine.kept_tree.value_of). Each check is still a no-cache run's."""

from __future__ import annotations

import json
import sqlite3
import zlib
from pathlib import Path
from typing import Any

import pytest
from test_check_memo import LEGACY, _no_cache, _session, _shown, _warm_copy
from test_moved_outcomes import _body_starts, _with_statement

from ctxlint import session
from ctxlint.cache import pending
from ctxlint.cache.pending import PendingCache
from ctxlint.cache.signing import load_key, verified
from ctxlint.engine import moved_outcomes
from ctxlint.engine import run as engine_run
from ctxlint.facts.typed import Decoded, plain

REL = f"{LEGACY}/scheduler.py"


def _rows(root: Path) -> dict[str, bytes]:
    """The cache's rows, decompressed (those this user signed)."""
    db = sqlite3.connect(root / ".ctxlint_cache" / "facts.sqlite")
    try:
        rows = db.execute("SELECT key, data FROM facts").fetchall()
    finally:
        db.close()
    key = load_key()
    out = {}
    for k, data in rows:
        signed = verified(key, k, data)
        if signed is not None:
            out[k] = zlib.decompress(signed)
    return out


def _edits(original: str) -> list[str]:
    line, indent = _body_starts(original)[-1]
    return [_with_statement(original, line, indent, n) for n in (1, 2, 3)]


@pytest.fixture(autouse=True)
def _no_idle_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    """No write on a timer during a test: each flushes when it says so."""
    monkeypatch.setattr(pending, "DELAY_S", 3600.0)


def test_a_resident_edit_writes_nothing_until_flushed(tmp_path: Path) -> None:
    """Every run of a resident (opening the buffer, three edits) puts its
    entries into the held ones, none into the database, and reads them back
    from there; a flush writes them all (each a batch run's bytes), and the
    resident's finish writes what is left. Each check is a no-cache run's."""
    root = _warm_copy("legacy_app", tmp_path)
    setup = _session(root)
    resident = setup.request.run.resident
    assert resident is not None
    before = _rows(root)
    original = (root / REL).read_text()
    session.check(setup, texts={REL: original})
    store = resident.store
    assert isinstance(store, PendingCache) and store.db is not None
    for text in _edits(original):
        out = session.check(setup, texts={REL: text}).out
        assert resident.store is store  # (one connection, kept open)
        assert _rows(root) == before  # nothing written during the edits' answers
        (root / REL).write_text(text)
        want = _no_cache(root)
        (root / REL).write_text(original)
        assert _shown(out) == _shown(want)
        assert out.pins == want.pins
    held = store.held
    assert any(k.startswith("pf:") for k in held)  # prefilter decisions
    assert any(k.startswith("fd:") for k in held)  # entry digests
    assert resident.flush() is None and store.held == {}
    after = _rows(root)
    assert {k: after[k] for k in held} == held
    assert after.keys() - before.keys() <= held.keys()
    # what the last edit's run put is what a batch run of that text writes
    (root / REL).write_text(_edits(original)[-1])
    batch = _rows_of_a_batch_run(root)
    edited = {k for k in held if k in batch and not k.startswith(("stat:", "learnt:"))}
    assert edited and all(held[k] == batch[k] for k in edited)
    # the next edit's writes are held again; the resident's finish writes them
    session.check(setup, texts={REL: original + "\nX = 1\n"})
    assert store.held
    store.finish()
    assert store.held == {} and _rows(root).keys() >= held.keys()


def _rows_of_a_batch_run(root: Path) -> dict[str, bytes]:
    from test_check_memo import _config

    from ctxlint.engine.registry import load_rules

    rules = load_rules()
    config = _config(root, rules)
    engine_run.Engine(config, rules, jobs=1, use_cache=True, memo=False).run()
    return _rows(root)


def test_a_dropped_resident_writes_what_it_held(tmp_path: Path) -> None:
    """A resident let go (the daemon keeps a few setups' only) writes its
    held entries when it is collected: no lost work."""
    root = _warm_copy("legacy_app", tmp_path)
    setup = _session(root)
    original = (root / REL).read_text()
    session.check(setup, texts={REL: _edits(original)[0]})
    resident = setup.request.run.resident
    assert resident is not None and resident.store is not None
    held = resident.store.held
    assert held and not held.keys() <= _rows(root).keys()
    del resident, setup
    import gc

    gc.collect()
    assert _rows(root).keys() >= held.keys()


def _as_json(o: Any) -> Any:
    """A part of a program's file entry as the entry's JSON has it."""
    if isinstance(o, Decoded):
        return o.value
    return o.to_json() if hasattr(o, "to_json") else plain(o)


def test_an_edits_moves_read_the_kept_entrys_part_texts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The outcomes a spliced edit moves read its parts' texts as the kept
    module's entry's pieces hold them, not cut out of its JSON again; its
    facts are its entry's JSON decoded (a decoding from the pieces' values,
    shared from run to run, was tried: it held 30 to 50 MiB more in the
    server over 200 edits, docs/server.md)."""
    root = _warm_copy("legacy_app", tmp_path)
    setup = _session(root)
    resident = setup.request.run.resident
    assert resident is not None and resident.kept is not None
    decoded: list[bytes] = []
    real = engine_run.facts_entry

    def counted(blob: Any, *args: Any, **kwargs: Any) -> Any:
        decoded.append(blob)
        return real(blob, *args, **kwargs)

    monkeypatch.setattr(engine_run, "facts_entry", counted)
    asked, cut = [], []  # the entries whose part texts the moves read, those cut from JSON
    all_texts, cut_texts = moved_outcomes._all_part_texts, moved_outcomes._cut_part_texts
    monkeypatch.setattr(
        moved_outcomes, "_all_part_texts", lambda blob: asked.append(blob) or all_texts(blob)
    )
    monkeypatch.setattr(
        moved_outcomes, "_cut_part_texts", lambda blob: cut.append(blob) or cut_texts(blob)
    )
    original = (root / REL).read_text()
    session.check(setup, texts={REL: original})
    moves = []
    for text in _edits(original):
        decoded.clear()
        asked.clear()
        cut.clear()
        out = session.check(setup, texts={REL: text}).out
        facts = out.program.files[REL]
        # (its parts read as it was decoded: a call summary, typed facts)
        entry = json.loads(json.dumps(facts, default=_as_json))
        assert entry in [json.loads(blob) for blob in decoded]  # (its JSON decoded)
        moves.append((len(asked), len(cut)))
    # the moves read each spliced entry's part texts as encoded, not cut out of
    # its JSON (the first edit's old entry, the cache's, is cut)
    assert all(n > 0 for n, _ in moves[1:]) and all(c == 0 for _, c in moves[1:]), moves


def test_ctx401_is_replayed_by_its_facts_and_its_ruff_texts(tmp_path: Path) -> None:
    """CTX401 runs ruff over its candidates' texts: a resident replays it (or
    moves it) while its facts and those texts are as its last run read them,
    and derives it again when a candidate's text changes where no fact does
    (a noqa comment). Each check is a no-cache run's."""
    root = _warm_copy("serving_app", tmp_path)
    setup = _session(root)
    resident = setup.request.run.resident
    assert resident is not None and resident.checks is not None
    rel = "examples/serving_app/launcher.py"
    text = (root / rel).read_text()
    # another object bound to an accessor name above the runtime's import of it
    twice = "from os.path import join as get_serving\n" + text
    lines = twice.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if "get_serving" in line and i > 0)
    quiet = "".join([*lines[:at], lines[at].rstrip("\n") + "  # noqa: F811\n", *lines[at + 1 :]])
    other = root / "examples/serving_app/scheduler.py"
    steps = [
        (rel, twice, True),  # its facts changed: derived (ruff reports F811)
        (other, None, False),  # another file's edit: replayed
        (rel, quiet, True),  # the same facts, the candidate's text not: derived
    ]
    derived = []
    for target, new, _ in steps:
        if new is None:
            path = other
            path.write_text(path.read_text() + "\n\nX_CTXLINT_EDIT = 1\n")
        else:
            (root / target).write_text(new)
        out = session.check(setup).out
        want = _no_cache(root)
        assert _shown(out) == _shown(want)
        assert out.program.sets["CTX401"] == want.program.sets["CTX401"]
        derived.append("CTX401" in resident.checks.derived)
        if new is twice:
            assert "Redefinition" in str(out.program.sets["CTX401"]["ruff F811 on accessor names"])
    assert derived == [want for _, _, want in steps], derived
    assert out.program.sets["CTX401"]["ruff F811 on accessor names"] == []


def test_an_edits_vocabulary_and_round_answers_come_from_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resident's edit of a file the vocabulary does not read replays the
    last vocabulary (no schema read), and its rounds' rule answers come
    from memory (no learnt key asked of the cache) where the keys are those
    of an earlier run; an edit of the runtime module derives the vocabulary
    again. Each check is a no-cache run's."""
    root = _warm_copy("legacy_app", tmp_path)
    setup = _session(root)
    resident = setup.request.run.resident
    assert resident is not None
    asked: list[str] = []
    real = PendingCache.get_many

    def spied(self: PendingCache, keys: Any) -> dict[str, bytes]:
        keys = list(keys)
        asked.extend(keys)
        return real(self, keys)

    monkeypatch.setattr(PendingCache, "get_many", spied)
    original = (root / REL).read_text()
    session.check(setup, texts={REL: original})
    assert resident.tree.reads.derived == 1
    edits = _edits(original)
    for text in [*edits, edits[0]]:
        asked.clear()
        out = session.check(setup, texts={REL: text}).out
    assert resident.tree.reads.derived == 1  # (replayed: no schema entry asked)
    assert not [k for k in asked if k.startswith("learnt:")], asked
    (root / REL).write_text(edits[0])
    want = _no_cache(root)
    assert _shown(out) == _shown(want) and out.program.vocab == want.program.vocab
    runtime = root / "src/ctxrt/context.py"
    runtime.write_text(runtime.read_text() + "\n# an edit of the runtime module\n")
    out = session.check(setup, texts={REL: edits[0]}).out
    assert resident.tree.reads.derived == 2
    assert _shown(out) == _shown(_no_cache(root))
