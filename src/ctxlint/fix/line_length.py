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


def _document(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    try:
        return read_toml(path)
    except (ConfigError, UnicodeDecodeError):  # unreadable or not TOML: not the project's
        return None


def _table(data: Any, *keys: str) -> dict[str, Any] | None:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else None


def _value(table: dict[str, Any] | None) -> int | None:
    value = table.get("line-length", table.get("line_length")) if table else None
    ok = isinstance(value, int) and not isinstance(value, bool) and value > 0
    return value if ok else None  # type: ignore[return-value]


def _settings(folder: Path) -> tuple[bool, int | None, int | None]:
    """(has a ruff config, its line length, black's line length) of one folder."""
    pyproject = _document(folder / "pyproject.toml")
    ruff = [_table(_document(folder / "ruff.toml")), _table(_document(folder / ".ruff.toml"))]
    ruff.append(_table(pyproject, "tool", "ruff"))
    found = [t for t in ruff if t is not None]
    black = _value(_table(pyproject, "tool", "black"))
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
    settings = [_settings(f) for f in folders]  # each folder's files read once
    # as ruff: the nearest config decides, with its length or the default
    for has_ruff, value, _ in settings:
        if has_ruff:
            return value or DEFAULT
    return next((black for _, _, black in settings if black), DEFAULT)
