"""A cache that comes with the checked tree cannot change an answer (issue 34 N1).

Rows are signed with a key outside the tree (ctxlint.cache.signing): a row forged
or shipped by someone else is a miss, and a cache folder that git tracks is not
used at all. The forged rows below are the attack the issue describes: a pull
request that force-adds `.ctxlint_cache/facts.sqlite` whose stored outcome for
its own tree holds one finding fewer.
"""

from __future__ import annotations

import json
import os
import sqlite3
import stat
import subprocess
import zlib
from pathlib import Path

import pytest
from conftest import run_cli
from helpers import populate, run_engine, write

from ctxlint.cache.signing import MAC_SIZE, load_key, sign

SEED_READ = (
    "from specrt.context import get_server_args\n\n\ndef tp() -> int:\n"
    "    return get_server_args().tp_size\n"
)


def _env(tmp_path: Path, key: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "CTXLINT_CACHE_KEY"}
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    if key is not None:
        env["CTXLINT_CACHE_KEY"] = key
    return env


def _check(root: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    return run_cli("check", "--format", "json", "--jobs", "1", *extra, cwd=root, env=env)


def _rules(res: subprocess.CompletedProcess[str]) -> list[str]:
    return sorted(f["rule"] for f in json.loads(res.stdout)["findings"])


def _run_rows(db: Path) -> dict[str, bytes]:
    with sqlite3.connect(db) as conn:
        return dict(conn.execute("SELECT key, data FROM facts WHERE key LIKE 'run:%'"))


def _store(db: Path, row: str, data: bytes) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE facts SET data = ? WHERE key = ?", (data, row))


def _key_of(secret: str) -> bytes:
    os.environ["CTXLINT_CACHE_KEY"] = secret
    try:
        return load_key()
    finally:
        del os.environ["CTXLINT_CACHE_KEY"]


def test_a_shipped_cache_cannot_hide_a_finding(project: Path, tmp_path: Path) -> None:
    attacker = _env(tmp_path, "the attacker's key")
    db = project / ".ctxlint_cache" / "facts.sqlite"
    assert _rules(_check(project, attacker)) == []
    (clean,) = _run_rows(db)
    write(project, {"app/seed.py": SEED_READ})
    assert _rules(_check(project, attacker)) == ["CTX101"]
    (dirty,) = set(_run_rows(db)) - {clean}
    victim = _env(tmp_path, "the maintainer's key")

    # the clean tree's stored outcome copied, as it is, under the new tree's key
    _store(db, dirty, _run_rows(db)[clean])
    shipped = _check(project, victim, "--strict")
    assert _rules(shipped) == ["CTX101"] and shipped.returncode == 1

    # signed again by the attacker: it answers the attacker's own runs ...
    clean_outcome = _run_rows(db)[clean][MAC_SIZE:]
    zlib.decompress(clean_outcome)  # a well-formed row
    _store(db, dirty, sign(_key_of("the attacker's key"), dirty, clean_outcome))
    assert _rules(_check(project, attacker)) == []
    # ... and nobody else's
    assert _rules(_check(project, victim)) == ["CTX101"]


def test_facts_signed_by_another_key_are_parsed_again(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    populate(project, n=6)
    monkeypatch.setenv("CTXLINT_CACHE_KEY", "one user")
    assert run_engine(project, use_cache=True).files_parsed > 6
    assert run_engine(project, use_cache=True, memo=False).files_parsed == 0
    monkeypatch.setenv("CTXLINT_CACHE_KEY", "another user")
    theirs = run_engine(project, use_cache=True, memo=False)
    assert theirs.files_parsed > 6  # nothing of the first user's was read
    assert [f.fingerprint for f in theirs.findings] == [
        f.fingerprint for f in run_engine(project).findings
    ]


def test_a_cache_folder_git_tracks_is_not_used(project: Path, tmp_path: Path) -> None:
    env = _env(tmp_path, "k")
    write(project, {"app/seed.py": SEED_READ})
    _check(project, env)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(project)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-f", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "ship the cache"], check=True)
    before = (project / ".ctxlint_cache" / "facts.sqlite").read_bytes()
    res = _check(project, env)
    assert "is tracked by git" in res.stderr and "running without it" in res.stderr
    assert _rules(res) == ["CTX101"]
    # not even written: the tracked file is left as it was
    assert (project / ".ctxlint_cache" / "facts.sqlite").read_bytes() == before


def test_the_key_is_made_once_private_and_a_shared_one_is_refused(
    project: Path, tmp_path: Path
) -> None:
    env = _env(tmp_path, None)
    first = _check(project, env)
    key = tmp_path / "state" / "ctxlint" / "cache-key"
    assert first.returncode == 0 and "warning" not in first.stderr
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    made = key.read_bytes()
    _check(project, env)
    assert key.read_bytes() == made  # kept, not made again
    key.chmod(0o644)
    shared = _check(project, env)
    assert shared.returncode == 0
    assert "must be yours alone" in shared.stderr and "running without the cache" in shared.stderr


@pytest.mark.parametrize("name", ["facts.sqlite", "facts.sqlite-wal"])
def test_a_shipped_link_in_the_cache_folder_is_never_written_through(
    project: Path, tmp_path: Path, name: str
) -> None:
    """An unpacked archive (no git to say the folder is shipped) whose
    `.ctxlint_cache/facts.sqlite` links to a database elsewhere: sqlite wrote
    its table into that database (hwalk). The cache is not used; the target is
    left byte for byte."""
    theirs = tmp_path / "theirs.db"
    with sqlite3.connect(theirs) as conn:
        conn.execute("CREATE TABLE mine (x)")
    conn.close()
    before = theirs.read_bytes()
    cache = project / ".ctxlint_cache"
    cache.mkdir()
    (cache / name).symlink_to(theirs)
    write(project, {"app/seed.py": SEED_READ})
    res = _check(project, _env(tmp_path, "k"))
    assert _rules(res) == ["CTX101"]
    assert f"holds {name} as a symbolic link" in res.stderr and "running without it" in res.stderr
    assert theirs.read_bytes() == before
    assert (cache / name).is_symlink() and sorted(p.name for p in cache.iterdir()) == [name]


def test_the_daemons_lock_and_log_are_never_opened_through_a_link(
    project: Path, tmp_path: Path
) -> None:
    """`server.lock -> FILE` shipped in the cache folder: `--daemon start`
    truncated FILE to write its pid, and `server.log -> FILE` had the daemon's
    output appended (hwalk). Each is refused, saying which link, and FILE is
    left as it was."""
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    cache = project / ".ctxlint_cache"
    cache.mkdir()
    (cache / "server.lock").symlink_to(victim)
    for action in ("status", "start", "stop"):
        res = run_cli("server", "--daemon", action, cwd=project)
        assert res.returncode == 2, (action, res.stdout, res.stderr)
        assert "server.lock is a symbolic link" in res.stderr, res.stderr
    (cache / "server.lock").unlink()
    (cache / "server.log").symlink_to(victim)
    res = run_cli("server", "--daemon", "start", cwd=project)
    assert res.returncode == 2 and "server.log is a symbolic link" in res.stderr, res.stderr
    assert victim.read_text() == "precious\n"
