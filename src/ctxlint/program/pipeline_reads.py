"""What the resolution pipeline reads raw: a record field read directly, or a bag
read, where resolution has not decided yet (CTX103 asks).

Resolution writes nothing onto the record (a handler declares into the stash),
so inside the pipeline (program.resolution) a direct field read answers with
the raw input, and no bag exists before publish. Outside the views (the view
functions and the methods of the view classes) and the declaration function:

- `raw_field_reads`: a field read off a record holder (annotated with the
  record, a method's receiver in a record class, or a parameter the codebase's
  record convention names, program.record_conventions);
- `pipeline_bag_reads`: a bag accessor call (the vocabulary's derived bag
  accessors, never a `get_*` pattern), with the pipeline's call chain to it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ctxlint.program.call_model import EventKind
from ctxlint.program.calls import short
from ctxlint.program.core import Program
from ctxlint.program.record_conventions import record_convention
from ctxlint.program.resolution import Resolution, resolution
from ctxlint.program.resolution_schema import FieldAccess


@dataclass(frozen=True, slots=True)
class PipelineBagRead:
    """A bag accessor call in pipeline function `scope` (shortened); `chain`: the
    calls from the pipeline's entry to it (`a -> b`)."""

    path: str
    scope: str
    snippet: str
    span: list[int]
    accessor: str
    chain: str


def _holds_record(program: Program, res: Resolution, module: str, read: FieldAccess) -> bool:
    if read.kind == "ann":
        return True
    if read.kind == "recv":
        return res.graph.funcs[read.fn].cls in program.vocab.record_classes
    return record_convention(program).holds(read.holder, module)


def views(res: Resolution) -> set[str]:
    """The view functions, and the methods of the view classes."""
    g = res.graph
    return res.view_functions | {q for q, fn in g.funcs.items() if fn.cls in res.view_classes}


def raw_field_reads(program: Program) -> Iterator[tuple[str, FieldAccess]]:
    """(path, read) of each record field read directly in the pipeline."""
    res = resolution(program)
    skip = views(res) | {res.declaration}
    for path, module, facts in res.files:
        for r in facts.reads:
            if r.fn in res.pipeline and r.fn not in skip:
                if _holds_record(program, res, module, r):
                    yield path, r


def pipeline_bag_reads(program: Program) -> Iterator[PipelineBagRead]:
    """Each bag accessor call in the pipeline, by function."""
    res = resolution(program)
    g = res.graph
    for q in sorted(res.pipeline):
        fn = g.funcs[q]
        for e in fn.events:
            if e.kind is not EventKind.READ or e.site is None:
                continue
            chain = " -> ".join(short(x, g.funcs[x].module) for x in res.chain(q))
            name = short(q, fn.module)
            yield PipelineBagRead(
                fn.path, name, e.site.snippet, e.site.span, e.accessor or "", chain
            )
