"""CTX102 supplied-exposure: a field read off a record instance the code was handed.

The instance a function receives is the same object the process published, so
a field read off it answers with the operator's raw input: a value resolution
decided, or a post-publish override set, passes it by. The design pins these
reads at zero outside named exemptions. Spellings: `server_args.f` on a
parameter (the codebase's record-parameter names, or one annotated with the
record class), `self.server_args.f`, literal `getattr(server_args, "f"[, d])`,
the parked form (`self.x = server_args` in a method taking it, read as
`self.x.f` anywhere in the class), and chains through another object's record
(`runner.server_args.f`). Reads off the seed are CTX101's.

A record property that reads no configuration (its body touches `self` only
for slots that are neither fields nor members, SGLang's provenance
`launch_command`) has no bag behind it and no leaf to read instead: reading it
off a handed record is not exposure. Where a property does read fields and no
leaf answers it, the finding says the runtime lacks the accessor.

A whole-object pass (`f(server_args)`: a parameter read, the parameter not
parked on `self`) keeps the design's supplied-instance contract unless the
field is one resolution fills in or a post-publish override moves (both sets
derived); a parameter read of any other field is kept apart, listed by
`ctxlint sets`, never a finding. With neither set derived on a tree that has
such reads, every read is reported and the rule says it is partial. A raw
read inside the resolution pipeline that CTX103 reports is CTX103's (a view
answers there, no bag exists yet).

Which reads are off a handed record, how it is held, and which the design
keeps, is the model's question (program/handed_reads.py); every exemption is
decided in check() so that config changes never invalidate cached facts.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Iterator
from typing import Any, ClassVar

from ctxlint.discover.files import path_matcher
from ctxlint.facts.vocab import Vocabulary
from ctxlint.program.core import Program
from ctxlint.program.handed_reads import (
    REQUIRES,
    ExposedRead,
    Exposure,
    ExposureVisitor,
    Handed,
    exposure,
    handed_reads,
)
from ctxlint.program.reads import lacking_accessor, leaf_spelling, namespace_hint
from ctxlint.program.record_conventions import record_names
from ctxlint.program.rule import RawFinding, Rule, field_data

ID = "CTX102"
ALLOWED_CLASSES = "exposure-allowed-classes"
FACTORIES = "exposure-factories"
# Factories whose contract is "build X from the record you are handed".
BUILTIN_FACTORIES = ("from_server_args", "create_*_from_server_args")
DECLARED = "fields resolution fills in: declares, or writes in the pipeline (where)"
OVERRIDDEN = "fields a post-publish override moves (where)"
MATERIALISER = "declarations written onto the fields by"
APART = (
    "parameter reads of a field nothing declares or overrides "
    "(whole-object pass, supplied-instance contract: not reported)"
)
NOTE = (
    "no field is declared or overridden anywhere (no declaration, returned key, "
    "constant table or override call derived): a whole-object pass cannot be told "
    "from exposure, so every parameter read is reported"
)


class SuppliedExposure(Rule):
    id = ID
    name = "supplied-exposure"
    summary = (
        "A field read off a record instance the code was handed (a parameter, self.server_args, "
        "a parked alias, another object's record) instead of its bag"
    )
    fixes = ("unsafe",)  # ctxlint fix (docs/fix.md)
    fix_guards = ("CTX301",)  # a read it rewrites must not come before publish
    visitor = ExposureVisitor
    requires = REQUIRES  # the call graph: whether a publish precedes a read decides its hint
    options: ClassVar[dict[str, Any]] = {ALLOWED_CLASSES: [], FACTORIES: []}

    def fixers(self) -> tuple[Callable[..., None], ...]:
        from ctxlint.rules.ctx102_supplied_exposure.fix import fix_supplied_reads

        return (fix_supplied_reads,)

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return {vocab.record_name, "publish"}

    def more_tokens(self, program: Program) -> set[str]:
        return record_names(program)

    def _option(self, program: Program, key: str) -> list[str]:
        value = program.config.options.get(key, self.options[key])
        return [str(v) for v in value]

    def derive(self, program: Program) -> dict[str, Any]:
        handed = handed_reads(program)
        allowed = self._option(program, ALLOWED_CLASSES)
        seen = exposure(program)
        excluded = program.config.per_rule_exclude.get(ID)
        outside = path_matcher(excluded).match_file if excluded else lambda _: False
        apart = [
            f"{path}:{r.site.span[0]} {r.site.scope} `{r.field}`"
            for path, _, r, held, verdict in self._judged(program)
            if verdict == "apart" and not outside(path)
        ]
        whole = any(handed.whole_object(p, r, h) for p, _, r, h in handed.reads())
        return {
            DECLARED: {
                k: v[0] + (f" (+{len(v) - 1})" if len(v) > 1 else "")
                for k, v in seen.declared.items()
            },
            OVERRIDDEN: {
                k: v[0] + (f" (+{len(v) - 1})" if len(v) > 1 else "")
                for k, v in seen.overridden.items()
            },
            MATERIALISER: [seen.materialiser] if seen.materialiser else [],
            APART: sorted(apart),
            **({"note": NOTE} if whole and not seen.derived else {}),
            "record parameter names": sorted(handed.names.names),
            "parked record attributes": sorted(
                f"{path}:{cls}.{attr} = {n}" for (path, cls, attr), n in handed.parked.items()
            ),
            "exempt factory patterns": [*BUILTIN_FACTORIES, *self._option(program, FACTORIES)],
            "allowed classes": allowed,
            # a stale allow-list entry passes green forever: show it
            "allowed classes with no read": sorted(
                a for a in allowed if not any(_class_matches(a, m, c) for m, c in handed.classes)
            ),
        }

    def partial(self, sets: dict[str, Any]) -> str | None:
        return NOTE if sets.get("note") == NOTE else None

    def _judged(self, program: Program) -> Iterator[tuple[str, str, ExposedRead, Handed, str]]:
        """(path, module, read, how it is held, verdict) of each read off a handed
        record that no factory pattern or allowed class exempts."""
        handed = handed_reads(program)
        seen = exposure(program)
        factories = [*BUILTIN_FACTORIES, *self._option(program, FACTORIES)]
        allowed = self._option(program, ALLOWED_CLASSES)
        for path, module, r, held in handed.reads():
            if any(
                fnmatch.fnmatchcase(part, p) for part in r.site.scope.split(".") for p in factories
            ):
                continue
            if r.cls and any(_class_matches(a, module, r.cls) for a in allowed):
                continue
            yield path, module, r, held, seen.verdict(handed, path, r, held)

    def check(self, program: Program) -> Iterable[RawFinding]:
        handed = handed_reads(program)
        seen = exposure(program)
        rname = program.vocab.record_name
        for path, module, r, held, verdict in self._judged(program):
            if verdict != "report":
                continue  # kept apart (the sets list it), or CTX103's
            spelled = " (literal getattr)" if r.form == "getattr" else ""
            inside = seen.inside(module, r)
            if inside is not None:
                details = (
                    f"Inside resolution (reached from {inside}), where no bag exists yet: "
                    f"read it through a view ({', '.join(seen.views) or 'none derived'})."
                )
            else:
                unpublished = handed.unpublished(program, path, module, r)
                details = _remedy(program.vocab, r.site.scope, r.field, unpublished)
            yield RawFinding(
                ID,
                path,
                r.site.scope,
                r.site.snippet,
                r.site.span,
                f"`{r.field}` read off a handed {rname}{spelled} through {_how(held)}: "
                + _why(seen, r.field),
                details=_where(seen, r.field) + details,
                data=field_data(program.vocab, r.field),
            )


def _why(seen: Exposure, field: str) -> str:
    """What the record holds for the field, as this tree resolves and overrides
    it: raw input, or (where declarations are written onto the fields at the
    end of resolution) resolution's decision, which only an override passes by."""
    declared, overridden = field in seen.declared, field in seen.overridden
    if seen.materialiser is not None:
        if overridden:
            return "the startup record, which a post-publish override of it passes by"
        if declared:
            return (
                "resolution's decision (written onto the field), which a post-publish "
                "override would pass by"
            )
        return "the startup record, which post-publish overrides pass by"
    if declared and overridden:
        return "raw input, which resolution's declaration and a post-publish override pass by"
    if declared:
        return "raw input, which resolution's declaration of it passes by"
    if overridden:
        return "raw input, which a post-publish override of it passes by"
    return "raw input, which resolution and post-publish overrides pass by"


