"""Which reads off a handed record the design keeps: a whole-object pass
(`f(server_args)`, read as a parameter the function does not park on `self`)
keeps the supplied-instance contract unless the field is one resolution fills
in or a post-publish override moves. Both sets are derived: the fields
resolution fills in from program.declared_names (declaration keywords,
returned keys of registered overrides and passes, constant tables such as
`MODEL_OVERRIDES`, the whitelist: fields declared `resolvable=True`) and the
pipeline's own writes onto the record, the
overridden ones from program.manager_owned (`get_context().override(...)` and
its wrappers, `record_config_updates(...)`). A parameter read of any other
field is kept apart, not reported; a read held by an object (`self.x`, a
parked parameter, another object's record) is reported whatever the field. A
read CTX103 reports (a raw read inside the resolution pipeline, where a view
answers) is CTX103's. Where the tree writes its declarations onto the fields
at the end of resolution (SGLang 0.5.17's `materialize_declarations`: a
pipeline function reading the stash and `setattr`ing its parameter by a
computed name), the record holds resolution's decisions and only a
post-publish override passes it by: `Exposure.holds` says so, and a parameter
read of a field declared but never overridden is kept apart there.

Asked by CTX102 (supplied-exposure), over program.handed_reads.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator, Sequence
from typing import Any, Literal

from ctxlint.discover.files import path_matcher
from ctxlint.facts.vocab import BAGS
from ctxlint.program.call_model import EventKind
from ctxlint.program.calls import CallGraph, call_graph
from ctxlint.program.core import Program
from ctxlint.program.declared_names import KEY as DECLARATIONS
from ctxlint.program.declared_names import declarable_sites, declared_fields
from ctxlint.program.exposure_cuts import exposure_cuts
from ctxlint.program.handed_reads import KEY, ExposedRead, Handed, HandedReads, handed_reads
from ctxlint.program.manager_owned import ID as OVERRIDES
from ctxlint.program.manager_owned import manager_model
from ctxlint.program.materialised import materialiser
from ctxlint.program.pipeline_reads import raw_field_reads
from ctxlint.program.reach import backward
from ctxlint.program.resolution import resolution

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
NOTE_KEY = "note"
# the facts other rules' visitors gather that the two sets are derived from
FACTS_READ = (DECLARATIONS, OVERRIDES)

LAUNCHER = (
    "parameter reads before the same function resolves the record "
    "(launcher-stage resolution, a view answers the raw field: not reported)"
)
ELSEWHERE = (
    "parameter reads of a field overridden only under other process roles "
    "(bags do not cross a process boundary: not reported)"
)

Verdict = Literal["report", "apart", "resolution", "launcher", "elsewhere"]
# the verdicts `ctxlint sets` lists, by title
KEPT: dict[Verdict, str] = {"apart": APART, "launcher": LAUNCHER, "elsewhere": ELSEWHERE}


class Exposure:
    """Which handed reads the design keeps, from the derived sets (module doc)."""

    def __init__(self, program: Program, handed: HandedReads) -> None:
        self.declared = _filled_in(program)
        self.overridden = manager_model(program).overridden()
        res = resolution(program)
        self.materialiser = materialiser(program)
        # the reads CTX103 reports (where it can check: a pipeline with views)
        self.resolution_sites: set[tuple[str, tuple[int, ...]]] = set()
        checks_views = res.entries and res.view_functions and BAGS not in program.vocab.missing
        if checks_views:
            self.resolution_sites = {
                (path, tuple(r.site.span)) for path, r in raw_field_reads(program)
            }
        self.pipeline = res.pipeline
        self.entry_reaching = res.entry_reaching
        self.views = sorted(q.rpartition(".")[2] for q in res.view_functions)
        self.cuts = exposure_cuts(program)
        graph = call_graph(program)
        self.publishers = frozenset(backward(graph, graph.doing(EventKind.PUBLISH)))
        self.workers = _workers(graph, handed_reads(program), self.publishers)
        # no derived set: nothing tells a kept read from a reported one
        self.derived = bool(self.declared or self.overridden)

    def sets(self, program: Program, kept: dict[Verdict, list[str]]) -> dict[str, Any]:
        """The derived sets `ctxlint sets` shows, with the reads `kept` (kept_apart)."""
        handed = handed_reads(program)
        whole = any(handed.whole_object(p, r, h) for p, _, r, h in handed.reads())
        return {
            DECLARED: _first(self.declared),
            OVERRIDDEN: _first(self.overridden),
            MATERIALISER: [self.materialiser] if self.materialiser else [],
            **{title: sorted(kept.get(v, [])) for v, title in KEPT.items()},
            **({NOTE_KEY: NOTE} if whole and not self.derived else {}),
        }

    def moved(self, field: str, in_pipeline: bool = False) -> bool:
        """A post-publish override moves the field, or resolution fills it in
        while the record keeps the raw input. Where a materialiser writes the
        declarations onto the fields, the record holds resolution's decision
        once resolution has ended, which is what the bag is projected from: the
        design's reason for the unless-clause ("the record carries the user's
        raw input") does not hold there, but still does inside the pipeline."""
        return self.filled(field, in_pipeline) or field in self.overridden

    def filled(self, field: str, in_pipeline: bool = False) -> bool:
        """Resolution fills the field in while the record keeps the raw input
        (`moved`'s first half)."""
        return field in self.declared and (self.materialiser is None or in_pipeline)

    def verdict(
        self, handed: HandedReads, path: str, module: str, r: ExposedRead, held: Handed
    ) -> Verdict:
        if (path, tuple(r.site.span)) in self.resolution_sites:
            return "resolution"
        in_pipeline = f"{module}.{r.site.scope}" in self.pipeline
        # a worker's constructor (the design's "every worker (`TpModelWorker`, the
        # draft workers in `speculative/`) is handed the same instance the process
        # published", whose reads move to the bags) is no whole-object pass; a
        # helper's parking constructor is (0.5.17's `ExpertBackupClient.__init__`)
        worker = handed.parks(path, r, held) and f"{module}.{r.site.scope}" in self.workers
        whole = handed.whole_object(path, r, held) and not worker
        if self.derived and whole and not self.moved(r.field, in_pipeline):
            return "apart"
        if whole and self.cuts.resolved_later(handed, path, r, held):
            return "launcher"
        q = f"{module}.{r.site.scope}"
        filled = self.filled(r.field, in_pipeline)
        if whole and not filled and self.cuts.overridden_elsewhere(q, r.field):
            return "elsewhere"
        return "report"

    def holds(self, field: str) -> str:
        """What the record holds for the field, as this tree resolves and overrides
        it: raw input, or (where declarations are written onto the fields at the
        end of resolution) resolution's decision, which only an override passes by."""
        declared, overridden = field in self.declared, field in self.overridden
        if self.materialiser is not None:
            if overridden:
                return "the startup record, which a post-publish override of it passes by"
            if declared:
                return "resolution's decision written onto the field, which a post-publish override passes by"
            return "the startup record, which post-publish overrides pass by"
        if declared and overridden:
            return "raw input, which resolution's declaration and a post-publish override pass by"
        if declared:
            return "raw input, which resolution's declaration of it passes by"
        if overridden:
            return "raw input, which a post-publish override of it passes by"
        return "raw input, which resolution and post-publish overrides pass by"

    def where(self, field: str) -> str:
        """Where the field is declared and overridden (the first site of each)."""
        out = ""
        for what, sites in (("Declared", self.declared), ("Overridden", self.overridden)):
            if field in sites:
                more = f" (and {len(sites[field]) - 1} more)" if len(sites[field]) > 1 else ""
                out += f"{what} at {sites[field][0]}{more}. "
        if self.materialiser is not None and field in self.declared:
            out += f"`{self.materialiser.rpartition('.')[2]}` writes declarations onto the fields. "
        return out

    def view_remedy(self, module: str, r: ExposedRead) -> str | None:
        """The remedy of a read in resolution code that CTX103 does not report
        (None: not resolution code): a view, no bag exists yet."""
        q = f"{module}.{r.site.scope}"
        if q not in self.pipeline:
            return None
        return (
            f"Inside resolution (reached from {self.entry_reaching(q)}), where no bag "
            f"exists yet: read it through a view ({', '.join(self.views) or 'none derived'})."
        )


