"""Starting a check where a check of nearly the same tree ended (a fix's re-check).

The tree is the earlier one with the files `changed` rewritten. The first round
takes the earlier rounds' tokens, and the earlier prefilter's decisions for
every file but those; the facts decoded earlier are taken as they are for
every entry that is byte for byte the same. So the rounds that found the
tokens, the scan of every file and the decoding of every unchanged file's
facts are saved. More tokens than a plain check's only let in files no rule
needs, which change no finding (tests/engine/test_prefilter.py); derived sets may
grow with them, so such a run's outcome is kept apart (Engine._inputs).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxlint.engine.outcome import RoundsEnd

# path -> (its entry's digest, the facts decoded from that entry)
Decoded = Mapping[str, tuple[bytes, dict[str, Any]]]


@dataclass(frozen=True)
class Start:
    rounds: RoundsEnd
    changed: frozenset[str] = frozenset()
    decoded: Decoded = field(default_factory=dict)

    def split(self, waiting: list[str]) -> tuple[set[str], list[str]]:
        """The first round's files: those let in as the earlier rounds decided,
        and those to scan (the changed ones); the others stay out."""
        kept = {p for p in waiting if p in self.rounds.let_in and p not in self.changed}
        return kept, [p for p in waiting if p in self.changed]