def _where(seen: Exposure, field: str) -> str:
    """Where the field is declared and overridden (the first site of each)."""
    out = ""
    for what, sites in (("Declared", seen.declared), ("Overridden", seen.overridden)):
        if field in sites:
            more = f" (and {len(sites[field]) - 1} more)" if len(sites[field]) > 1 else ""
            out += f"{what} at {sites[field][0]}{more}. "
    if seen.materialiser is not None and field in seen.declared:
        out += f"`{seen.materialiser.rpartition('.')[2]}` writes declarations onto the fields. "
    return out


def _how(h: Handed) -> str:
    if h.kind == "param":
        return f"parameter `{h.name}`"
    if h.kind == "chain":
        return f"`{h.via}.{h.name}`"  # another object's record
    parked = f", parked from parameter `{h.via}`" if h.via else ""
    return f"`self.{h.name}`{parked}"


def _remedy(vocab: Vocabulary, scope: str, field: str, unpublished: bool) -> str:
    """What to read instead, named only where the runtime defines it, and only
    where a publish may precede the read (a bag accessor raises before it)."""
    if unpublished:
        return (
            f"No publish precedes this read in `{scope}` on any path "
            "into it, so a bag accessor raises here: pass the resolved value down as an "
            "argument, or keep the handed record."
        )
    where = leaf_spelling(vocab, field)
    # the leaf with when it answers: a body's publish may sit in a branch
    after = (
        " once the process has published (code that runs before its publish takes the "
        "value as a constructor argument instead)"
    )
    if where is not None:
        return f"Read {where}{after}."
    if field in vocab.fields:
        hint = namespace_hint(vocab, field)
        return f"{hint[0].upper()}{hint[1:]}; then read that leaf{after}."
    return (
        f"`{field}` is a property of the record with no bag leaf: {lacking_accessor(vocab)}{after}."
    )


def _class_matches(allowed: str, module: str, cls: str) -> bool:
    """`GrammarManager` names any class of that name (or one nested in it);
    `pkg.mod.Class` names exactly that one."""
    if "." in allowed:
        full = f"{module}.{cls}"
        return full == allowed or full.startswith(allowed + ".")
    return allowed in cls.split(".")


RULE = SuppliedExposure()
