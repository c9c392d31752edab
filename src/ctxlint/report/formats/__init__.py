"""Reporters: render a `Result` as text (rich), JSON, SARIF, GitHub annotations or JUnit.

Every reporter is a pure function of the `Result` (the text one also reads the
sources for code frames), so identical results always render identically.
Each is imported when its format is asked for: a warm JSON run should not pay
for rich or an XML writer.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from ctxlint.core.findings import Result

_MODULES = {  # format -> its module in this package
    "text": "text",
    "concise": "concise",
    "json": "json_format",
    "sarif": "sarif",
    "github": "github",
    "junit": "junit",
}
FORMATS = tuple(_MODULES)


def render(result: Result, fmt: str, **options: bool) -> str:
    """Render `result` in format `fmt`; "text" gives the plain, uncoloured text report.
    `options` are the format's own switches (`quiet`, `statistics`)."""
    if fmt not in _MODULES:
        raise ValueError(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})")
    module = importlib.import_module(f"{__name__}.{_MODULES[fmt]}")
    return (
        module.render_text(result, **options) if fmt == "text" else module.render(result, **options)
    )


def print_text(result: Result, console: Console, **options: bool) -> None:
    """The human report on `console`; `options` as text.print_text takes them
    (rich and the reporter load on first use)."""
    from ctxlint.report.formats import text

    text.print_text(result, console, **options)


def print_timings(result: Result, console: Console) -> None:
    from ctxlint.report.formats.text import print_timings as print_it

    print_it(result, console)


__all__ = ["FORMATS", "print_text", "print_timings", "render"]
