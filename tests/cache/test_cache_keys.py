"""The code version in every cache key (engine/keys.py): facts made by other code
are never read back. A key that stopped hashing the extractor's sources passed
every cache test (issue 34's mutation `for part in ():`); these catch it."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from ctxlint import __version__
from ctxlint.engine import keys

PACKAGE = Path(keys.__file__).resolve().parents[1]


def _expected(*parts: str) -> str:
    """The digest worked out here, independently: the version, then each matching
    source's path and bytes, in sorted order."""
    digest = hashlib.blake2b(__version__.encode(), digest_size=8)
    for part in parts:
        for path in sorted(PACKAGE.glob(part)):
            digest.update(path.relative_to(PACKAGE).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def test_the_fact_and_run_versions_hash_the_sources_they_name() -> None:
    assert keys.CODE_VERSION == _expected(*keys.FACT_SOURCES)
    run_sources = (*keys.FACT_SOURCES, "engine/*.py", "config/*.py", "discover/*.py")
    assert keys.RUN_VERSION == _expected(*run_sources)
    assert keys.CODE_VERSION != _expected()  # more than the version string
    assert all(list(PACKAGE.glob(part)) for part in keys.FACT_SOURCES)  # no glob matches nothing


def test_every_rule_module_is_in_the_fact_version() -> None:
    """A rule kept as a package (its visitor in `rules/<rule>/__init__.py`) makes
    facts too: editing it must make its cached facts a miss."""
    hashed = {p for part in keys.FACT_SOURCES for p in PACKAGE.glob(part)}
    rules = set((PACKAGE / "rules").rglob("*.py"))
    assert rules - hashed == set()


def _versions(package_parent: Path) -> tuple[str, str]:
    code = "from ctxlint.engine import keys; print(keys.CODE_VERSION, keys.RUN_VERSION)"
    env = dict(os.environ, PYTHONPATH=str(package_parent))
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    fact, run = out.stdout.split()
    return fact, run


def test_an_edit_of_a_fact_source_moves_both_keys_and_a_reporter_neither(tmp_path: Path) -> None:
    copy = tmp_path / "ctxlint"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = _versions(tmp_path)
    assert before == (keys.CODE_VERSION, keys.RUN_VERSION)

    reporter = copy / "report" / "formats" / "json_format.py"
    reporter.write_text(reporter.read_text() + "\n# a reporter's edit\n")
    assert _versions(tmp_path) == before  # the cache stays warm

    engine = copy / "engine" / "rounds.py"
    engine.write_text(engine.read_text() + "\n# an engine edit\n")
    fact, run = _versions(tmp_path)
    assert fact == before[0] and run != before[1]  # facts kept, outcomes not

    # a rule that is a package: its modules are a fact source too (they were not,
    # and a warm run replayed the facts of a package's visitor before its edit)
    visitor = copy / "rules" / "ctx401_accessor_binding" / "fix.py"
    visitor.write_text(visitor.read_text() + "\n# a rule package's edit\n")
    leaf = _versions(tmp_path)
    assert leaf[0] != before[0] and leaf[1] not in (before[1], run)
    before, run = leaf, leaf[1]

    walk = copy / "facts" / "walk.py"
    walk.write_text(walk.read_text() + "\n# an extractor edit\n")
    moved = _versions(tmp_path)
    assert moved[0] != before[0] and moved[1] not in (before[1], run)


def test_a_daemons_quick_client_hashes_the_fact_sources_alone() -> None:
    """RUN_VERSION is hashed when first asked: the quick client (which sends
    CODE_VERSION) never asks it; an engine's import does, and it is the one
    the sources give."""
    code = (
        "import ctxlint.cli.quick_check; from ctxlint.engine import keys; "
        "print('RUN_VERSION' in vars(keys)); import ctxlint.engine.run; "
        "print('RUN_VERSION' in vars(keys))"
    )
    env = dict(os.environ, PYTHONPATH=str(PACKAGE.parent))
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["False", "True"]
