"""The suite's memo of one file's facts, shared by the tests of one process.

Most tests run the engine from a cold start (no cache) over trees made of the same
files: the specrt fixture under every `project`, the examples' copies. A file's
facts depend only on what its cache key holds (engine.run: its bytes, path and
module, the code, the vocabulary, the target), so the extraction of a file with
the same inputs is answered from here: the engine still takes its cold path (it
misses its cache, "parses" each file, stores and digests the entries), only
LibCST's parse and the visitors' walk are skipped the second time. The key adds
the visitors' classes, so a test's own rule is not served another's facts.

Off: where a test may patch anything (it uses the `monkeypatch` fixture, or its
module names `mock` or a MonkeyPatch of its own), since a patched extractor makes
other facts than its key says; for a parse on a kept tree (the edit path: its own
parser); for a timed run (its clock is the point); in a pool's workers (only the
parent's in-process parse).
`CTXLINT_TEST_MEMO=check` extracts every hit again and compares (a self-check of
the key); `=off` turns the memo off.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

import pytest

import ctxlint.engine.run as engine_run
from ctxlint.engine import workers

MODE = os.environ.get("CTXLINT_TEST_MEMO", "on")
BUDGET = 256 << 20  # bytes of entries kept (least recently used go first)
# what in a test module's text says its tests may patch code out of pytest's sight
# (unittest.mock, pytest-mock, a MonkeyPatch of their own): derived per module; the
# `monkeypatch` fixture is seen in each test's fixtures
PATCHES = ("mock", "MonkeyPatch(", "MonkeyPatch.context")

_real_work = engine_run._work
_memo: OrderedDict[tuple[Any, ...], workers.Result] = OrderedDict()
_state = {"on": False, "bytes": 0, "hits": 0, "misses": 0, "pid": os.getpid()}
_visitor_keys: dict[int, tuple[list[Any], tuple[Any, ...]]] = {}
_vocab_keys: dict[int, tuple[Any, str]] = {}
_module_patches: dict[str, bool] = {}


def _visitors_key(visitors: list[tuple[str, type]]) -> tuple[Any, ...]:
    kept = _visitor_keys.get(id(visitors))
    if kept is None or kept[0] is not visitors:
        kept = _visitor_keys[id(visitors)] = (visitors, tuple(visitors))
    return kept[1]


def _vocab_key(vocab: Any) -> Any:
    """A vocabulary's JSON (a dict, worked out once per object), or the plain value."""
    if not isinstance(vocab, dict):
        return vocab
    kept = _vocab_keys.get(id(vocab))
    if kept is None or kept[0] is not vocab:
        if len(_vocab_keys) > 64:
            _vocab_keys.clear()
        kept = _vocab_keys[id(vocab)] = (vocab, json.dumps(vocab, sort_keys=True))
    return kept[1]


def _work(item: tuple[str, str, bytes], parser: Any = None) -> workers.Result:
    w = workers._WORKER
    if not _state["on"] or parser is not None or w["timed"] or os.getpid() != _state["pid"]:
        return _real_work(item, parser)
    path, module, source = item
    digest = hashlib.blake2b(source, digest_size=16).digest()
    key = (path, module, digest, _vocab_key(w["vocab"]), w["target"], _visitors_key(w["visitors"]))
    hit = _memo.get(key)
    if hit is None:
        _state["misses"] += 1
        hit = _real_work(item, parser)
        _memo[key] = hit
        _state["bytes"] += len(hit[1])
        while _state["bytes"] > BUDGET:
            _state["bytes"] -= len(_memo.popitem(last=False)[1][1])
    else:
        _state["hits"] += 1
        _memo.move_to_end(key)
        if MODE == "check":
            again = _real_work(item, parser)
            assert again[:2] == hit[:2] and again[3] == hit[3], f"memo differs for {path}"
    path, blob, clock, parts = hit
    return path, blob, dict(clock), None if parts is None else dict(parts)


engine_run._work = _work  # the name the engine's in-process parse calls


def memo_allowed(item: pytest.Item) -> bool:
    """Whether `item` may be served from the memo: it patches nothing."""
    if MODE == "off" or "monkeypatch" in getattr(item, "fixturenames", ()):
        return False
    where = str(getattr(item, "path", ""))
    if where not in _module_patches:
        try:
            text = item.path.read_text()  # type: ignore[attr-defined]
        except (AttributeError, OSError):
            text = PATCHES[0]
        _module_patches[where] = any(word in text for word in PATCHES)
    return not _module_patches[where]


@contextlib.contextmanager
def memo_on(on: bool) -> Iterator[None]:
    before, _state["on"] = _state["on"], on
    try:
        yield
    finally:
        _state["on"] = before


def stats() -> dict[str, int]:
    return {k: v for k, v in _state.items() if k != "pid" and k != "on"}
