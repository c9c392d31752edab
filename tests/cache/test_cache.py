"""The sqlite fact cache: warm runs parse nothing, edits re-parse one file, a
broken cache file is never fatal, and concurrent runs share it safely."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import REPO
from helpers import cli, populate, run_engine

from ctxlint.cache.entries import facts_entry
from ctxlint.cache.signing import MAC_SIZE, load_key, sign
from ctxlint.cache.store import FactCache
from ctxlint.discover import sources
from ctxlint.engine import run as engine
from ctxlint.engine.code_alias import MAX_MISSES
from ctxlint.program import record_writes

CACHE = ".ctxlint_cache"
CORE = {"CTX001", "CTX101", "CTX201"}  # the rules populate() writes findings for


def _key(out: object) -> list[tuple[str, str, int, str]]:
    return [
        (f.rule, f.path, f.line, f.fingerprint)
        for f in out.findings  # type: ignore[attr-defined]
        if f.rule in CORE
    ]


def test_second_run_parses_nothing(project: Path) -> None:
    """A warm run answers every file from the cache and finds the same things."""
    populate(project, n=6)
    cold = run_engine(project, use_cache=True)
    assert cold.files_parsed > 6
    warm = run_engine(project, use_cache=True)
    assert warm.files_parsed == 0
    assert _key(warm) == _key(cold) and len(_key(cold)) == 6


def test_editing_one_file_reparses_only_that_file(project: Path) -> None:
    """Only the edited file misses; its new findings replace the old ones."""
    populate(project, n=6)
    run_engine(project, use_cache=True)
    edited = project / "app" / "mod00.py"
    edited.write_text(edited.read_text().replace(".tp_size", ".dp_size"))
    out = run_engine(project, use_cache=True)
    assert out.files_parsed == 1
    mine = [f for f in out.findings if f.path == "app/mod00.py" and f.rule == "CTX101"]
    assert [f.snippet for f in mine] == ["get_server_args().dp_size"]
    assert run_engine(project, use_cache=True).files_parsed == 0


def test_edit_that_keeps_the_facts_replays_the_derivation(project: Path) -> None:
    """Early cutoff: an edited file whose facts come out the same (a comment
    added below the code) takes its earlier content's facts by code digest,
    unparsed, and the whole-program phase is replayed from the cache instead
    of re-derived; the outcome is the one a cold run gives."""
    populate(project, n=6)
    run_engine(project, use_cache=True)
    edited = project / "app" / "mod00.py"
    edited.write_text(edited.read_text() + "\n# a comment, and a blank line\n\n")
    replayed = run_engine(project, use_cache=True)
    assert replayed.files_parsed == 0
    assert replayed.program.files == {}  # nothing was decoded or derived
    assert _key(replayed) == _key(run_engine(project)) and len(_key(replayed)) == 6


def _noted(text: str, line: int, note: str) -> str:
    lines = text.splitlines(keepends=True)
    lines[line] = lines[line].rstrip("\n") + f"  {note}\n"
    return "".join(lines)


def test_comment_edits_after_a_code_edit_parse_nothing(project: Path) -> None:
    """A cold run of many files stores no code digest (tokenizing them all would
    cost a tenth of its parse); the edit after it does. From then on, a comment
    reworded or added after a line is answered unparsed, while a suppression,
    a comment inside brackets or a comment line above code is parsed, and
    every outcome is the one an uncached run gives."""
    populate(project, n=20)
    assert run_engine(project, use_cache=True).files_parsed > MAX_MISSES
    path = project / "app" / "mod00.py"
    lines = path.read_text().splitlines()
    seed_line = next(i for i, t in enumerate(lines) if t.startswith("    return get_server_args"))

    def run(text: str, parsed: int) -> list[tuple[str, str, int, str]]:
        path.write_text(text)
        out = run_engine(project, use_cache=True)
        assert out.files_parsed == parsed, text
        assert _key(out) == _key(run_engine(project))
        return _key(out)

    code = path.read_text().replace(".tp_size", ".dp_size")
    assert len(run(code, 1)) == 20
    run(code + "\n# appended note\n", 0)
    run(_noted(code, seed_line, "# trailing note"), 0)
    run(_noted(code, seed_line, "# reworded trailing note"), 0)
    found = run(_noted(code, seed_line, "# ctxlint: ignore[CTX101] a pinned read"), 1)
    assert len(found) == 19  # suppressed
    bracketed = code.replace("get_server_args()", "get_server_args(  # inside\n    )")
    run(bracketed, 1)
    run(bracketed.replace("# inside", "# inside, reworded"), 1)
    run("# a note above the code\n" + code, 1)


def test_edit_that_changes_the_facts_derives_again(project: Path) -> None:
    populate(project, n=6)
    run_engine(project, use_cache=True)
    edited = project / "app" / "mod00.py"
    edited.write_text(edited.read_text() + "\nEXTRA = get_server_args().dp_size\n")
    out = run_engine(project, use_cache=True)
    assert out.files_parsed == 1
    assert out.program.files  # derived afresh
    assert _key(out) == _key(run_engine(project)) and len(_key(out)) == 7


def test_garbage_cache_file_is_not_fatal(project: Path) -> None:
    """A cache file that is not sqlite at all: the run completes correctly, and
    the cache is rebuilt so the next run is warm again."""
    populate(project, n=6)
    expected = _key(run_engine(project))
    db = project / CACHE / "facts.sqlite"
    db.parent.mkdir()
    db.write_bytes(b"this is not a database\x00" * 200)
    assert _key(run_engine(project, use_cache=True)) == expected
    warm = run_engine(project, use_cache=True)
    assert _key(warm) == expected
    assert warm.files_parsed == 0


def test_cache_with_a_foreign_table_is_not_fatal(project: Path) -> None:
    """A real sqlite file whose `facts` table has another shape is skipped."""
    populate(project, n=3)
    expected = _key(run_engine(project))
    db = project / CACHE / "facts.sqlite"
    db.parent.mkdir()
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE facts (something INTEGER)")
    con.commit()
    con.close()
    assert _key(run_engine(project, use_cache=True)) == expected


def test_corrupt_rows_are_misses(tmp_path: Path) -> None:
    """A row that does not decompress is treated as absent, not raised."""
    cache = FactCache(tmp_path / "c")
    cache.put_many({"good": b"{}"})
    assert cache.db is not None
    cache.db.execute("INSERT INTO facts (key, data) VALUES ('bad', x'00ff00')")
    got = cache.get_many(["good"])
    assert got == {"good": b"{}"}
    assert "bad" not in cache.get_many(["bad"])
    cache.close()


def test_cache_folder_gets_a_gitignore(project: Path) -> None:
    """The cache folder ignores itself so it is never committed."""
    populate(project, n=1)
    run_engine(project, use_cache=True)
    gitignore = project / CACHE / ".gitignore"
    assert gitignore.is_file()
    assert "*" in gitignore.read_text().split()


def test_no_cache_writes_no_cache(project: Path) -> None:
    """--no-cache neither reads nor creates the cache folder."""
    populate(project, n=3)
    assert cli("check", "--no-cache", cwd=project).returncode == 1
    assert not (project / CACHE).exists()


def test_cache_dir_is_configurable(project: Path) -> None:
    """`cache-dir` moves the cache."""
    populate(project, n=3)
    cfg = project / "pyproject.toml"
    cfg.write_text(cfg.read_text() + 'cache-dir = "build/lintcache"\n')
    run_engine(project, use_cache=True)
    assert (project / "build" / "lintcache" / "facts.sqlite").is_file()
    assert not (project / CACHE).exists()
    assert run_engine(project, use_cache=True).files_parsed == 0


def test_concurrent_runs_share_a_cold_cache(project: Path) -> None:
    """Two processes starting on a cold cache both succeed with identical output,
    and leave an intact cache holding every file's facts."""
    populate(project, n=24)
    cmd = [sys.executable, "-m", "ctxlint.cli", "check", "--format", "json", "--jobs", "1"]
    procs = [
        subprocess.Popen(cmd, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(2)
    ]
    results = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [1, 1], [err for _, err in results]
    assert results[0][0] == results[1][0]
    assert b'"CTX201"' in results[0][0]
    con = sqlite3.connect(project / CACHE / "facts.sqlite")
    try:
        assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        (rows,) = con.execute("SELECT count(*) FROM facts").fetchone()
    finally:
        con.close()
    assert rows >= 24  # keyed by content: both runs wrote the same keys, no duplicates


def test_partly_warm_run_sees_files_in_the_same_order(project: Path) -> None:
    """Hits and misses mixed: the whole-program phase sees the files in the same
    order as a cold run (rules must not see cache state)."""
    populate(project, n=6)
    cold = run_engine(project, use_cache=True, memo=False)
    edited = project / "app" / "mod00.py"
    edited.write_text(edited.read_text() + "\nLATE = 1\n")  # a new statement: a miss
    mixed = run_engine(project, use_cache=True, memo=False)
    assert mixed.files_parsed == 1
    assert list(mixed.program.files) == list(cold.program.files)
    assert _key(mixed) == _key(cold)


LEGACY = "--config", "examples/legacy_app/ctxlint.toml", "--jobs", "1", "."
ENTRY = """\
from ctxrt.context import get_serving, publish


def run(args):
    port = get_serving().port
    publish(args)
    return port
"""


def legacy_tree(root: Path) -> Path:
    """The runtime, examples/legacy_app and its baseline, copied under `root`."""
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", ".ctxlint_cache")
    shutil.copytree(REPO / "src" / "ctxrt", root / "src" / "ctxrt", ignore=skip)
    shutil.copytree(REPO / "examples" / "legacy_app", root / "examples/legacy_app", ignore=skip)
    shutil.copy2(REPO / "examples" / "__init__.py", root / "examples" / "__init__.py")
    (root / "baselines").mkdir()
    shutil.copy2(REPO / "baselines" / "legacy_app.json", root / "baselines" / "legacy_app.json")
    return root


def test_a_copied_file_gets_the_facts_of_its_own_module(tmp_path: Path) -> None:
    """Issue 11 D1: facts hold names derived from the module, so a byte-identical
    copy at another path must not be answered with the original's facts. The
    copy's CTX301 finding is new: the warm run fails `--strict` as the cold one does."""
    root = legacy_tree(tmp_path / "repo")
    (root / "examples/legacy_app/entry.py").write_text(ENTRY)
    pinned = cli("baseline", "update", "--allow-growth", "--reason", "pin", *LEGACY, cwd=root)
    assert pinned.returncode == 0, pinned.stderr
    (root / "examples/legacy_app/a_entry.py").write_text(ENTRY)
    warm = cli("check", "--strict", "--format", "json", *LEGACY, cwd=root)
    cold = cli("check", "--strict", "--format", "json", "--no-cache", *LEGACY, cwd=root)
    assert (warm.returncode, cold.returncode) == (1, 1), warm.stderr + cold.stderr
    assert warm.stdout == cold.stdout
    new = [f for f in json.loads(warm.stdout)["findings"] if f["status"] == "new"]
    assert [(f["rule"], f["path"]) for f in new] == [("CTX301", "examples/legacy_app/a_entry.py")]


def _json_check(project: Path, *extra: str) -> tuple[int, str, str]:
    out = cli("check", "--format", "json", "--jobs", "1", *extra, cwd=project)
    return out.returncode, out.stdout, out.stderr


def _damage(db: Path, how: str) -> None:
    data = db.read_bytes()
    if how == "truncated":
        db.write_bytes(data[: len(data) // 2])
    else:  # the table's and its index's first pages overwritten
        db.write_bytes(data[:4096] + b"\xab" * 8192 + data[3 * 4096 :])


@pytest.mark.parametrize("how", ["truncated", "page-corrupted"])
def test_a_damaged_database_is_rebuilt_saying_so_once(project: Path, how: str) -> None:
    """Issue 11 D8: sqlite's "database disk image is malformed" is not a reason
    for every later run to stay cold without a word: the cache is rebuilt,
    one line on stderr says so, the output is the cold one, the next run is warm."""
    populate(project, n=24)
    cold = _json_check(project, "--no-cache")
    assert _json_check(project)[:2] == cold[:2]
    db = project / CACHE / "facts.sqlite"
    assert not Path(f"{db}-wal").exists()  # the last connection folded the log in
    _damage(db, how)
    rc, stdout, stderr = _json_check(project)
    assert (rc, stdout) == cold[:2]
    assert stderr.splitlines() == [
        f"ctxlint: the cache {db} was damaged (database disk image is malformed); rebuilt it"
    ]
    assert _json_check(project) == cold  # quiet again
    assert run_engine(project, use_cache=True).files_parsed == 0


# Entries that decompress but are not what ctxlint writes (issue 11 D18). (b"0"
# is not among them: it is a well-formed prefilter decision, "no token here".)
FOREIGN = [b"{}", b"[]", b"null", b'"x"', b"2", b'{"module": 1}', b"not json", b"\xff\xfe"]


def _rewrite_rows(db: Path, change: Callable[[str, bytes], bytes | None]) -> int:
    """Every row's data replaced by change(key, data) (None: the row is deleted),
    signed with this user's key as ctxlint signs it: an entry ctxlint itself
    could have written."""
    mac_key = load_key()
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT key, data FROM facts").fetchall()
        for key, data in rows:
            new = change(key, zlib.decompress(data[MAC_SIZE:]))
            if new is None:
                con.execute("DELETE FROM facts WHERE key = ?", (key,))
            else:
                signed = sign(mac_key, key, zlib.compress(new))
                con.execute("UPDATE facts SET data = ? WHERE key = ?", (signed, key))
        con.commit()
    finally:
        con.close()
    return len(rows)


@pytest.mark.parametrize("foreign", FOREIGN, ids=[f.decode("latin-1") for f in FOREIGN])
def test_entries_of_another_shape_are_misses(
    project: Path, foreign: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every entry (facts, prefilter, rounds, outcomes, stat signatures) holding
    something else: the run is the cold one, the entries are replaced, and the
    run after is warm."""
    monkeypatch.setattr(sources, "RACY_NS", -(10**12))  # signatures recorded at once
    populate(project, n=9)
    cold = _json_check(project, "--no-cache")
    assert _json_check(project)[:2] == cold[:2]
    kinds = set()

    def foreign_data(key: str, data: bytes) -> bytes:
        kinds.add(key.split(":")[0])
        return foreign

    assert _rewrite_rows(project / CACHE / "facts.sqlite", foreign_data) > 9
    assert {"f2", "fd", "pf", "round", "derived", "run", "stat"} <= kinds
    assert _json_check(project)[:2] == cold[:2]
    assert _json_check(project) == cold
    assert run_engine(project, use_cache=True).files_parsed == 0
    # the replaced entries' digests were replaced with them: a run that reads the
    # entries back (an edit that changes facts: the program is derived again)
    # finds each one as its digest says, and does not start over without the cache
    with (project / "app" / "mod00.py").open("a") as fh:
        fh.write("\n\ndef _added() -> int:\n    return 1\n")
    rc, _, stderr = _json_check(project)
    assert (rc, stderr) == (cold[0], "")


def test_rule_facts_of_another_shape_run_again_without_the_cache(project: Path) -> None:
    """Facts entries of the right outline whose rule facts are not what the
    rules wrote: the run is done again without reading the cache (one line
    says so) and gives the cold output; the entries are replaced."""
    populate(project, n=9)
    cold = _json_check(project, "--no-cache")
    assert _json_check(project)[:2] == cold[:2]

    def odd_facts(key: str, data: bytes) -> bytes | None:
        if key.split(":")[0] in ("run", "derived", "round"):
            return None  # make the run decode the facts
        if key.startswith(("fd:", "cd:")):  # an entry's digest, a code digest's content
            return data  # the digests of the entries as written: they no longer match
        facts = json.loads(data)
        if isinstance(facts, dict) and facts.get("facts"):
            facts["facts"] = {rule: 12345 for rule in facts["facts"]}
            return json.dumps(facts).encode()
        return data

    _rewrite_rows(project / CACHE / "facts.sqlite", odd_facts)
    rc, stdout, stderr = _json_check(project)
    assert (rc, stdout) == cold[:2]
    assert len(stderr.splitlines()) == 1
    assert stderr.startswith("ctxlint: the cache held an entry this version cannot use (")
    assert stderr.endswith("); ran again without reading it\n")
    assert _json_check(project) == cold


@pytest.mark.parametrize("cache", ["none", "warm"])
def test_a_bug_is_reported_as_one(
    project: Path, monkeypatch: pytest.MonkeyPatch, cache: str
) -> None:
    """The fallback is for what the cache served: an error in a rule is an
    internal error, in one line, with no cache (not retried) or a warm one
    (the retry without reading the cache raises it again: no line blames the cache)."""
    populate(project, n=3)
    extra = ("--no-cache",) if cache == "none" else ()
    if cache == "warm":
        assert _json_check(project)[0] == 1
        (project / "app" / "mod00.py").write_text("VALUE = 0\n")  # the stored outcome misses
    from ctxlint.rules import ctx101_seed_read

    def broken(self: object, program: object) -> object:
        raise KeyError("bug")

    monkeypatch.setattr(type(ctx101_seed_read.RULE), "derive", broken)
    rc, stdout, stderr = _json_check(project, *extra)
    assert (rc, stdout) == (2, "")
    assert len(stderr.splitlines()) == 1
    assert stderr.startswith("ctxlint: internal error: KeyError: 'bug'")


def test_new_extractor_code_extracts_every_file_again(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 20: facts made by other code are never read back. After a run with
    the cache, the extractor changes (CTX201's visitor stops reporting writes)
    and so do the code and run-outcome versions (without the latter the stored
    outcome would be replayed): every file is extracted again and the output is
    the one `--no-cache` gives, without the old CTX201 findings."""
    populate(project, n=6)
    before = run_engine(project, use_cache=True)
    assert {f.rule for f in before.findings} == CORE
    monkeypatch.setattr(engine, "CODE_VERSION", f"{engine.CODE_VERSION}-next")
    monkeypatch.setattr(engine, "RUN_VERSION", f"{engine.RUN_VERSION}-next")
    monkeypatch.setattr(record_writes.RecordWriteVisitor, "finish", lambda self: None)
    cold = run_engine(project)
    after = run_engine(project, use_cache=True)
    assert after.files_parsed == cold.files_parsed == before.files_parsed > 6
    assert [f.to_json() for f in after.findings] == [f.to_json() for f in cold.findings]
    assert {f.rule for f in after.findings} == CORE - {"CTX201"}


def test_facts_entries_are_checked_against_their_module_and_kind() -> None:
    """A facts entry read back must be for the module asked about (a second
    guard against D1) and of the kind the round needs."""
    good = json.dumps({"module": "app.a", "facts": {}}).encode()
    assert facts_entry(good, "app.a") == {"module": "app.a", "facts": {}}
    assert facts_entry(good, "app.b") is None  # another module's facts
    assert facts_entry(good, "app.a", schema=True) is None  # the vocabulary round's lack a schema
    schema = json.dumps({"module": "app.a", "facts": {}, "schema": {}}).encode()
    assert facts_entry(schema, "app.a", schema=True) is not None
    assert facts_entry(b"{}", None) == {}  # the syntax check: path-free
    assert facts_entry(b'{"error": "syntax error"}', None) == {"error": "syntax error"}
    assert facts_entry(good, None) is None
    assert facts_entry(b'{"module": "app.a", "error": 3}', "app.a") is None
