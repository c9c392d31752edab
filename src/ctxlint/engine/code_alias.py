"""Facts found by code digest: a file edited only where no fact looks (a comment
reworded or added after a line, comment lines appended: facts.code_digest)
takes the facts its earlier content had, with no parse.

The cache maps a code digest to the content hash last extracted with it
(content to content: nothing path-derived), and the facts are then looked up
under that content's key for the same path and module, as any fact key is.
Only an edit's few misses are tokenized (about a tenth of a parse each): a
cold run's are all parsed, and it stores no alias.
"""

from __future__ import annotations

from ctxlint.cache.store import FactCache
from ctxlint.engine.keys import CODE_VERSION, fact_key
from ctxlint.facts.code_digest import code_digest

MAX_MISSES = 16  # more misses than this: not an edit, tokenizing would only add time
# An entry that records a parse error starts so (facts JSON has sorted keys):
# an error's message quotes the line it is on, comment and all, so none is shared
_ERROR_ENTRY = b'{"error"'

# a miss: (path, module, source)
Miss = tuple[str, str, bytes]


def _alias_key(digest: str) -> str:
    return f"cd:{CODE_VERSION}:{digest}"


class CodeAliases:
    def __init__(self, cache: FactCache, misses: list[Miss]) -> None:
        self._cache = cache
        self.digests: dict[str, str] = {}  # path -> code digest, for the misses tokenized
        if 0 < len(misses) <= MAX_MISSES:
            for path, _, source in misses:
                digest = code_digest(source)
                if digest is not None:
                    self.digests[path] = digest

    def find(self, misses: list[Miss], tag: str, syntax_only: bool) -> dict[str, bytes]:
        """path -> the entry an earlier content with the same code digest has
        for this path and module (and tag), for the misses that have one."""
        if not self.digests:
            return {}
        aliases = self._cache.get_many(_alias_key(d) for d in self.digests.values())
        keys: dict[str, str] = {}
        for path, module, _ in misses:
            digest = self.digests.get(path)
            earlier = aliases.get(_alias_key(digest)) if digest else None
            if earlier is not None:
                binding = None if syntax_only else (path, module)
                keys[path] = fact_key(earlier.decode("ascii", "replace"), tag, binding)
        found = self._cache.get_many(keys.values())
        return {p: found[k] for p, k in keys.items() if k in found}

    def learn(self, extracted: dict[str, bytes], hashes: dict[str, str]) -> None:
        """Remember the content each digest was extracted from (not an error's)."""
        self._cache.put_many(
            {
                _alias_key(self.digests[p]): hashes[p].encode("ascii")
                for p, blob in extracted.items()
                if p in self.digests and not blob.startswith(_ERROR_ENTRY)
            }
        )
