"""The program model's parts, each fed by one built-in per-file visitor.

A rule names the parts it queries in `Rule.requires` (as LibCST rules name
their METADATA_DEPENDENCIES); the engine runs the visitors of every part some
rule requires, in the same one traversal as the rules' own visitors, and files
their facts under the part's key. The whole-program side of a part is built
once per run from those facts and memoised on the Program (`Program.memo`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ctxlint.facts.visitor import FileVisitor
    from ctxlint.program.rule import Rule

# Every run has the record tracker: rule visitors ask it, during the walk,
# which expressions hold a record (and it asks the binding model).
ALWAYS = ("records",)
# key -> "module:Class" of its visitor, imported when a walk needs it: the
# visitors subclass LibCST's, and a warm run (a replayed outcome) never loads LibCST.
PARTS: dict[str, str] = {
    "bindings": "ctxlint.program.bindings:Bindings",  # first: the others ask it
    "records": "ctxlint.program.records:RecordTracker",
    "classes": "ctxlint.program.classes:ClassFacts",  # queries "bindings" during the walk
    "calls": "ctxlint.program.call_facts:CallFactsVisitor",  # the whole-program call graph
    "resolution": "ctxlint.program.resolution_facts:ResolutionFacts",  # stash, views, passes
    "threads": "ctxlint.program.call_starts:ThreadStartFacts",  # thread starts
}
# Parts a part queries during the walk: required along with it.
DEPENDS: dict[str, tuple[str, ...]] = {
    key: ("bindings",) for key in ("records", "classes", "calls", "resolution", "threads")
}
# Side parts: facts a part's visitor gathers that no rule reads (so no rule's
# round answer depends on them), run with that part; `ctxlint fix` reads them.
CALL_LINES = "call_lines"
CONFIG_SITES = "config_sites"
SIDE: dict[str, tuple[str, str]] = {
    CALL_LINES: ("calls", "ctxlint.program.call_facts:CallLines"),  # after "calls"
    # where each file names a config leaf or namespace, with positions: what the
    # server's navigation (program/config_index.py) answers from; after "records",
    # whose verdicts on record holders it asks during the walk
    CONFIG_SITES: ("records", "ctxlint.program.config_sites:ConfigSites"),
}


def required(rules: list[Rule]) -> set[str]:
    """The parts these rules require, with those every run has and those they
    query during the walk."""
    wanted = set(ALWAYS).union(*(r.requires for r in rules))
    return wanted | {d for key in wanted for d in DEPENDS.get(key, ())}


def visitors_for(rules: list[Rule]) -> list[tuple[str, type[FileVisitor]]]:
    """(key, visitor class) of the parts these rules require, in PARTS order,
    then the side parts of those."""
    wanted = required(rules)
    unknown = wanted - set(PARTS)
    if unknown:
        raise ValueError(f"rules require unknown program parts: {sorted(unknown)}")
    found = [(key, where) for key, where in PARTS.items() if key in wanted]
    found += [(key, where) for key, (part, where) in SIDE.items() if part in wanted]
    return [(key, _load(where)) for key, where in found]


def _load(where: str) -> type[FileVisitor]:
    module, _, name = where.partition(":")
    return getattr(importlib.import_module(module), name)
