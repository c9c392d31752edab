"""How a role table's entries are spelled in CTX302's derived sets: the rule
writes them, `ctxlint roles` (report/roles.py) reads them back."""

from __future__ import annotations

FULL = "(full tree)"  # a role the table does not restrict (`None`), as the sets show it


def allowed(shown: str | list[str]) -> frozenset[str] | None:
    """A role's namespace set as the sets show it, read back (None: the full tree)."""
    return None if shown == FULL else frozenset(shown)
