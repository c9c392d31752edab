"""Paths as printed: seen from the working folder, as ruff prints them.

A project path is relative to the project root, which need not be where the
command ran (`ctxlint check python/`, a hook at the repository's root, pytest
with --ctxlint-root). Every path a report, a warning or a fix line prints goes
through `opener`, so a terminal or editor opens it from there.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

# a project path in a line of text, where a location is written `path.py:LINE`
# (a derived set's entries, a role's entry points)
_PLACE = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w.-]+\.pyi?)(?=:\d)")


def opener(root: str, cwd: str | None = None) -> Callable[[str], str]:
    """Root-relative path -> the path as seen from the working folder (absolute
    outside it), as ruff prints paths: what an editor or `grep` run there opens.
    Every path ctxlint prints goes through here (`cwd`: pytest's invocation folder)."""
    cwd = os.path.realpath(cwd if cwd is not None else os.getcwd())
    base = os.path.realpath(root)
    if base == cwd:
        return lambda path: path

    def shown(path: str) -> str:
        full = os.path.join(base, path)
        rel = os.path.relpath(full, cwd)
        return full if rel.startswith(os.pardir) else rel.replace(os.sep, "/")

    return shown


def places_shown(shown: Callable[[str], str], text: str) -> str:
    """`text` with every `path.py:LINE` location in it as `shown` prints the path
    (opener's): a derived set's or a role's entries, written with project paths."""
    return _PLACE.sub(lambda m: shown(m.group(1)), text)
