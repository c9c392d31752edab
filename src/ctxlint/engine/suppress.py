"""Applying `# ctxlint: ignore[...]` comments to a run's findings, and the
CTX001 findings for the ones that do not earn their place (the rule's catalogue
entry is rules/ctx001_suppressions.py; its facts are every file's comments).
"""

from __future__ import annotations

from typing import Any

from ctxlint.core.errors import did_you_mean
from ctxlint.program.core import Program
from ctxlint.program.rule import RawFinding

ID = "CTX001"


def _finding(path: str, s: dict[str, Any], message: str) -> RawFinding:
    return RawFinding(
        ID,
        path,
        s.get("scope", "<module>"),  # the def or class its comment is in
        " ".join(s["text"].split()),
        [s["line"], s["col"], s["line"], s["end_col"]],
        message,
        key_scope="<module>",  # known by its file and text (fingerprints.to_findings)
    )


def apply_suppressions(
    raw: list[RawFinding], program: Program, checked: set[str], known: dict[str, str]
) -> list[RawFinding]:
    """Drop suppressed findings; add CTX001 findings for bad suppressions.

    `checked` are the rules whose checks ran: a suppression naming a rule that
    did not run cannot be judged unused; `known` maps every rule's id and its
    name, upper-cased (`SEED-READ`), to its id.
    """
    by_line: dict[tuple[str, int], list[dict[str, Any]]] = {}
    for path, entry in program.files.items():
        for s in entry.get("suppressions", ()):
            s["used"] = set()
            s["rules"] = [known.get(r, r) for r in s["rules"]]  # a name stands for its id
            by_line.setdefault((path, s["line"]), []).append(s)
    if not by_line:
        return raw
    kept: list[RawFinding] = []
    for f in raw:
        hit = None
        for line in {f.span[0], f.span[2]}:
            for s in by_line.get((f.path, line), ()):
                if f.rule in s["rules"] and f.rule != ID:
                    hit = s
        if hit is None:
            kept.append(f)
        else:
            hit["used"].add(f.rule)
    if ID not in checked:
        return kept
    for (path, _), entries in sorted(by_line.items()):
        for s in entries:
            if s["malformed"]:
                kept.append(
                    _finding(
                        path, s, "malformed suppression: write `# ctxlint: ignore[CTXnnn] reason`"
                    )
                )
                continue
            for rid in s["rules"]:
                if rid not in known:
                    kept.append(
                        _finding(path, s, f"suppression names unknown rule {_asked(rid, known)}")
                    )
                elif rid in checked and rid not in s["used"]:
                    kept.append(
                        _finding(path, s, f"unused suppression: no {rid} finding on this line")
                    )
            if not s["reason"]:
                kept.append(_finding(path, s, "suppression without a reason: say why after the ]"))
    return kept


def _asked(rid: str, known: dict[str, str]) -> str:
    """The unknown rule as written (a name in lower case), with the nearest known
    id or name (`seed-reed` -> `seed-read`)."""
    if "-" in rid:
        names = [k.lower() for k, v in known.items() if k != v]
        return rid.lower() + did_you_mean(rid.lower(), names)
    return rid + did_you_mean(rid, [k for k, v in known.items() if k == v])