def _filled_in(program: Program) -> dict[str, list[str]]:
    """Field -> where resolution fills it in ("path:line", sorted; the whitelist's
    site last): a declaration naming it (program.declared_names), a pipeline
    function writing it onto the record (SGLang 0.5.17's `__post_init__` still
    assigns some fields), or the whitelist (`resolvable=True`: the design's
    fields a declaration may fill, named by a computed key as well)."""
    found = {k: set(v) for k, v in declared_fields(program).items()}
    res = resolution(program)
    for path, _, f in res.files:
        for w in f.writes:
            if w.fn in res.pipeline:
                found.setdefault(w.field, set()).add(f"{path}:{w.site.span[0]}")
    out = {k: sorted(v) for k, v in found.items()}
    for name, site in declarable_sites(program).items():
        out.setdefault(name, []).append(site)
    return dict(sorted(out.items()))


def exposure(program: Program) -> Exposure:
    """The run's answer, built once."""
    return program.memo(f"{KEY}:exposure", lambda: Exposure(program, handed_reads(program)))


def _first(sites: dict[str, list[str]]) -> dict[str, str]:
    """Field -> its first site, with how many more."""
    return {k: v[0] + (f" (+{len(v) - 1})" if len(v) > 1 else "") for k, v in sites.items()}


