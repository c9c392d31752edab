"""Reading a Python file the way CPython does: its encoding (PEP 263, BOM) and
one verdict on whether it is valid code for the configured target version.

Every file gets the same verdict whichever path it takes (LibCST for files a
rule needs, this alone for the rest): CPython's parser, run with the target's
grammar, decides, and reports CPython's own line and column. It also refuses
what would crash LibCST's native parser (CPython stops at 200 nested
brackets; LibCST segfaults near 2,000), so it runs before LibCST.
"""

from __future__ import annotations

import ast
import io
import re
import sys
import tokenize

# target-version -> the grammar (ruff's names). The oldest is the oldest Python
# ctxlint runs on; a target newer than the running interpreter cannot be checked.
TARGET_VERSIONS: dict[str, tuple[int, int]] = {
    "py310": (3, 10),
    "py311": (3, 11),
    "py312": (3, 12),
    "py313": (3, 13),
}
DEFAULT_TARGET = "py310"


class SourceError(Exception):
    """Why a file is not valid Python for the target (a one-line message)."""


def unsupported_target(name: str) -> str | None:
    """Why `name` cannot be a target-version here, or None when it can."""
    version = TARGET_VERSIONS.get(name)
    if version is None:
        return f"target-version must be one of {', '.join(TARGET_VERSIONS)}, got {name!r}"
    if version > sys.version_info[:2]:
        running = "{}.{}".format(*sys.version_info[:2])
        return (
            f"target-version {name!r} needs ctxlint to run on Python {version[0]}.{version[1]} "
            f"or newer (this is Python {running}, whose parser does not know that grammar)"
        )
    return None


def decode(source: bytes) -> str:
    """The text as CPython reads it: a UTF-8 BOM or a coding declaration decides
    the encoding, UTF-8 otherwise. Raises SourceError."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
    except SyntaxError as exc:
        if not str(exc).startswith("invalid or missing"):  # an unknown codec; BOM vs cookie
            raise SourceError(f"bad encoding declaration: {exc}") from None
        encoding = "utf-8"  # a first line that is not UTF-8: say where below
    try:
        return source.decode(encoding)  # "utf-8-sig" drops the BOM
    except UnicodeDecodeError as exc:
        name = "UTF-8" if encoding.startswith("utf-8") else encoding
        # where, as a reader looks for it: the line and column, then the byte
        line = source.count(b"\n", 0, exc.start) + 1
        column = exc.start - (source.rfind(b"\n", 0, exc.start) + 1) + 1
        raise SourceError(
            f"not valid {name} at line {line}, column {column} (byte {exc.start})"
        ) from None


# Python's default recursion limit. CPython 3.11 bounds the depth of the tree
# it builds by the recursion limit left to the caller: the verdict gets this
# budget wherever it is asked from (a worker, the main thread, a deep stack), as
# if the file were compiled at the top level.
VERDICT_RECURSION_LIMIT = 1000


def _depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1  # type: ignore[assignment]
    return depth


# The last text CPython accepted, with its target: a resident front end asks
# the verdict of an edited buffer (server.project) and the extraction asks it
# again of the same text (pysource.read): a compile of a 282 KB file each.
# The verdict depends on the text and the grammar alone; a text refused is
# asked again (its message is made each time).
_ACCEPTED: list[tuple[str, str]] = []


def check(text: str, target: str) -> None:
    """Raise SourceError unless `text` parses with the target's grammar."""
    if _ACCEPTED and _ACCEPTED[0][1] == target and _ACCEPTED[0][0] == text:
        return
    _accept(text, target)
    _ACCEPTED[:] = [(text, target)]


def _accept(text: str, target: str) -> None:
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(_depth() + VERDICT_RECURSION_LIMIT)
    try:
        ast.parse(text, feature_version=TARGET_VERSIONS[target])
    except SyntaxError as exc:
        # Python 3.11.4+ reports a NUL byte as a SyntaxError with no position
        where = f" at line {exc.lineno}, column {exc.offset}" if exc.lineno else ""
        newer = newer_syntax(text, target, exc)
        raise SourceError(f"syntax error{where}: {exc.msg}{newer}") from None
    except (RecursionError, MemoryError) as exc:
        raise SourceError(f"too deeply nested for Python's parser ({type(exc).__name__})") from None
    except ValueError as exc:  # Python 3.11: "source code string cannot contain null bytes"
        raise SourceError(f"cannot parse: {exc}") from None
    finally:
        sys.setrecursionlimit(limit)


# Syntax newer than some parser ctxlint may run on, found on the line CPython
# stopped at: a parser that predates it says only "invalid syntax".
_NEWER_CONSTRUCTS: tuple[tuple[re.Pattern[str], str, tuple[int, int]], ...] = (
    (re.compile(r"^\s*except\s*\*"), "an except* clause", (3, 11)),
    (re.compile(r"^\s*type\s+\w+\s*[\[=]"), "a type statement", (3, 12)),
    (re.compile(r"^\s*(async\s+)?def\s+\w+\s*\["), "a type parameter list", (3, 12)),
    (re.compile(r"^\s*class\s+\w+\s*\["), "a type parameter list", (3, 12)),
)


def _version_name(version: tuple[int, int]) -> str:
    return "{}.{}".format(*version)


def newer_syntax(text: str, target: str, exc: SyntaxError) -> str:
    """The hint when `exc` is syntax of a Python newer than the target ("; needs
    Python X.Y, target-version is pyXY ..."), else "". A newer grammar this
    interpreter knows is asked first (oldest first); past those, the line
    CPython stopped at is matched against the constructs above."""
    have = TARGET_VERSIONS[target]
    for name, version in TARGET_VERSIONS.items():
        if have < version <= sys.version_info[:2]:
            try:
                ast.parse(text, feature_version=version)
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue
            return (
                f"; needs Python {_version_name(version)}, target-version is {target} (use "
                f'--target-version {name} or target-version = "{name}" if the code requires it)'
            )
    lines = text.splitlines()
    line = lines[exc.lineno - 1] if exc.lineno and 0 < exc.lineno <= len(lines) else ""
    for pattern, what, version in _NEWER_CONSTRUCTS:
        if version > have and pattern.match(line):
            name = next(n for n, v in TARGET_VERSIONS.items() if v == version)
            return (
                f"; {what} needs Python {_version_name(version)}, target-version is {target} "
                f"(ctxlint runs on Python {_version_name(sys.version_info[:2])} here: run it on "
                f"{_version_name(version)} or newer with --target-version {name} if the code "
                "requires it)"
            )
    return ""


def read(source: bytes, target: str) -> str:
    """The decoded text of a valid file; raises SourceError otherwise."""
    text = decode(source)
    check(text, target)
    return text
