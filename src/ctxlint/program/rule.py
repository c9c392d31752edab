"""What a rule is: a file visitor that emits facts, derivations, and a check.

A rule is one module in `ctxlint.rules` defining `RULE`, plus one spec
`rules/<ID>.md`; the registry (engine.registry) finds both, so adding a rule
touches nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from ctxlint.core.findings import PIN, VIOLATION, RuleInfo
from ctxlint.facts.visitor import FileVisitor
from ctxlint.program.core import Program

if TYPE_CHECKING:
    from ctxlint.facts.vocab import Vocabulary
    from ctxlint.program.suppressions import Suppressions

# (path, scope, line) -> what makes a rewrite there a new finding of the rule that
# answers (CTX301: the process entry that runs the line before its publish), or
# None: what a fixer asks before it rewrites (Rule.fix_guard).


@dataclass(slots=True)
class RawFinding:
    rule: str
    path: str
    scope: str
    snippet: str
    span: list[int]  # line, column, end_line, end_column
    message: str  # one sentence
    details: str = ""  # the rest (signatures, every problem), shown with --show-details
    # what the finding is about ("field", "namespace", "key"...): read by the audit
    # and written to the JSON, never hashed into the fingerprint
    data: dict[str, str] = field(default_factory=dict)
    kind: str = VIOLATION  # or PIN: a pinned fact that differs from the baseline
    # the scope the fingerprint is keyed by, when not `scope` (CTX001: a comment
    # is known by its file and text; its enclosing def is shown, not hashed, so
    # baselines pinned before CTX001 named it keep matching)
    key_scope: str | None = None


def field_data(vocab: Vocabulary, name: str) -> dict[str, str]:
    """A record-field finding's data: the field, and its namespace when known."""
    ns = vocab.fields.get(name)
    return {"field": name, "namespace": ns} if ns else {"field": name}


class Located(Protocol):
    """A fact that can become a finding where it stands (facts.typed.Site, or a
    fact carrying its own scope, snippet and span)."""

    @property
    def scope(self) -> str: ...
    @property
    def snippet(self) -> str: ...
    @property
    def span(self) -> list[int]: ...


def finding_at(
    rule: str, path: str, at: Located, message: str, details: str = "", **data: str
) -> RawFinding:
    """A finding of `rule` at the fact `at` of file `path`, `data` its data."""
    return RawFinding(rule, path, at.scope, at.snippet, at.span, message, details, data)


class Rule:
    id: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    visitor: ClassVar[type[FileVisitor] | None] = None
    # Extra config keys this rule reads from [tool.ctxlint], with defaults.
    options: ClassVar[dict[str, Any]] = {}
    # Vocabulary sets the rule cannot run without (vocab.SEED, BAGS, NAMESPACES): in
    # a codebase that has not reached that stage the rule is disabled for the run.
    needs: ClassVar[tuple[str, ...]] = ()
    # Parts of the program model (program.parts.PARTS) the rule queries: their
    # per-file visitors run in the one traversal, their indexes are built once a run.
    requires: ClassVar[tuple[str, ...]] = ()
    # Facts another rule's visitor gathers (under that rule's id) that this rule's
    # model questions read too: a resident run checks the rule again when they change.
    reads_facts: ClassVar[tuple[str, ...]] = ()
    # The kinds of fix `ctxlint fix` has for the rule's findings: "safe" (runs by
    # default), "unsafe" (needs --unsafe: it can change behaviour); () for none.
    fixes: ClassVar[tuple[str, ...]] = ()
    # Where the rule's fixers plan in a file among the other rules' (lower first,
    # then by id): a rename (CTX401) frees a name a read's rewrite may need.
    fix_order: ClassVar[int] = 1
    # The rules whose fix guards (fix_guard) the rule's fixers read, by id: the fix
    # run asks those rules only when a fixer that reads them rewrites.
    fix_guards: ClassVar[tuple[str, ...]] = ()

    def disabled_because(self, vocab: Vocabulary) -> str | None:
        """Why this rule cannot run on this codebase (a missing set), or None."""
        for name in self.needs:
            if name in vocab.missing:
                return vocab.missing[name]
        return None

    def info(self) -> RuleInfo:
        return RuleInfo(self.id, self.name, self.summary, f"rules/{self.id}.md")

    def tokens(self, vocab: Vocabulary) -> set[str] | None:
        """What makes a file matter; None means every file.

        An identifier token (`get_exec`) matches the whole word only; any other
        token (`def get(`, `ctxlint:`) matches as a substring; `module:a.b`
        selects the file of module `a.b` itself (a definition the facts so far
        name but do not hold)."""
        return set()

    def more_tokens(self, program: Program) -> set[str]:
        """Tokens learnt from the facts gathered so far (a fixed point is iterated)."""
        return set()

    def derive(self, program: Program) -> dict[str, Any]:
        """Named derived sets (shown by `ctxlint sets`), stored in program.sets[id]."""
        return {}

    def check(self, program: Program) -> Iterable[RawFinding]:
        return ()

    def partial(self, sets: dict[str, Any]) -> str | None:
        """Why this run checked less than the rule specifies (a helper tool that
        could not run, say), from the rule's derived sets; None when complete."""
        return None

    def environment(self) -> str:
        """What the rule's outcome depends on outside the checked tree and the
        config (a helper tool's presence and version, say). It is part of the
        stored outcome's key, so installing or removing the tool is a miss."""
        return ""

    def fixers(self) -> tuple[Callable[..., None], ...]:
        """The rule's fixers (fix.context.Fixer: a file's plan, the rule's findings
        in it, the fix context), run in order on each file with a fixable finding.
        A rule module imports its fixers here, on first use: they import LibCST,
        which a check that parses nothing never loads."""
        return ()

    def fix_guard(self, program: Program) -> FixGuard | None:
        """Where a rewrite by another rule's fixer would add a finding of this
        rule, answered from the checked program before the rewrite is made (so
        the site is left with the reason, rather than rewritten, re-checked and
        rolled back with its whole file); None when the rule has no such answer."""
        return None

    def check_suppressions(self, suppressions: Suppressions) -> Iterable[RawFinding]:
        """Findings about the `# ctxlint: ignore[...]` comments themselves, once
        they have been applied to the other rules' findings (CTX001)."""
        return ()

    def pins(self, program: Program) -> dict[str, Any]:
        """Derived facts pinned in the baseline (hook signatures, say): any
        difference from `program.pinned[id]` is a finding until `baseline update`
        records it, so changing one is a visible, reviewed baseline diff."""
        return {}


