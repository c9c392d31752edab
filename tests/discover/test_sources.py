"""Content hashes kept with stat signatures: an unchanged file is not read again,
a changed one always is, and a file changed too recently is not trusted."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ctxlint.cache.store import FactCache
from ctxlint.discover import sources as sources_module
from ctxlint.discover.sources import Sources, content_hash


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    root.mkdir()
    for name in ("a.py", "b.py"):
        (root / name).write_text(f"# {name}\n")
    return root


def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the files read from now on."""
    seen: list[str] = []
    real = Path.read_bytes

    def spy(self: Path) -> bytes:
        seen.append(self.name)
        return real(self)

    monkeypatch.setattr(Path, "read_bytes", spy)
    return seen


def test_settled_files_are_hashed_once(tree: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(sources_module, "RACY_NS", -(10**12))  # everything counts as settled
    cache = FactCache(tmp_path / "cache")
    first = Sources(tree, ["a.py", "b.py"], cache)
    assert first.hashes == {p: content_hash((tree / p).read_bytes()) for p in ("a.py", "b.py")}
    seen = reads(monkeypatch)
    second = Sources(tree, ["a.py", "b.py"], cache)
    assert second.hashes == first.hashes
    assert seen == []  # nothing read: the signatures matched
    assert second["a.py"] == b"# a.py\n"  # bytes are still there on demand
    assert seen == ["a.py"]


def test_a_changed_file_is_read_again_even_with_its_old_mtime(
    tree: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(sources_module, "RACY_NS", -(10**12))
    cache = FactCache(tmp_path / "cache")
    before = Sources(tree, ["a.py", "b.py"], cache).hashes
    st = os.stat(tree / "a.py")
    (tree / "a.py").write_text("# A.py\n")  # same size
    os.utime(tree / "a.py", ns=(st.st_atime_ns, st.st_mtime_ns))  # same mtime; ctime moves
    seen = reads(monkeypatch)
    after = Sources(tree, ["a.py", "b.py"], cache).hashes
    assert seen == ["a.py"]
    assert after["a.py"] == content_hash(b"# A.py\n") != before["a.py"]
    assert after["b.py"] == before["b.py"]


def test_a_file_changed_just_now_is_not_trusted(tree: Path, tmp_path: Path, monkeypatch) -> None:
    cache = FactCache(tmp_path / "cache")  # the real margin: these files were just written
    Sources(tree, ["a.py", "b.py"], cache)
    seen = reads(monkeypatch)
    Sources(tree, ["a.py", "b.py"], cache)
    assert sorted(seen) == ["a.py", "b.py"]


def test_unreadable_and_missing_files_are_errors(tree: Path, tmp_path: Path) -> None:
    found = Sources(tree, ["a.py", "gone.py"], FactCache(None))
    assert list(found) == ["a.py"] and "gone.py" not in found
    assert [e.path for e in found.errors] == ["gone.py"]
    assert found.errors[0].message.startswith("cannot read:")
    with pytest.raises(KeyError):
        found["gone.py"]


def test_signatures_of_another_layout_are_not_trusted(
    tree: Path, tmp_path: Path, monkeypatch
) -> None:
    """Issue 11 D18: the signature entry's key carries its layout, and an entry
    that is not of the layout (an older version's, a damaged one) is a miss,
    so a file is never given a hash its bytes do not have."""
    monkeypatch.setattr(sources_module, "RACY_NS", -(10**12))
    cache = FactCache(tmp_path / "cache")
    st = os.stat(tree / "a.py")
    wrong = "0" * 32
    signature = [st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino]
    layouts = {
        f"stat:{tree}": {"a.py": [*signature, wrong]},  # the key before it had a layout
        f"stat:{sources_module.STAT_LAYOUT}:{tree}": {
            "a.py": [*signature[:2], str(st.st_size), st.st_ino, wrong],  # a size as text
            "b.py": [*signature, wrong, "extra"],
        },
    }
    cache.put_many({k: json.dumps(v).encode() for k, v in layouts.items()})
    expected = {p: content_hash((tree / p).read_bytes()) for p in ("a.py", "b.py")}
    seen = reads(monkeypatch)
    assert Sources(tree, ["a.py", "b.py"], cache).hashes == expected
    assert sorted(seen) == ["a.py", "b.py"]


def test_signatures_kept_in_memory_answer_as_the_cache_entry_does(
    tree: Path, tmp_path: Path, monkeypatch
) -> None:
    """A resident's Signatures stand for the cache's entry: its runs read
    and decode the entry once, write it only when a signature changed, and
    hash exactly what runs without them hash (a changed file read again, an
    unchanged one not)."""
    from ctxlint.discover.sources import Signatures

    monkeypatch.setattr(sources_module, "RACY_NS", -(10**12))
    cache = FactCache(tmp_path / "cache")
    asked: list[object] = []
    real_get, real_put = cache.get_many, cache.put_many
    monkeypatch.setattr(cache, "get_many", lambda keys: asked.append(keys) or real_get(keys))
    put: list[object] = []
    monkeypatch.setattr(cache, "put_many", lambda items: put.append(items) or real_put(items))
    kept = Signatures()
    first = Sources(tree, ["a.py", "b.py"], cache, kept)
    assert len(asked) == 1 and len(put) == 1 and kept.recorded
    seen = reads(monkeypatch)
    again = Sources(tree, ["a.py", "b.py"], cache, kept)
    assert again.hashes == first.hashes and seen == [] and len(asked) == 1 and len(put) == 1
    (tree / "a.py").write_text("# A longer a.py\n")
    edited = Sources(tree, ["a.py", "b.py"], cache, kept)
    plain = Sources(tree, ["a.py", "b.py"], cache)  # (the entry as the resident wrote it)
    assert edited.hashes == plain.hashes
    assert edited.hashes["a.py"] == content_hash(b"# A longer a.py\n") != first.hashes["a.py"]
    assert seen == ["a.py"] and len(put) == 2
