"""`ctxlint roles`: the static reach per role (CTX302's derived sets), and its
comparison with the runtime's record-mode audit.

The audit is the file both ctxrt (`CTXRT_ROLE_NAMESPACES=record`) and SGLang
(`SGLANG_ROLE_NAMESPACES=record`) write: one line per pair a process read, the role
and the namespace separated by a tab (ctxrt) or a space (SGLang 0.5.23 writes
`f"{role} {name}"`). SGLang writes role `None` for a read before any publish: that
is CTX301's concern, listed apart and not compared. A pair observed there that the static reach lacks is a soundness
gap in ctxlint (a call path the graph does not follow); a pair reached and never
observed is an untested path or an over-approximation; and for a restricted
role, each side either stays inside the role's set or does not.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxlint.core.errors import CtxlintError
from ctxlint.core.shown_paths import places_shown
from ctxlint.program.role_table import FULL, allowed

if TYPE_CHECKING:
    from rich.console import Console


UNPUBLISHED = "None"  # SGLang's role for a read before the process published


@dataclass(frozen=True)
class Roles:
    """CTX302's derived sets, as the command uses them."""

    table: dict[str, frozenset[str] | None]
    source: str
    entries: dict[str, list[str]]
    reach: dict[str, frozenset[str]]
    paths: dict[tuple[str, str], str]

    @classmethod
    def from_sets(cls, sets: dict[str, Any]) -> Roles:
        table = sets.get("role table")
        if not isinstance(table, dict):
            why = table[7:-1] if isinstance(table, str) else "CTX302 derived nothing"
            raise CtxlintError(f"no role table: {why}")
        entries: dict[str, list[str]] = {}
        for e in sets["role entries"]:
            role, _, where = e.partition(": ")
            entries.setdefault(role, []).append(where)
        paths = {}
        for key, text in sets["reach paths"].items():
            role, _, ns = key.partition(" ")
            paths[(role, ns)] = text
        return cls(
            {r: allowed(v) for r, v in table.items()},
            sets["role table source"],
            entries,
            {r: frozenset(ns) for r, ns in sets["reach"].items()},
            paths,
        )

    def roles(self, observed: dict[str, set[str]] | None = None) -> list[str]:
        return sorted(set(self.table) | set(self.reach) | set(observed or ()))


@dataclass
class Comparison:
    observed: dict[str, set[str]]
    gaps: list[tuple[str, str]] = field(default_factory=list)  # observed, not reached
    unobserved: list[tuple[str, str]] = field(default_factory=list)  # reached, not observed
    agreement: dict[str, str] = field(default_factory=dict)  # restricted role -> verdict
    unpublished: list[str] = field(default_factory=list)  # namespaces read before a publish


def read_observed(path: str) -> dict[str, set[str]]:
    """role -> namespaces from a record-mode file; a malformed line is an error."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CtxlintError(f"--compare {path}: cannot read it ({exc.__class__.__name__})") from None
    out: dict[str, set[str]] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2:
            raise CtxlintError(
                f"{path}:{n}: not a `role<TAB>namespace` line (the runtime's record mode "
                f"writes those): {line[:80]!r}"
            )
        out.setdefault(parts[0], set()).add(parts[1])
    return out


def compare(roles: Roles, observed: dict[str, set[str]]) -> Comparison:
    c = Comparison({r: ns for r, ns in observed.items() if r != UNPUBLISHED})
    c.unpublished = sorted(observed.get(UNPUBLISHED, ()))
    for role in roles.roles(c.observed):
        reached = roles.reach.get(role, frozenset())
        seen = observed.get(role, set())
        c.gaps += [(role, ns) for ns in sorted(seen - reached)]
        c.unobserved += [(role, ns) for ns in sorted(reached - seen)]
        allowed = roles.table.get(role, None)
        if role in roles.table and allowed is not None:
            c.agreement[role] = _agreement(allowed, reached, seen, role in observed)
    return c


def _agreement(allowed: frozenset[str], reached: frozenset[str], seen: set[str], ran: bool) -> str:
    static_out = sorted(reached - allowed)
    runtime_out = sorted(seen - allowed)
    parts = []
    if static_out:
        parts.append(f"static reach outside the set: {', '.join(static_out)}")
    if runtime_out:
        parts.append(f"runtime reads outside the set: {', '.join(runtime_out)}")
    if not ran:
        parts.append("not observed at runtime")
    return "; ".join(parts) if parts else "agree: both inside the set"


def to_json(roles: Roles, c: Comparison | None) -> dict[str, Any]:
    per: dict[str, Any] = {}
    for role in roles.roles(c.observed if c else None):
        allowed = roles.table.get(role, "(not in the table)")
        item: dict[str, Any] = {
            "allowed": sorted(allowed) if isinstance(allowed, frozenset) else allowed,
            "entries": roles.entries.get(role, []),
            "reached": sorted(roles.reach.get(role, ())),
            "paths": {ns: p for (r, ns), p in sorted(roles.paths.items()) if r == role},
        }
        if c is not None:
            item["observed"] = sorted(c.observed.get(role, ()))
            item["not reached"] = [ns for r, ns in c.gaps if r == role]
            item["not observed"] = [ns for r, ns in c.unobserved if r == role]
            if role in c.agreement:
                item["agreement"] = c.agreement[role]
        per[role] = item
    out: dict[str, Any] = {"table": roles.source, "roles": per}
    if c is not None:
        out["soundness gaps"] = [f"{r}\t{ns}" for r, ns in c.gaps]
        out["read before a publish"] = c.unpublished
    return out


def render(
    console: Console, roles: Roles, c: Comparison | None, shown: Callable[[str], str] = str
) -> None:
    """The roles' table; `shown` prints a project path (core.shown_paths.opener:
    as it opens from the working folder)."""
    from rich.table import Table
    from rich.text import Text

    title = places_shown(shown, f"static reach per role ({roles.source})")
    table = Table(title=title, title_justify="left")
    for col in ("role", "allowed", "entries", "reached"):
        table.add_column(col)
    if c is not None:
        for col in ("observed", "not reached (gap)", "not observed", "agreement"):
            table.add_column(col)
    for role in roles.roles(c.observed if c else None):
        allowed = roles.table.get(role, "(not in the table)")
        row = [
            role,
            ", ".join(sorted(allowed)) if isinstance(allowed, frozenset) else allowed or FULL,
            "\n".join(places_shown(shown, e) for e in roles.entries.get(role, [])) or "(none)",
            ", ".join(sorted(roles.reach.get(role, ()))),
        ]
        if c is not None:
            row += [
                ", ".join(sorted(c.observed.get(role, ()))),
                ", ".join(ns for r, ns in c.gaps if r == role),
                ", ".join(ns for r, ns in c.unobserved if r == role),
                c.agreement.get(role, ""),
            ]
        table.add_row(*(Text(str(v)) for v in row))
    console.print(table)
    if c is None:
        return
    for role, ns in c.gaps:
        console.print(
            Text(
                f"soundness gap: role {role!r} read namespace {ns!r} at runtime, and no static "
                "path reaches it (a call the graph does not follow)"
            )
        )
    if c.unpublished:
        console.print(
            Text(f"read before a publish (role None, CTX301's concern): {', '.join(c.unpublished)}")
        )
    verdict = f"{len(c.gaps)} soundness gap(s)" if c.gaps else "no soundness gap"
    console.print(
        Text(f"{verdict}; {len(c.unobserved)} pair(s) reached statically and never observed")
    )
