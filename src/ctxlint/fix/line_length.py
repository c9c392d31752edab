"""The line length the checked project formats to, for the imports a fix grows.

Read, never run, from the project root's ruff settings (`ruff.toml`,
`.ruff.toml`, `[tool.ruff]` in pyproject.toml), else black's
(`[tool.black]`), else 88, the default of both.
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


def line_length(root: Path) -> int:
    for path, keys in (
        (root / "ruff.toml", ()),
        (root / ".ruff.toml", ()),
        (root / "pyproject.toml", ("tool", "ruff")),
        (root / "pyproject.toml", ("tool", "black")),
    ):
        table = _table(path, *keys)
        value = table.get("line-length", table.get("line_length")) if table else None
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return DEFAULT
