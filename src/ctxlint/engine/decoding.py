"""The facts of a run's entries, decoded into the program.

All that are not decoded yet go in at once, in path order, when a rule must
answer again or the run derives (`decode_all`). While the pool parses a
round's misses the parent would otherwise wait, so it decodes the cached
entries a few at a time ahead of that (`step`): on an edited run the edited
file's parse and the decoding of every other file's facts then overlap.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ctxlint.cache.entries import facts_entry
from ctxlint.core.findings import FileError
from ctxlint.engine.blobs import Blobs
from ctxlint.program.core import Program

# Entries one step decodes: few, so that a worker's result waits little for it
STEP = 32

# (path, entry) -> (facts, entry): the engine's decoding, which extracts the
# file again when its entry is not of the shape this code writes
Decode = Callable[[str, bytes], tuple[dict[str, Any], bytes]]
# Per-file reading past the JSON that every derivation does anyway (a module's
# call summary): done in `step` too, on the core the pool leaves idle
Prepare = Callable[[dict[str, Any]], None]


class FactsDecoder:
    def __init__(
        self,
        blobs: Blobs,
        program: Program,
        errors: list[FileError],
        modules: dict[str, str],
        decode: Decode,
        earlier: Mapping[str, tuple[bytes, dict[str, Any]]],
        prepare: Prepare | None = None,
    ) -> None:
        self.blobs, self.program, self.errors = blobs, program, errors
        # path -> (entry digest, facts) of an earlier run (engine.start): an entry
        # with that digest is not decoded again
        self._earlier = earlier
        self._modules = modules
        self._decode = decode
        self._prepare = prepare
        self._done: set[str] = set()
        self._ahead: dict[str, dict[str, Any]] = {}  # decoded by step, not in the program yet
        self._passed: set[str] = set()  # entries step left to decode_all

    def _not_ahead(self) -> set[str]:
        left = set(self.blobs) - self._done - self._passed - self._ahead.keys()
        return {p for p in left if not self._as_earlier(p)}

    def _as_earlier(self, path: str) -> bool:
        earlier = self._earlier.get(path)
        return earlier is not None and earlier[0] == self.blobs.digests.get(path)

    def pending(self) -> bool:
        """Whether `step` has anything left to do."""
        return bool(self._not_ahead())

    def step(self) -> bool:
        """A few entries' facts decoded ahead (they are wanted unless the whole
        outcome replays); False when none was left. One that needs more than
        decoding (gone from the cache, or not of our shape) is left to
        decode_all, which may extract it again: a step never does."""
        todo = sorted(self._not_ahead())[:STEP]
        if not todo:
            return False
        blobs = self.blobs
        blobs.load(todo, extract=False)
        for path in todo:
            facts = facts_entry(blobs[path], self._modules[path]) if blobs.in_hand(path) else None
            if facts is None:
                self._passed.add(path)
            else:
                self._ahead[path] = facts
                if self._prepare is not None:
                    self._prepare(facts)
        return True

    def decode_all(self) -> None:
        """Facts into the program for every entry not decoded yet, in path
        order (however many `step` decoded ahead); a file's error into errors."""
        blobs, earlier, modules = self.blobs, self._earlier, self._modules
        todo = sorted(set(blobs) - self._done)
        digests = blobs.digests
        same = {p for p in todo if (e := earlier.get(p)) is not None and e[0] == digests.get(p)}
        blobs.load(p for p in todo if p not in same)
        files: dict[str, dict[str, Any]] = {}  # (into the program at once, in path order)
        for path in todo:
            facts = earlier[path][1] if path in same else self._ahead.pop(path, None)
            if facts is None:
                facts, blob = self._decode(path, blobs[path])
                if blob is not blobs[path]:  # a bad entry, extracted again
                    blobs.replace(path, blob)
                if self._prepare is not None and "error" not in facts:
                    # now, file by file: what it reads stands in the entry for
                    # the JSON, which goes before the next file's is made (all
                    # files' JSON at once was most of a cold run's peak)
                    self._prepare(facts)
            blobs.release(path, modules[path])
            if "error" in facts:
                self.errors.append(FileError(path, facts["error"]))
            else:
                files[path] = facts
        self._done.update(todo)
        if files:
            self.program.files.update(files)
