"""Navigation's places in LSP's terms (lsp_navigation.Texts): a column counts
UTF-16 units, and what each file's columns need is kept between answers by
the content hash the check read, so that the references of a leaf named in a
hundred files read none of them again."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ctxlint.discover.sources import content_hash
from ctxlint.server.diagnostics import utf16
from ctxlint.server.lsp_navigation import Texts

WIDE = 'x = 1\nname = "\U0001f600é"; get_parallel().tp_size\n'


def project(root: Path, hashes: dict[str, str], good: dict[str, str] | None = None) -> Any:
    resident = SimpleNamespace(hashes=hashes)
    return SimpleNamespace(checker=SimpleNamespace(resident=resident), good=good or {}, root=root)


def test_columns_are_utf16_and_a_known_file_is_not_read_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "wide.py").write_text(WIDE, encoding="utf-8")
    (tmp_path / "plain.py").write_text("y = get_parallel().tp_size\n", encoding="utf-8")
    hashes = {p: content_hash((tmp_path / p).read_bytes()) for p in ("wide.py", "plain.py")}
    known: dict[str, Any] = {}
    texts = Texts(project(tmp_path, hashes), known)
    line = WIDE.splitlines()[1]
    column = line.index("tp_size")  # code points
    assert texts.position("wide.py", 2, column).character == utf16(line, column) == column + 1
    assert texts.position("wide.py", 1, 4).character == 4
    assert texts.position("plain.py", 1, 19).character == 19
    assert known["plain.py"] == (hashes["plain.py"], None)  # ASCII: no lines kept
    assert known["wide.py"] == (hashes["wide.py"], {1: line})  # its one wide line
    read: list[Path] = []
    monkeypatch.setattr(Path, "read_bytes", lambda self: read.append(self) or b"")
    again = Texts(project(tmp_path, hashes), known)
    assert again.position("wide.py", 2, column).character == column + 1
    assert read == []  # a later answer reads no file it knows in that content
    changed = {**hashes, "wide.py": "another content"}  # checked again since: read again
    Texts(project(tmp_path, changed), known).position("wide.py", 2, column)
    assert read == [tmp_path / "wide.py"]


def test_a_buffer_counts_as_the_check_read_it(tmp_path: Path) -> None:
    text = WIDE.replace("x = 1", "x = 'ü'")
    hashes = {"b.py": content_hash(text.encode("utf-8"))}
    texts = Texts(project(tmp_path, hashes, {"b.py": text}), {})
    assert texts.position("b.py", 1, 6).character == 6  # (no file on disk at all)
    line = text.splitlines()[1]
    assert texts.position("b.py", 2, len(line)).character == utf16(line, len(line))