@dataclass(frozen=True)
class GuardUntil:
    """A fix guard as data: the functions (qualified) that run, each for a reason
    (`by`: the entry that runs it), up to a line of their own body (None: all of
    it), and a path -> module map. Data, so that a fix whose check replayed a
    stored outcome can replay the guard too (fix_run) instead of building the
    program again for it."""

    modules: dict[str, str]
    runs: dict[str, tuple[str, int | None]]

    def __call__(self, path: str, scope: str, line: int) -> str | None:
        found = self.runs.get(f"{self.modules.get(path, '')}.{scope}")
        if found is None:
            return None
        by, until = found
        # until 0: no position was kept for the line that ends it (a nested
        # function's call, say), so no line is known to come before it (the
        # re-check still rolls such a rewrite back)
        return by if until is None or line < until else None

    def to_json(self) -> dict[str, Any]:
        return {"modules": self.modules, "runs": {q: list(r) for q, r in self.runs.items()}}

    @classmethod
    def from_json(cls, data: Any) -> GuardUntil | None:
        """The stored form read back; None when it is not of this shape (a miss)."""
        if not (isinstance(data, dict) and set(data) == {"modules", "runs"}):
            return None
        modules, runs = data["modules"], data["runs"]
        if not (isinstance(modules, dict) and isinstance(runs, dict)):
            return None
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in modules.items()):
            return None
        ok = all(
            isinstance(r, list)
            and len(r) == 2
            and isinstance(r[0], str)
            and (r[1] is None or type(r[1]) is int)
            for r in runs.values()
        )
        return cls(modules, {q: (r[0], r[1]) for q, r in runs.items()}) if ok else None


FixGuard = GuardUntil


def guard_until(program: Program, runs: dict[str, tuple[str, int | None]]) -> GuardUntil:
    """A fix guard from the functions that run before publish (GuardUntil). It
    keeps only a path -> module map of the program: the fix run lets the program
    go once it has asked."""
    modules = {path: entry["module"] for path, entry in program.files.items()}
    return GuardUntil(modules, dict(runs))


@dataclass(frozen=True, slots=True)
class PinSite:
    """Where a pinned key lives in the code, for the finding a change produces."""

    path: str
    scope: str
    snippet: str
    span: list[int]


def _nearest_site(key: str, sites: dict[str, PinSite]) -> PinSite | None:
    """The site of the key sharing the most leading dotted parts with `key`
    (the first such key, by name)."""
    if not sites:
        return None
    parts = key.split(".")

    def shared(other: str) -> int:
        n = 0
        for a, b in zip(parts, other.split("."), strict=False):
            if a != b:
                break
            n += 1
        return n

    return sites[min(sites, key=lambda k: (-shared(k), k))]


def _runtime_site(program: Program) -> PinSite | None:
    path = program.module_path(program.config.runtime_module)
    return PinSite(path, "<module>", "", [1, 1, 1, 1]) if path is not None else None


def pin_findings(
    rule_id: str, program: Program, current: dict[str, Any], sites: dict[str, PinSite]
) -> list[RawFinding]:
    """Findings for every key whose value differs from the baseline's pin.

    A key with no site (it was removed from the code) is reported at the site
    of the remaining key nearest it by name (`pkg.mod.Base.gone` at another
    hook of `pkg.mod.Base`: the file the change is in, which is what
    --changed-since and an annotation look at); when no key remains, at the top
    of the runtime module, whose design the pins keep (the last pinned
    publisher removed must not pass as a clean run).
    """
    pinned = program.pinned.get(rule_id, {})
    out: list[RawFinding] = []
    for key in sorted(set(pinned) | set(current)):
        old, new = pinned.get(key), current.get(key)
        if old == new:
            continue
        site = sites.get(key) or _nearest_site(key, sites) or _runtime_site(program)
        if site is None:  # (no runtime module among the files: no rule derives anything)
            continue
        if old is None:
            what = f"{key} is not pinned in the baseline (now {new})"
        elif new is None:
            what = f"{key} was pinned as {old} and is gone"
        else:
            what = f"{key} changed: pinned {old}, now {new}"
        out.append(
            RawFinding(
                rule_id,
                site.path,
                site.scope,
                f"pin {key}",
                site.span,
                f"{what}; if intended, record it with `ctxlint baseline update`",
                data={"key": key},
                kind=PIN,
            )
        )
    return out
