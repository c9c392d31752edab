"""What a fix run says: the diff, every site fixed or left (and why), the totals."""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Callable, Sequence

from ctxlint.core.findings import Finding
from ctxlint.fix.plan import FIXED, LEFT, REMOVED, ROLLED_BACK, Site
from ctxlint.fix.result import FixResult


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


def _written_positions(result: FixResult) -> dict[int, tuple[int, int]]:
    """id(site) -> (line, column) in the file as written, for the sites left in
    a rewritten file: its finding in the check of the rewritten program, the
    same rule, scope and snippet, taken in order."""
    if result.output is None or not result.after:
        return {}
    found: dict[tuple[str, str, str, str], list[tuple[int, int]]] = {}
    for f in result.output.findings:
        if f.path in result.after:
            key = (f.rule, f.path, f.scope, f.snippet)
            found.setdefault(key, []).append((f.span.line, f.span.column))
    for spots in found.values():
        spots.sort()
    out: dict[int, tuple[int, int]] = {}
    taken: Counter[tuple[str, str, str, str]] = Counter()
    for s in sorted(result.sites, key=lambda s: (s.path, s.line, s.column, s.rule)):
        if s.status == FIXED or s.path not in result.after:
            continue
        key = (s.rule, s.path, s.scope, s.snippet)
        spots = found.get(key, [])
        if taken[key] < len(spots):
            out[id(s)] = spots[taken[key]]
            taken[key] += 1
    return out


def _fixed_positions(result: FixResult) -> dict[int, tuple[int, int]]:
    """id(site) -> (line, column) in the file as written, for the sites fixed in
    it: the line the rewrite's hunk puts it on (lines removed or wrapped above
    it move it), at the column it had."""
    out: dict[int, tuple[int, int]] = {}
    by_path: dict[str, list[Site]] = {}
    for s in result.sites:
        if s.status == FIXED and s.path in result.after and s.path in result.before:
            by_path.setdefault(s.path, []).append(s)
    for path, sites in by_path.items():
        old = result.before[path].splitlines()
        new = result.after[path].splitlines()
        blocks = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
        for s in sites:
            for _, i1, i2, j1, j2 in blocks:
                if i1 <= s.line - 1 < i2:
                    out[id(s)] = (min(j1 + (s.line - 1 - i1), max(j1, j2 - 1)) + 1, s.column)
                    break
    return out


def _same(path: str) -> str:
    return path


def site_lines(
    result: FixResult, *, applied: bool, shown: Callable[[str], str] = _same
) -> list[str]:
    """Each site, where it is: in a file the fix wrote, at its place in the file
    as written (the lines above it may have changed), fixed or left alike.
    `shown` turns a project path into the one printed (from the working folder)."""
    lines = []
    verb = "fixed" if applied else "would fix"
    moved = _written_positions(result) | _fixed_positions(result) if applied else {}
    for s in sorted(result.sites, key=lambda s: (s.path, s.line, s.column, s.rule)):
        line, column = moved.get(id(s), (s.line, s.column))
        where = f"{shown(s.path)}:{line}:{column}: {s.rule}"
        if s.status == FIXED:
            note = f" (unsafe: {s.reason})" if s.unsafe else ""
            became = "removed" if s.became == REMOVED else f"`{s.became}`"
            lines.append(f"{where} {verb} `{s.snippet}` -> {became}{note}")
        else:
            lines.append(f"{where} {s.status}: `{s.snippet}`: {s.reason}")
    return lines


def untouched(result: FixResult, shown: Callable[[str], str] = _same) -> list[str]:
    """The files left as they are because they do not parse (or cannot be
    read): an error, said whatever else is printed or asked for."""
    if not result.errors:
        return []
    n = len(result.errors)
    head = f"{n} error{'s' if n != 1 else ''}: not touched"
    return [head, *(f"  not touched: {shown(e.path)}: {e.message}" for e in result.errors)]


def summary(
    result: FixResult,
    *,
    applied: bool,
    stale: int | None,
    others: Sequence[Finding] = (),
    update: str = "ctxlint baseline update",
    shown: Callable[[str], str] = _same,
) -> list[str]:
    """The counts, the reasons sites were left, the findings of rules with no fix
    that remain (`others`: new ones), and whether the baseline needs updating."""
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
    for path, names in sorted(result.added.items()):
        spelled = ", ".join(f"`{n}()`" for n in names)
        lines.append(
            f"  adds {spelled} to {shown(path)}, for the sites that read the record's own member"
        )
    for reason, n in sorted(reasons(result).items(), key=lambda kv: (-kv[1], kv[0])):
        lines.append(f"  {n} x {reason}")
    if others:
        n, rules = len(others), sorted({f.rule for f in others})
        lines.append(
            f"{n} finding{'s' if n != 1 else ''} of rules with no fix "
            f"remain{'s' if n == 1 else ''} ({', '.join(rules)}): `ctxlint check` lists "
            f"{'it' if n == 1 else 'them'}."
        )
    if applied and stale:  # fixed sites that were baselined: their entries go by hand
        lines.append(
            f"The baseline is not rewritten: {stale} entr{'y is' if stale == 1 else 'ies are'} "
            f"now stale; review the changes, then run `{update}`."
        )
    return lines
