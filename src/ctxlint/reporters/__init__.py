"""Reporters: render a `Result` as text (rich), JSON, SARIF, GitHub annotations or JUnit.

Every reporter is a pure function of the `Result` (the text one also reads the
sources for code frames), so identical results always render identically.
"""

from __future__ import annotations

from collections.abc import Callable

from ctxlint.model import Result
from ctxlint.reporters import github, json_format, junit, sarif, text
from ctxlint.reporters.text import print_text, print_timings, render_text

FORMATS = ("text", "json", "sarif", "github", "junit")

_MACHINE: dict[str, Callable[[Result], str]] = {
    "json": json_format.render,
    "sarif": sarif.render,
    "github": github.render,
    "junit": junit.render,
}


def render(result: Result, fmt: str) -> str:
    """Render `result` in format `fmt`; "text" gives the plain, uncoloured text report."""
    if fmt == "text":
        return render_text(result)
    try:
        return _MACHINE[fmt](result)
    except KeyError:
        raise ValueError(f"unknown format {fmt!r} (choose from {', '.join(FORMATS)})") from None


__all__ = ["FORMATS", "print_text", "print_timings", "render", "render_text", "text"]
