"""The program model's parts, each fed by one built-in per-file visitor.

A rule names the parts it queries in `Rule.requires` (as LibCST rules name
their METADATA_DEPENDENCIES); the engine runs the visitors of every part some
rule requires, in the same one traversal as the rules' own visitors, and files
their facts under the part's key. The whole-program side of a part is built
once per run from those facts and memoised on the Program (`Program.memo`).
"""

from __future__ import annotations

from ctxlint.facts.visitor import FileVisitor
from ctxlint.program.bindings import Bindings
from ctxlint.program.call_facts import CallFactsVisitor
from ctxlint.program.classes import ClassFacts
from ctxlint.program.records import RecordTracker
from ctxlint.program.rule import Rule

# Every run has the record tracker: rule visitors ask it, during the walk,
# which expressions hold a record.
ALWAYS = ("records",)
PARTS: dict[str, type[FileVisitor]] = {
    "records": RecordTracker,
    "bindings": Bindings,
    "classes": ClassFacts,  # queries "bindings" during the walk
    "calls": CallFactsVisitor,  # program.calls: the whole-program call graph
}
# Parts a part queries during the walk: required along with it.
DEPENDS: dict[str, tuple[str, ...]] = {"classes": ("bindings",)}


def visitors_for(rules: list[Rule]) -> list[tuple[str, type[FileVisitor]]]:
    """(key, visitor class) of the parts these rules require, in PARTS order."""
    wanted = set(ALWAYS).union(*(r.requires for r in rules))
    wanted |= {d for key in wanted for d in DEPENDS.get(key, ())}
    unknown = wanted - set(PARTS)
    if unknown:
        raise ValueError(f"rules require unknown program parts: {sorted(unknown)}")
    return [(key, cls) for key, cls in PARTS.items() if key in wanted]
