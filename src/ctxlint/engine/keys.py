"""Cache keys: the code version an output depends on, and one file's fact key."""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxlint import __version__
from ctxlint.core.findings import FileError

if TYPE_CHECKING:
    from ctxlint.config.settings import Config
    from ctxlint.program.rule import Rule


def _code_version(*parts: str) -> str:
    """The version plus a hash of the ctxlint sources an output depends on:
    facts made by other code (an edited checkout, an upgrade) are never read
    back, while editing a reporter or the audit keeps the cache warm."""
    digest = hashlib.blake2b(__version__.encode(), digest_size=8)
    package = Path(__file__).resolve().parents[1]
    for part in parts:
        for path in sorted(package.glob(part)):
            digest.update(path.relative_to(package).as_posix().encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


# What per-file facts depend on: the extractor, its helpers and every rule (a rule
# with a fixer is a package: rules/<rule>/, its visitor among its modules).
FACT_SOURCES = ("core/pysource.py", "facts/*.py", "program/*.py", "rules/*.py", "rules/*/*.py")
CODE_VERSION = _code_version(*FACT_SOURCES)
# A whole run's outcome also depends on discovery, configuration and the engine.
RUN_SOURCES = (*FACT_SOURCES, "engine/*.py", "config/*.py", "discover/*.py")


def __getattr__(name: str) -> str:
    """RUN_VERSION, hashed when first asked: a daemon's client, which sends
    CODE_VERSION alone, never asks it (its hash is most of the client's
    start in this module)."""
    if name == "RUN_VERSION":
        value: str = _code_version(*RUN_SOURCES)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


FACT_LAYOUT = "f2"  # the layout of fact keys and blobs: bump when either changes


def fact_key(digest: str, tag: str, binding: tuple[str, str] | None) -> str:
    """The cache key of one file's facts: its content hash, the code version and
    vocabulary (`tag`) and, for rule and schema facts, its (path, module). Those
    facts are made of names the module gives (qualified names, relative imports
    resolved against its package, "is this the runtime module" decided during
    the walk), so byte-identical files at two paths (every empty __init__.py)
    cannot share an entry. Both are relative to the project root, so a cache
    restored into another clone or folder is still warm. The syntax check
    (binding None) depends on the bytes alone and is shared by every copy."""
    return f"{FACT_LAYOUT}:{digest}:{tag}{'' if binding is None else _where(binding)}"


@functools.lru_cache(maxsize=1 << 16)
def _where(binding: tuple[str, str]) -> str:
    """A binding's part of a fact key (each run makes every gathered file's key:
    the JSON of its (path, module) made once per process)."""
    return ":" + json.dumps(binding, separators=(",", ":"))


def facts_key(
    kind: str,
    head: str,
    digests: dict[str, bytes],
    tokens: set[str],
    errors: list[FileError] | None = None,
    paths: tuple[str, ...] = (),
) -> str:
    """A key for what whole-program work does with a round's facts: the run's
    inputs other than sources (code, config, selection, pins) and vocabulary
    (`head`), the facts of every file gathered (by their digests), the
    prefilter tokens, the unreadable files and (derived sets) every checked path."""
    digest = hashlib.blake2b(head.encode(), digest_size=16)
    for path in sorted(digests):
        digest.update(f"{path}\0".encode("utf-8", "surrogateescape"))
        digest.update(digests[path])
    digest.update("\0".join(sorted(tokens)).encode())
    digest.update(json.dumps([[e.path, e.message] for e in errors or ()]).encode())
    digest.update("\0".join(paths).encode("utf-8", "surrogateescape"))
    return f"{kind}:{digest.hexdigest()}"


def run_inputs(
    code: str, config: Config, rules: list[Rule], selected: set[str], pinned: dict[str, Any]
) -> dict[str, Any]:
    """What an outcome depends on besides the tree: code (RUN_VERSION), config,
    selection, pins."""
    c = config
    return {
        "code": code,
        "config": [
            c.runtime_module,
            c.record_class,
            c.src,
            c.exclude,
            c.per_rule_exclude,
            c.options,
            c.target_version,
        ],
        "selected": sorted(selected),
        "pinned": pinned,
        "environment": {r.id: r.environment() for r in rules if r.id in selected},
    }


def run_key(inputs: dict[str, Any], hashes: dict[str, str], errors: list[FileError]) -> str:
    """The key of a whole run's outcome: its inputs, every file's content hash
    and the unreadable files."""
    inputs = inputs | {
        "files": sorted(hashes.items()),
        "unreadable": [[e.path, e.message] for e in errors],
    }
    raw = json.dumps(inputs, sort_keys=True, default=list).encode()
    return "run:" + hashlib.blake2b(raw, digest_size=16).hexdigest()
