"""`# noqa: CTX101`: flake8's and ruff's comment naming a ctxlint rule, which
ctxlint does not read (its suppression is `# ctxlint: ignore[CTX101] reason`,
which must say why). Found on the line of a finding it meant to silence, so
the run can say how to write it instead of ignoring it without a word."""

from __future__ import annotations

import re

# the noqa comment with its codes, in any case and spacing, as ruff reads it
_NOQA = re.compile(r"#\s*noqa\s*:\s*([A-Za-z0-9][A-Za-z0-9_,\s]*)", re.IGNORECASE)


def noqa_codes(line: str) -> list[str]:
    """The codes a noqa comment on `line` names, upper-cased, in order ([]: none)."""
    found: list[str] = []
    for m in _NOQA.finditer(line):
        for code in re.split(r"[,\s]+", m.group(1)):
            if code and code.upper() not in found:
                found.append(code.upper())
    return found


def noqa_hint(rule: str, line: str) -> str | None:
    """The warning for a noqa comment on `line` that names `rule`, else None."""
    if rule not in noqa_codes(line):
        return None
    return (
        f"`# noqa: {rule}` is not read by ctxlint: write "
        f"`# ctxlint: ignore[{rule}] <reason>` to suppress this finding"
    )
