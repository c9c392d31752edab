"""Rule selectors, as ruff reads them: a rule id (`CTX101`), an id prefix
(`CTX1`: every CTX1xx rule), `ALL`, or a rule name (`seed-read`); case does not
matter. `--select`/`--ignore` and the config's `select`/`ignore` all take them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from ctxlint.core.errors import ConfigError, did_you_mean

ALL = "ALL"


def _unknown(selector: str, names: Mapping[str, str], where: str) -> ConfigError:
    s = selector.strip().upper()
    shape = re.fullmatch(r"([A-Z]+)[0-9]*", s)
    letters = shape.group(1) if shape else ""
    if (
        shape
        and any(rid.startswith(letters) for rid in names)
        and all(len(s) < len(rid) for rid in names)
    ):
        # an id prefix that picks nothing (`CTX9`): the prefixes of its length that
        # do, not the nearest id (any CTXnnn is as near as another)
        known = sorted({rid[: len(s)] for rid in names})
        hint = f" (prefixes of that length: {', '.join(known)})" if known else ""
    else:
        hint = did_you_mean(s, names) or did_you_mean(selector.lower(), set(names.values()))
    return ConfigError(
        f"unknown rule {selector!r} in {where}: give a rule id, an id prefix such as "
        f"'CTX1', a rule name or 'ALL'{hint}"
    )


def matches(selector: str, names: Mapping[str, str], where: str) -> set[str]:
    """The ids of the rules (`names`: id -> name) that `selector` picks; an
    unknown selector is an error with a did-you-mean, never an empty pick."""
    s = selector.strip()
    if s.upper() == ALL:
        return set(names)
    picked = {rid for rid in names if rid.startswith(s.upper())}
    picked |= {rid for rid, name in names.items() if name.lower() == s.lower()}
    if not s or not picked:
        raise _unknown(selector, names, where)
    return picked


def resolve(selectors: Iterable[str], names: Mapping[str, str], where: str) -> set[str]:
    """The union of what each selector picks."""
    out: set[str] = set()
    for s in selectors:
        out |= matches(s, names, where)
    return out


def select_ids(
    names: Mapping[str, str],
    select: Iterable[str] | None,
    ignore: Iterable[str] | None,
    where: tuple[str, str] = ("--select", "--ignore"),
) -> set[str]:
    """The rules a run checks: what `select` picks (everything when it is
    empty or None) less what `ignore` picks."""
    select = list(select or ())
    chosen = resolve(select, names, where[0]) if select else set(names)
    return chosen - resolve(ignore or (), names, where[1])


__all__ = ["ALL", "matches", "resolve", "select_ids"]
