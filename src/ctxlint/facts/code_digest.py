"""A file's code digest: its text less what no fact depends on, so that an edit
of only that finds the facts of the content the file had before, unparsed.

Left out: a comment at bracket depth 0 (its text, and the blanks before it on
its line) unless a tool reads it (a suppression, a noqa), and the blank lines
the file ends with.
Nothing else moves, so every token keeps its line and column. A comment inside
brackets stays in: it is part of the code a snippet or a signature renders.
A depth-0 comment belongs only to statement-level layout, which no fact holds
(spans are syntactic and snippets leave comments out: FileContext.snippet).
A comment reworded, added after a line or appended at the end of the file
thus keeps the digest; a comment line inserted above code moves that code,
and so changes it, as it changes the facts' spans.
"""

from __future__ import annotations

import hashlib
import io
import re
import sys
import tokenize

from ctxlint.facts.ruff import DIRECTIVE
from ctxlint.facts.suppression_comments import INTENT

# The tokenizer decides what is a comment: another Python may tokenize otherwise
VERSION = "cd1:py{}{}".format(*sys.version_info[:2])
_OPEN, _CLOSE = frozenset("([{"), frozenset(")]}")
_LONE_CR = re.compile(rb"\r(?!\n)")  # a line break of old Macs: CPython's, not readline's
_BLANKS = " \t\f\r\n"  # what the blank lines a file ends with are made of


def _read(comment: str) -> bool:
    """A comment a tool reads: a ctxlint suppression, or a noqa that the ruff
    run CTX401 merges honours (its facts hold those: rules.ctx401)."""
    return INTENT.search(comment) is not None or DIRECTIVE.search(comment) is not None


def code_digest(source: bytes) -> str | None:
    """The digest (hex), or None for a file the tokenizer cannot read (its facts
    are then only ever extracted)."""
    found = cut_lines(source)
    return None if found is None else digest_of(*found)


def tokenizable(source: bytes) -> bool:
    """False for a NUL or a lone CR: CPython's and tokenize's lines or verdicts
    differ on these, so no digest is made of them."""
    return b"\0" not in source and _LONE_CR.search(source) is None


def cut_lines(source: bytes) -> tuple[str, list[str]] | None:
    """The encoding and the lines (each with its line break) less what the digest
    leaves out of them, or None (see `code_digest`)."""
    if not tokenizable(source):
        return None
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
        lines = io.StringIO(source.decode(encoding)).readlines()
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return None
    cut = recut(lines, 0, len(lines))
    return None if cut is None else (encoding, cut)


def recut(lines: list[str], first: int, last: int) -> list[str] | None:
    """lines[first:last] less the comments the digest leaves out, or None where
    the tokenizer cannot read them. The window must start and end where the
    tokenizer is at top level (between top-level statements): its tokens are
    then those a tokenize of all the lines has there."""
    cuts: dict[int, int] = {}  # line (of `lines`, 1-based) -> where a left-out comment starts
    depth = 0
    try:
        for tok in tokenize.generate_tokens(iter(lines[first:last]).__next__):
            if tok.type == tokenize.OP:
                if tok.string in _OPEN:
                    depth += 1
                elif tok.string in _CLOSE:
                    depth -= 1
            elif tok.type == tokenize.COMMENT and depth == 0 and not _read(tok.string):
                row = tok.start[0] + first
                if row == 1 or not lines[row - 2].rstrip("\r\n").endswith("\\"):
                    cuts[row] = tok.start[1]  # (after a backslash: kept, as CPython sees it)
            elif tok.type == tokenize.ERRORTOKEN:  # CPython refuses what tokenize lets by
                return None
    except (SyntaxError, tokenize.TokenError, StopIteration):
        return None
    out = lines[first:last]
    for row, col in cuts.items():
        line = out[row - 1 - first]
        body = line.rstrip("\r\n")
        out[row - 1 - first] = line[:col].rstrip(" \t") + line[len(body) :]
    return out


def without_end_blanks(text: str) -> str:
    """`text` less the blank lines it ends with: cut after the first line break
    that only blanks follow. Found from the end: a pattern searched from the
    start tried each of a 282 KB file's positions (7 ms an edit)."""
    body = text.rstrip(_BLANKS)
    tail = text[len(body) :]
    breaks = [i for i in (tail.find("\n"), tail.find("\r")) if i >= 0]
    if not breaks:
        return text
    at = min(breaks)
    return body + tail[:at] + ("\r\n" if tail.startswith("\r\n", at) else tail[at])


def digest_of(encoding: str, cut: list[str]) -> str:
    """The digest of lines `cut_lines` or `recut` gave."""
    text = without_end_blanks("".join(cut))
    h = hashlib.blake2b(f"{VERSION}\0{encoding}\0".encode(), digest_size=16)
    h.update(text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()
