"""Rule cases written as source with `# expect` markers on the lines that must
carry a finding (`# expect x3`: three findings; any other line must carry none)."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from helpers import run_engine, write

_MARK = re.compile(r"#\s*expect(?:\s+x(\d+))?\b")


def marked_lines(source: str) -> list[int]:
    """Line numbers of the expected findings, one entry per finding."""
    out: list[int] = []
    for n, line in enumerate(source.splitlines(), 1):
        m = _MARK.search(line)
        if m:
            out += [n] * int(m.group(1) or 1)
    return out


def assert_case(
    project: Path,
    rule: str,
    source: str,
    *,
    path: str = "app/case.py",
    extra: dict[str, str] | None = None,
) -> None:
    """Write `source` at `path` (plus `extra` files), run only `rule`, and compare
    the finding lines in `path` with the marked ones."""
    source = textwrap.dedent(source).lstrip("\n")
    write(project, {path: source, **{k: textwrap.dedent(v) for k, v in (extra or {}).items()}})
    out = run_engine(project, select={rule})
    assert not out.errors, out.errors
    got = sorted(f.line for f in out.findings if f.rule == rule and f.path == path)
    want = marked_lines(source)
    assert got == want, "\n".join(
        f"{'>' if n in got else ' '}{'*' if n in want else ' '} {n:3} {line}"
        for n, line in enumerate(source.splitlines(), 1)
    )
