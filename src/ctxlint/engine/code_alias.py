"""Facts found by code digest: a file edited only where no fact looks (a comment
reworded or added after a line, comment lines appended: facts.code_digest)
takes the facts its earlier content had, with no parse.

The cache maps a code digest to the content hash last extracted with it
(content to content: nothing path-derived), and the facts are then looked up
under that content's key for the same path and module, as any fact key is.
Only an edit's few misses are tokenized (about a tenth of a parse each): a
cold run's are all parsed, and it stores no alias. With a pool, the misses go
to the workers at once and the parent tokenizes meanwhile: a code edit loses
no time to it, and a comment edit stops the pool when every miss is found.
"""

from __future__ import annotations

from collections.abc import Callable

from ctxlint.cache.store import FactCache
from ctxlint.engine.keys import CODE_VERSION, fact_key
from ctxlint.facts.code_digest import code_digest

MAX_MISSES = 16  # more misses than this: not an edit, tokenizing would only add time
# An entry that records a parse error starts so (facts JSON has sorted keys):
# an error's message quotes the line it is on, comment and all, so none is shared
_ERROR_ENTRY = b'{"error"'

# a miss: (path, module, source)
Miss = tuple[str, str, bytes]


def _digest(_path: str, source: bytes) -> str | None:
    return code_digest(source)


def _alias_key(digest: str) -> str:
    return f"cd:{CODE_VERSION}:{digest}"


class CodeAliases:
    def __init__(self, cache: FactCache, misses: list[Miss], tag: str, syntax_only: bool) -> None:
        self._cache = cache
        self._misses = misses if 0 < len(misses) <= MAX_MISSES else []
        self._tag, self._syntax_only = tag, syntax_only
        self._worked = False
        self.digests: dict[str, str] = {}  # path -> code digest, for the misses tokenized
        self.found: dict[str, bytes] = {}  # path -> its earlier content's entry (`find`)

    @property
    def wanted(self) -> bool:
        """Whether these misses are an edit's few: worth a digest each."""
        return bool(self._misses)

    @property
    def pending(self) -> bool:
        return bool(self._misses) and not self._worked

    def _work(self, digest_of: Callable[[str, bytes], str | None] | None = None) -> None:
        if not self._worked:
            self._worked = True
            for path, _, source in self._misses:
                digest = (digest_of or _digest)(path, source)
                if digest is not None:
                    self.digests[path] = digest

    def idle(self, then: Callable[[], bool] | None, stop: str) -> Callable[[], bool | str]:
        """A pool's idle step (core.pool): the digests first, and `stop` once every
        miss is found (no parse is wanted), then `then`'s steps."""

        def step() -> bool | str:
            if self.pending:
                self.find()
                return stop if len(self.found) == len(self._misses) else True
            return then() if then is not None else False

        return step

    def find(self, digest_of: Callable[[str, bytes], str | None] | None = None) -> dict[str, bytes]:
        """`found`, filled: path -> the entry an earlier content with the same
        code digest has for this path and module (and tag), for the misses that
        have one. `digest_of(path, source)` in place of `code_digest` (a kept
        tree's, which tokenizes only what changed: engine.kept_tree)."""
        if self._worked:
            return self.found
        self._work(digest_of)
        if not self.digests:
            return self.found
        aliases = self._cache.get_many(_alias_key(d) for d in self.digests.values())
        keys: dict[str, str] = {}
        for path, module, _ in self._misses:
            digest = self.digests.get(path)
            earlier = aliases.get(_alias_key(digest)) if digest else None
            if earlier is not None:
                binding = None if self._syntax_only else (path, module)
                keys[path] = fact_key(earlier.decode("ascii", "replace"), self._tag, binding)
        found = self._cache.get_many(keys.values())
        self.found.update((p, found[k]) for p, k in keys.items() if k in found)
        return self.found

    def learn(self, extracted: dict[str, bytes], hashes: dict[str, str]) -> None:
        """Remember the content each digest was extracted from (not an error's)."""
        self._work()
        self._cache.put_many(
            {
                _alias_key(self.digests[p]): hashes[p].encode("ascii")
                for p, blob in extracted.items()
                if p in self.digests and not blob.startswith(_ERROR_ENTRY)
            }
        )
