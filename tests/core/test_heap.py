"""core.heap: freed heap pages go back to the system (glibc's malloc_trim)."""

from __future__ import annotations

import os
import sys

import pytest

from ctxlint.core import heap


def _rss() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc and /proc")
def test_freed_pages_go_back() -> None:
    if heap._malloc_trim() is None:
        pytest.skip("not glibc")
    # 1 KiB objects come from malloc, not pymalloc; keeping one in ten alive
    # leaves the freed ones in pages glibc would otherwise keep
    blocks = [bytes(1024) + bytes([i % 256]) for i in range(200_000)]
    kept = blocks[::10]
    del blocks
    before = _rss()
    assert heap.give_back() is True
    after = _rss()
    assert before - after > 50 * 2**20, (before, after)
    assert len(kept) == 20_000


def test_a_platform_without_malloc_trim_does_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "_malloc_trim", lambda: None)
    assert heap.give_back() is False
