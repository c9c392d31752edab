"""The line length a checked file is formatted to, for the imports a fix grows.

Read, never run, as ruff finds its settings for a file: the nearest folder
from the file's up to the project root with `ruff.toml`, `.ruff.toml` or a
`[tool.ruff]` table in pyproject.toml (SGLang keeps it in `python/`, below a
root `ctxlint.toml`); else the nearest `[tool.black]`; else 88, the default of
both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxlint.config.settings import read_toml
from ctxlint.core.errors import ConfigError

DEFAULT = 88


def _table(path: Path, *keys: str) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        data: Any = read_toml(path)
    except (ConfigError, UnicodeDecodeError):  # unreadable or not TOML: not the project's
        return None
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else None


def _value(table: dict[str, Any] | None) -> int | None:
    value = table.get("line-length", table.get("line_length")) if table else None
    ok = isinstance(value, int) and not isinstance(value, bool) and value > 0
    return value if ok else None  # type: ignore[return-value]


def _settings(folder: Path) -> tuple[bool, int | None, int | None]:
    """(has a ruff config, its line length, black's line length) of one folder."""
    ruff = [_table(folder / "ruff.toml"), _table(folder / ".ruff.toml")]
    ruff.append(_table(folder / "pyproject.toml", "tool", "ruff"))
    found = [t for t in ruff if t is not None]
    black = _value(_table(folder / "pyproject.toml", "tool", "black"))
    return bool(found), _value(found[0]) if found else None, black


def line_length(root: Path, path: str = "") -> int:
    """The line length for the file at `path` (relative to root; "": the root's)."""
    folders = []
    folder = (root / path).parent if path else root
    while True:
        folders.append(folder)
        if folder == root or root not in folder.parents:
            break
        folder = folder.parent
    # as ruff: the nearest config decides, with its length or the default
    for folder in folders:
        has_ruff, value, _ = _settings(folder)
        if has_ruff:
            return value or DEFAULT
    for folder in folders:
        black = _settings(folder)[2]
        if black:
            return black
    return DEFAULT