def judged(
    program: Program, factories: Sequence[str], allowed: Sequence[str]
) -> Iterator[tuple[str, str, ExposedRead, Handed, Verdict]]:
    """(path, module, read, how it is held, verdict) of each read off a handed
    record that no factory pattern (fnmatch, on a part of its scope) or allowed
    class exempts."""
    handed = handed_reads(program)
    seen = exposure(program)
    for path, module, r, held in handed.reads():
        if any(fnmatch.fnmatchcase(part, p) for part in r.site.scope.split(".") for p in factories):
            continue
        if r.cls and any(class_matches(a, module, r.cls) for a in allowed):
            continue
        yield path, module, r, held, seen.verdict(handed, path, module, r, held)


def kept_apart(
    program: Program, factories: Sequence[str], allowed: Sequence[str]
) -> dict[Verdict, list[str]]:
    """Verdict -> "path:line scope `field`" of each read it keeps from the report
    (KEPT), outside the rule's excludes."""
    excluded = program.config.per_rule_exclude.get(KEY)
    outside = path_matcher(excluded).match_file if excluded else lambda _: False
    out: dict[Verdict, list[str]] = {}
    for path, _, r, _, verdict in judged(program, factories, allowed):
        if verdict in KEPT and not outside(path):
            out.setdefault(verdict, []).append(
                f"{path}:{r.site.span[0]} {r.site.scope} `{r.field}`"
            )
    return out


def class_matches(allowed: str, module: str, cls: str) -> bool:
    """`GrammarManager` names any class of that name (or one nested in it);
    `pkg.mod.Class` names exactly that one."""
    if "." in allowed:
        full = f"{module}.{cls}"
        return full == allowed or full.startswith(allowed + ".")
    return allowed in cls.split(".")


def _workers(graph: CallGraph, handed: HandedReads, publishers: frozenset[str]) -> frozenset[str]:
    """The workers' parking constructors: a constructor that parks the record
    and builds what publishes (`TpModelWorker.__init__`, 0.5.17's
    `EAGLEWorkerV2.__init__`), and one that parks it in a class sharing a
    parsed base with such a worker: another implementation of the same worker
    interface, handed the record the same way (0.5.17's `NGRAMWorker`, a
    `BaseSpecWorker` drafting from a CPU corpus, builds no runner of its own:
    the design's "the draft workers in `speculative/`")."""
    modules = {path: module for path, module, _ in handed.files}
    parking = {f"{modules[path]}.{scope}" for path, scope, _ in handed.parking}
    builds = {q for q in parking if q in publishers}
    index = graph.index
    bases = {b for q in builds if (c := graph.funcs[q].cls) for b in index.mro(c)[1:]}
    out = set(builds)
    for q in parking - builds:
        fn = graph.funcs.get(q)
        if fn is not None and fn.cls is not None and bases.intersection(index.mro(fn.cls)[1:]):
            out.add(q)
    return frozenset(out)
