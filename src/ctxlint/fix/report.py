"""What a fix run says: the diff, every site fixed or left (and why), the totals."""

from __future__ import annotations

import difflib
from collections import Counter

from ctxlint.fix.plan import FIXED, LEFT, ROLLED_BACK
from ctxlint.fix.run import FixResult


def unified_diff(result: FixResult, prefix: str = "") -> str:
    """The fixes as one patch; `prefix` (the project's folder below the git root,
    "" or ending in "/") makes its paths the ones `git apply` takes at the root."""
    out: list[str] = []
    for path in sorted(result.after):
        out.extend(
            difflib.unified_diff(
                result.before[path].splitlines(keepends=True),
                result.after[path].splitlines(keepends=True),
                fromfile=f"a/{prefix}{path}",
                tofile=f"b/{prefix}{path}",
            )
        )
    return "".join(out)


def reasons(result: FixResult) -> Counter[str]:
    """How many sites were left, per reason (rule first)."""
    return Counter(
        f"{s.rule} {s.status}: {s.reason}" for s in result.sites if s.status in (LEFT, ROLLED_BACK)
    )


def site_lines(result: FixResult, *, applied: bool) -> list[str]:
    lines = []
    verb = "fixed" if applied else "would fix"
    for s in sorted(result.sites, key=lambda s: (s.path, s.line, s.column, s.rule)):
        where = f"{s.path}:{s.line}:{s.column}: {s.rule}"
        if s.status == FIXED:
            note = f" (unsafe: {s.reason})" if s.unsafe else ""
            lines.append(f"{where} {verb} `{s.snippet}` -> `{s.became}`{note}")
        else:
            lines.append(f"{where} {s.status}: `{s.snippet}`: {s.reason}")
    return lines


def summary(result: FixResult, *, applied: bool, stale: int | None) -> list[str]:
    fixed = [s for s in result.sites if s.status == FIXED]
    unsafe = sum(1 for s in fixed if s.unsafe)
    left = len(result.sites) - len(fixed)
    files = len(result.after)
    verb = "Fixed" if applied else "Would fix"
    head = (
        f"{verb} {len(fixed)} site{'s' if len(fixed) != 1 else ''} in {files} "
        f"file{'s' if files != 1 else ''}"
        + (f" ({unsafe} unsafe)" if unsafe else "")
        + f"; {left} left"
    )
    lines = [head + ("." if not left else ":")]
    for reason, n in sorted(reasons(result).items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"  {n} x {reason}")
    for e in result.errors:
        lines.append(f"  not touched: {e.path}: {e.message}")
    if applied and fixed:
        lines.append(
            "The baseline is not rewritten"
            + (f": {stale} entr{'y is' if stale == 1 else 'ies are'} now stale" if stale else "")
            + "; review the changes, then run `ctxlint baseline update`."
        )
    return lines
