"""Each file's planned outcome, kept in the fact cache between fix runs.

Planning a file (parse it, place every node, resolve its scopes, ask the other
files) is nearly all of a fix run: a fix with nothing left to do planned every
file with a finding again (31 s on sglang 0.5.23, against a 0.7 s warm check).
A file's outcome (its sites, and its text after the fix) depends on

- its bytes, its module and whether it is a package (imports are resolved
  against them), and its findings less their path and fingerprint (which no
  fixer reads);
- the vocabulary, the run's switches (the fixing rules, --unsafe), the line
  length, the target version and the code (ctxlint's and LibCST's): all in
  the entry's key;
- the answers the fixers got about the rest of the tree (FixContext: a field's
  target, "is this name used in another file", a fix guard). Those are recorded
  beside the outcome, each as a digest of the answer, and asked again before
  it is replayed: one that differs makes the entry a miss.

The cache is an optimisation: a replayed outcome is the one planning would
give. Nothing in an entry derives from the file's path (the sites get it back
from the file being planned; an outcome whose text names its own path is not
kept), so a copy or a rename of a file replays it only where the answers,
asked again with the new path, are the same.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ctxlint.cache.store import FactCache
from ctxlint.core.findings import Finding
from ctxlint.fix.context import FixContext
from ctxlint.fix.plan import Site
from ctxlint.fix.targets import Target, Targets

LAYOUT = "p1"  # the layout of the keys and entries below: bump when either changes
# What a plan depends on besides its inputs: the fixers and everything they call
_SOURCES = (
    "core/*.py",
    "facts/*.py",
    "program/*.py",
    "fix/*.py",
    "rules/*.py",
    "rules/*/*.py",
)


def _code_version() -> str:
    digest = hashlib.blake2b(LAYOUT.encode(), digest_size=16)
    package = Path(__file__).resolve().parents[1]
    for part in _SOURCES:
        for path in sorted(package.glob(part)):
            digest.update(path.relative_to(package).as_posix().encode())
            digest.update(path.read_bytes())
    try:
        from importlib.metadata import version

        libcst = version("libcst")
    except Exception:  # not installed as a distribution: its source decides
        import libcst as cst

        libcst = str(Path(cst.__file__).stat().st_mtime_ns)
    digest.update(f"{libcst}:{sys.version_info[:2]}".encode())
    return digest.hexdigest()


_VERSION: list[str] = []


def code_version() -> str:
    """Worked out once per process (the fixers' sources, hashed)."""
    if not _VERSION:
        _VERSION.append(_code_version())
    return _VERSION[0]


def _digest(*parts: Any) -> str:
    raw = json.dumps(parts, sort_keys=True, separators=(",", ":")).encode(
        "utf-8", "surrogateescape"
    )
    return hashlib.blake2b(raw, digest_size=16).hexdigest()


def _finding(f: Finding) -> list[Any]:
    """What a fixer reads of a finding: all but its path and fingerprint."""
    s = f.span
    return [
        f.rule,
        [s.line, s.column, s.end_line, s.end_column],
        f.scope,
        f.message,
        f.snippet,
        f.details,
        sorted(f.data.items()),
        f.kind,
    ]


@dataclass(frozen=True)
class RunInputs:
    """What every file's plan in one run depends on besides the file."""

    vocab: str  # Vocabulary.full_key()
    rules: tuple[str, ...]  # the fixing rules, in the order they plan
    unsafe: bool
    target_version: str


def plan_key(
    run: RunInputs,
    content: str,
    module: str,
    is_package: bool,
    line_length: int,
    findings: list[Finding],
) -> str:
    """The key of one file's outcome (`content`: its content hash)."""
    return "plan:" + _digest(
        code_version(),
        asdict(run),
        content,
        module,
        is_package,
        line_length,
        # in the order the fixers get them (the check's, whose ties the
        # fingerprint breaks): the sites come out in that order
        [_finding(f) for f in findings],
    )


def answer(value: Any) -> str:
    """An answer, as a digest (a fix guard's reason may name paths: never stored)."""
    if isinstance(value, Target):
        value = [value.accessor, value.path, value.kind]
    return _digest(value)[:16]


# A question a fixer asked about the rest of the tree, with the digest of the
# answer: ["elsewhere", [pattern, ...], d], ["target", field, d],
# ["guard", rule, scope, line, d]. The file's own path is implied.
Asked = list[Any]


@dataclass
class Trace:
    """The questions one file's fixers asked, in order; `other_path`: a question
    named a path other than the file's own (such an outcome is not kept)."""

    path: str
    asked: list[Asked] = field(default_factory=list)
    other_path: bool = False


class _AskedTargets:
    """Targets, each answer recorded."""

    def __init__(self, targets: Targets, trace: Trace) -> None:
        self._targets, self._trace = targets, trace

    def target(self, field: str) -> Target | str:
        found = self._targets.target(field)
        self._trace.asked.append(["target", field, answer(found)])
        return found

    def __getattr__(self, name: str) -> Any:  # anything else a fixer reads, as it is
        return getattr(self._targets, name)


@dataclass
class RecordingContext(FixContext):
    """The run's FixContext for one file, recording each cross-file answer."""

    trace: Trace = field(default_factory=lambda: Trace(""))

    def guard(self, rule: str, path: str, scope: str, line: int) -> str | None:
        found = super().guard(rule, path, scope, line)
        self.trace.other_path |= path != self.trace.path
        self.trace.asked.append(["guard", rule, scope, line, answer(found)])
        return found


def recording(ctx: FixContext, path: str) -> tuple[FixContext, Trace]:
    trace = Trace(path)
    ask = ctx.named_elsewhere

    def named_elsewhere(patterns: list[str], where: str) -> bool:
        found = ask(patterns, where)
        trace.other_path |= where != path
        trace.asked.append(["elsewhere", list(patterns), answer(found)])
        return found

    out = RecordingContext(
        ctx.vocab,
        _AskedTargets(ctx.targets, trace),  # type: ignore[arg-type]
        ctx.unsafe,
        named_elsewhere,
        ctx.guards,
        ctx.refused,
        trace=trace,
    )
    return out, trace


@dataclass
class Outcome:
    """A file's planned outcome as kept: no path in it."""

    asked: list[Asked]
    sites: list[dict[str, Any]]
    after: str | None  # the text after the fix; None: unchanged


def _site(s: Site) -> dict[str, Any]:
    out = asdict(s)
    del out["path"]
    return out


def outcome(
    trace: Trace, sites: list[Site], after: str | None, before: str | None = None
) -> Outcome | None:
    """What to keep of a planned file (its text `before` and `after` the fix,
    or None, None), or None when it must not be kept."""
    if trace.other_path:
        return None
    kept = Outcome(trace.asked, [_site(s) for s in sites], after)
    path = trace.path
    if path and any(isinstance(v, str) and path in v for d in kept.sites for v in d.values()):
        return None  # a reason naming the file's own path: not replayable in a copy
    if path and after is not None and path in after and path not in (before or ""):
        return None  # a rewrite that wrote the path in
    return kept


def encode(kept: Outcome) -> bytes:
    return json.dumps(asdict(kept), separators=(",", ":")).encode("utf-8", "surrogateescape")


_SITE_FIELDS = {
    "rule": str,
    "line": int,
    "column": int,
    "snippet": str,
    "scope": str,
    "status": str,
    "reason": str,
    "unsafe": bool,
    "became": str,
    "adds": str,
    "drops": str,
}


def decode(blob: bytes | None) -> Outcome | None:
    """An entry read back, or None when it is not of this shape (a miss)."""
    if blob is None:
        return None
    try:
        data = json.loads(blob)
    except ValueError:
        return None
    if not isinstance(data, dict) or set(data) != {"asked", "sites", "after"}:
        return None
    asked, sites, after = data["asked"], data["sites"], data["after"]
    if not (isinstance(asked, list) and all(_asked(a) for a in asked)):
        return None
    if not (
        isinstance(sites, list)
        and all(
            isinstance(s, dict)
            and set(s) == set(_SITE_FIELDS)
            and all(type(s[k]) is t for k, t in _SITE_FIELDS.items())
            for s in sites
        )
    ):
        return None
    if after is not None and not isinstance(after, str):
        return None
    return Outcome(asked, sites, after)


def _asked(a: Any) -> bool:
    if not (isinstance(a, list) and a and isinstance(a[-1], str)):
        return False
    kind = a[0]
    if kind == "elsewhere":
        return len(a) == 3 and isinstance(a[1], list) and all(isinstance(p, str) for p in a[1])
    if kind == "target":
        return len(a) == 3 and isinstance(a[1], str)
    if kind == "guard":
        return len(a) == 5 and isinstance(a[1], str) and isinstance(a[2], str) and type(a[3]) is int
    return False


def sites(kept: Outcome, path: str) -> list[Site]:
    return [Site(path=path, **s) for s in kept.sites]


def still_holds(
    kept: Outcome,
    path: str,
    ctx: FixContext,
    elsewhere: Callable[[list[str], str], bool] | None = None,
) -> bool:
    """Every question the outcome's fixers asked, asked again for `path`, gets
    the answer it got then. `elsewhere` answers "named elsewhere" (the run's
    memo of it; ctx.named_elsewhere by default)."""
    named = elsewhere or ctx.named_elsewhere
    for a in kept.asked:
        kind = a[0]
        if kind == "elsewhere":
            found: Any = named(a[1], path)
        elif kind == "target":
            found = ctx.targets.target(a[1])
        else:
            found = ctx.guard(a[1], path, a[2], a[3])
        if answer(found) != a[-1]:
            return False
    return True


def questions(kept: Iterable[Outcome], kind: str) -> list[Asked]:
    return [a for k in kept for a in k.asked if a[0] == kind]


def store(cache: FactCache, items: dict[str, Outcome]) -> None:
    cache.put_many({k: encode(v) for k, v in items.items()})


def schema_key(content: str, module: str, is_package: bool, target_version: str) -> str:
    """The key of a module's schema facts (facts.declarations), which the
    targets read of the runtime module and the classes its accessors return:
    a warm fix need not parse them (the check replayed its outcome)."""
    return "fixschema:" + _digest(code_version(), content, module, is_package, target_version)
