"""Each history point's counts, kept in the fact cache by commit.

`audit --history N` unpacked and checked every one of the N commits again on
every run (22 s for three on sglang 0.5.23), though a commit never changes. A
point's counts are a function of

- what `git archive` writes for the commit under the project's folder: the
  commit (its tree, and the commit itself for `export-subst`), the folder, and
  what outside the commit changes the archive's bytes (`core.autocrlf`,
  `core.eol`, the repository's `info/attributes`); the tree's own baseline, if
  it has one, is in the commit;
- today's config, rules, selection and, for a tree with no baseline, today's
  pins; each rule's environment (ruff's identity); ctxlint's code and Python.

All of it is the entry's key; the entry holds the counts only. A row is
signed as every cache row is (cache.signing), and an entry of another shape is
a miss (the commit is checked).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from ctxlint.cache.store import FactCache
from ctxlint.core.gitcmd import run_git
from ctxlint.engine.keys import run_inputs
from ctxlint.session import Setup

LAYOUT = "h1"
# ctxlint's sources but the reporters and the command line (the history module
# itself included): a point's counts depend on any of them
_SKIPPED = ("report/", "cli/")
_OWN = "report/audit/history.py"


def _code_version() -> str:
    digest = hashlib.blake2b(LAYOUT.encode(), digest_size=16)
    package = Path(__file__).resolve().parents[2]
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        if rel.startswith(_SKIPPED) and rel != _OWN:
            continue
        digest.update(rel.encode())
        digest.update(path.read_bytes())
    digest.update(str(sys.version_info[:2]).encode())
    return digest.hexdigest()


def _archive_settings(top: Path) -> list[str]:
    """What outside a commit changes the bytes `git archive` writes for it."""
    config = run_git(top, "config", "-z", "--get-regexp", r"^core\.(autocrlf|eol)$")
    where = run_git(top, "rev-parse", "--git-path", "info/attributes")
    attributes = ""
    if where.returncode == 0:
        path = Path(where.stdout.decode("utf-8", "surrogateescape").strip())
        path = path if path.is_absolute() else top / path
        try:
            attributes = hashlib.blake2b(path.read_bytes(), digest_size=16).hexdigest()
        except OSError:
            attributes = "none"
    return [config.stdout.decode("utf-8", "surrogateescape"), attributes]


class HistoryMemo:
    """Counts per commit, for one audit's setup (`baseline`: the baseline's
    path relative to the project, None without one; `pins`: today's pins)."""

    def __init__(
        self,
        setup: Setup,
        top: Path,
        prefix: str,
        baseline: str | None,
        pins: dict[str, Any] | None,
    ) -> None:
        config = setup.config
        selected = {r.id for r in setup.selected}
        inputs = run_inputs(_code_version(), config, setup.rules, selected, pins or {})
        # every rule's environment, not only the selected ones': all of them run
        inputs["environment"] = {r.id: r.environment() for r in setup.rules}
        self._head = json.dumps(
            [inputs, sorted(selected), prefix, baseline, _archive_settings(top)],
            sort_keys=True,
            default=list,
        )
        self.cache = FactCache(config.cache_dir)
        self.ids = [r.id for r in setup.selected]  # in the order a point lists them

    def key(self, commit: str) -> str:
        raw = f"{self._head}\0{commit}".encode("utf-8", "surrogateescape")
        return "history:" + hashlib.blake2b(raw, digest_size=16).hexdigest()

    def get(self, commits: list[str]) -> dict[str, dict[str, int]]:
        """The kept counts of those commits that have them."""
        keys = {self.key(c): c for c in commits}
        out: dict[str, dict[str, int]] = {}
        for key, blob in self.cache.get_many(keys).items():
            counts = _counts(blob, self.ids)
            if counts is not None:
                out[keys[key]] = counts
        return out

    def put(self, commit: str, counts: dict[str, int]) -> None:
        self.cache.put_many({self.key(commit): json.dumps(counts, sort_keys=True).encode()})

    def close(self) -> None:
        self.cache.close()


def _counts(blob: bytes, ids: list[str]) -> dict[str, int] | None:
    try:
        data = json.loads(blob)
    except ValueError:
        return None
    if not (
        isinstance(data, dict)
        and sorted(data) == sorted(ids)
        and all(type(v) is int and v >= 0 for v in data.values())
    ):
        return None
    return {rule: data[rule] for rule in ids}
