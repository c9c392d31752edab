"""A fact cache that several checks of one tree share in memory.

What one check read or wrote is served to the next from memory, so a re-check
extracts only the edited files (with no cache folder too: then nothing reaches
the disk) and reads nothing back from sqlite. The fix's check and re-checks
share one; a resident front end (a language server) would keep one open.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ctxlint.cache.store import FactCache


class SharedCache(FactCache):
    def __init__(self, folder: Path | None) -> None:
        super().__init__(folder)
        self.memory: dict[str, bytes] = {}

    def get_many(self, keys: Iterable[str]) -> dict[str, bytes]:
        if not self.read:
            return {}
        keys = list(keys)
        found = {k: self.memory[k] for k in keys if k in self.memory}
        self.served += len(found)
        rest = [k for k in keys if k not in found]
        if rest:
            more = super().get_many(rest)
            self.memory.update(more)
            found.update(more)
        return found

    def put_many(self, items: dict[str, bytes]) -> None:
        self.memory.update(items)
        super().put_many(items)

    def close(self) -> None:
        """Kept open for the next check (`finish` closes it)."""

    def finish(self) -> None:
        super().close()
