"""The last edited buffer's LibCST module, kept in a resident front end's
process (a language server), so that an edit inside one top-level statement
parses only that statement (facts.splice) and its facts are walked here, with
no worker round trip for one file.

One module is kept, that of the last file extracted alone in a run (an
edit's one miss); a run of another file's edit replaces it, and closing the
buffer releases it. The code digest (facts.code_digest, for the comment-edit
aliases) is composed the same way: the kept text's lines less the left-out
comments are kept with it, and only the changed statement's lines are
tokenized again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctxlint.facts import code_digest as cd

if TYPE_CHECKING:  # LibCST is imported only by a run that parses (facts.splice)
    from ctxlint.facts.splice import Kept


@dataclass
class _Cut:
    """A text's digest lines (facts.code_digest.cut_lines), for the next edit."""

    text: str
    encoding: str
    lines: list[str]


class KeptTree:
    def __init__(self) -> None:
        self.path: str | None = None
        self.kept: Kept | None = None
        # the content hash (discover.sources) of the bytes the kept text was read
        # from: a run whose file has that hash holds the kept text (`current`)
        self.hash: str | None = None
        self.cut: _Cut | None = None  # the digest lines of the kept text, or of the next one
        self.spliced = 0  # parses answered by a splice (for tests and the log)
        self.parsed = 0  # whole parses

    def release(self, path: str | None = None) -> None:
        """Let go of the module (of `path` only, when given)."""
        if path is None or path == self.path:
            self.path, self.kept, self.cut, self.hash = None, None, None, None

    def current(self, hashes: Mapping[str, str]) -> dict[str, str]:
        """The kept file's text, when the run with these content hashes read
        exactly it ({} otherwise): the check memo moves a disk edit's outcomes
        from it at the next run, as it does an editor buffer's."""
        if self.kept is None or self.path is None or self.hash is None:
            return {}
        return {self.path: self.kept.text} if hashes.get(self.path) == self.hash else {}

    def _held(self, path: str) -> Kept | None:
        return self.kept if self.path == path else None

    def digest(self, path: str, source: bytes) -> str | None:
        """The file's code digest: the changed statement's lines tokenized, the
        rest as the kept text's, when the kept text is this file's; else all."""
        kept, cut = self._held(path), self.cut
        found = None
        if kept is not None and cut is not None and cut.text == kept.text:
            found = self._recut(kept, cut, source)
        if found is None:
            whole = cd.cut_lines(source)
            if whole is None:
                return None
            found = _Cut(source.decode(whole[0]), *whole)
        self.cut = found
        return cd.digest_of(found.encoding, found.lines)

    def _recut(self, kept: Kept, cut: _Cut, source: bytes) -> _Cut | None:
        from ctxlint.facts.splice import lines_of

        if cut.encoding != "utf-8" or not cd.tokenizable(source):
            return None
        try:
            text = source.decode("utf-8")
        except UnicodeDecodeError:
            return None
        lines = lines_of(text)
        window = kept.window(lines)
        if window is None or window.start < 2:  # (a coding declaration: the whole file)
            return None
        piece = cd.recut(lines, window.start, window.new_end)
        if piece is None:
            return None
        return _Cut(
            text, "utf-8", [*cut.lines[: window.start], *piece, *cut.lines[window.old_end :]]
        )

    def parser(
        self,
        path: str,
        parse: Callable[[str], object],
        content: str | None = None,
        before: str | None = None,
    ) -> _KeptParse:
        """A parse of `path`'s text (facts.extract's): the kept module spliced
        where it can be, else `parse`; the module is kept either way, with
        `content` (the hash of the bytes the text was read from). `before`:
        the file's text at the last run, when known (an edit's whole parse
        keeps the walk's state at the statement changed since: Kept.hint)."""
        return _KeptParse(self, path, parse, content, before)


class _KeptParse:
    """KeptTree.parser's answer. Its `kept` (the Kept of the last text it
    parsed) tells facts.extract that the module is a kept one, which keeps
    what the next edit's extraction can take up (facts.resume, facts.placed)."""

    def __init__(
        self,
        tree: KeptTree,
        path: str,
        parse: Callable[[str], object],
        content: str | None = None,
        before: str | None = None,
    ) -> None:
        self.tree, self.path, self.parse, self.content = tree, path, parse, content
        self.before = before

    @property
    def kept(self) -> Kept | None:
        return self.tree._held(self.path)

    def __call__(self, text: str) -> object:
        from ctxlint.facts.splice import Kept

        tree = self.tree
        kept = tree._held(self.path)
        got = kept.splice(text) if kept is not None else None
        if got is not None:
            tree.kept = got[0]
            tree.spliced += 1
        else:
            tree.kept = Kept.of(text, self.parse(text))  # type: ignore[arg-type]
            tree.parsed += 1
            before = kept.text if kept is not None else self.before
            if before is not None and before != text:
                tree.kept.hint = tree.kept.edited_in(before)
            if kept is not None:  # its pieces are compared by content (facts.entry)
                tree.kept.entry = kept.entry
        tree.path, tree.hash = self.path, self.content
        if tree.cut is not None and tree.cut.text != text:
            tree.cut = None  # (a digest of another text: the next edit tokenizes all)
        return tree.kept.module
