"""Whether the tree writes its declarations onto the record's fields at the end
of resolution, and which function does.

SGLang 0.5.17's `ServerArgs.__post_init__` ends with
`materialize_declarations(self)`, a pipeline function that reads the stash and
`setattr`s its parameter by a computed name: after it the fields carry
resolution's decisions, so a field read off the published record (the seed
included) misses only what a post-publish override moved. The design's
record (0.5.23) keeps its fields raw. Derived from the resolution pipeline
(program.resolution: the stash, its readers) and CTX102's facts (the functions
writing a parameter's attribute by a computed name). Asked by CTX101,
and by program.whole_object for CTX102.
"""

from __future__ import annotations

from ctxlint.program.core import Program
from ctxlint.program.handed_reads import KEY as SETTERS
from ctxlint.program.handed_reads import ExposureFacts
from ctxlint.program.resolution import resolution

KEY = "materialiser"
# the facts this question reads (another rule's visitor gathers them)
FACTS_READ = (SETTERS,)


def materialiser(program: Program) -> str | None:
    """The pipeline function that writes the declarations onto the fields (it
    reads the stash and sets its parameter's attributes by a computed name);
    None where resolution leaves the fields raw."""
    return program.memo(KEY, lambda: _build(program))


def seed_holds(program: Program) -> tuple[str, str]:
    """What the seed's fields hold in this tree (CTX101's message): raw input, or
    (where the pipeline writes its declarations onto them) resolution's decisions;
    and, for the details, who writes them."""
    writer = materialiser(program)
    if writer is None:
        return "it is the operator's raw input and misses resolution and overrides", ""
    return "it holds resolution's decisions but misses post-publish overrides", (
        f"`{writer.rpartition('.')[2]}` writes resolution's decisions onto the fields"
    )


def _build(program: Program) -> str | None:
    res = resolution(program)
    setters = {q for _, _, f in program.typed_facts(SETTERS, ExposureFacts) for q in f.setters}
    readers = {
        s.fn
        for _, _, f in res.files
        for s in f.stash
        if s.how == "read" and s.fn and res.slot(s.slot) in res.stash
    }
    readers |= {
        fn for _, _, f in res.files for fn, key in f.slot_reads if fn and res.slot(key) in res.stash
    }
    found = sorted((setters & res.pipeline & readers) - {res.declaration})
    return found[0] if found else None
