"""Spans and snippet texts of a spliced module without a codegen of all of it.

The anchors' spans (and the sites' one-line texts) come from a codegen pass
over the module (facts.positions), which for a large file costs more than
the walk of one statement. After a splice (facts.splice) every node outside
the new statement is the same object as before: its text is the same, and
its span the same, moved by the lines the edit added or removed when it lies
after the edited statement. So the spans and texts of the last extraction
are kept with the module (`Placed`), and only the new statement is generated
(from its first line). Any node asked for that is neither kept nor in the
new statement (an anchor made at `finish` for a node nobody anchored last
time) sends the whole module through the codegen, as without a kept module.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from ctxlint.facts.positions import _SpansAndTexts, spans_and_texts

if TYPE_CHECKING:
    from ctxlint.facts.splice import Kept

Span = tuple[int, int, int, int]  # line, column, end line, end column (columns 1-based)


@dataclass
class Placed:
    """The spans and texts asked for by the last extraction of `module`, by
    id() with the node (an id names one object only while it lives)."""

    module: cst.Module
    spans: dict[int, tuple[cst.CSTNode, Span]]
    texts: dict[int, tuple[cst.CSTNode, str]]


def _known(kept: Kept) -> tuple[Placed, int, int] | None:
    """The kept spans, the last line before which they stand, and how far
    the lines after it moved; None when they are not this module's."""
    placed = kept.placed
    if placed is None:
        return None
    if placed.module is kept.module:
        return placed, 0, 0
    window = kept.changed
    if window is None or placed.module is not kept.base:
        return None
    return placed, window.old_end, window.new_end - window.old_end


def place(
    kept: Kept, nodes: Sequence[cst.CSTNode], texts: Sequence[cst.CSTNode]
) -> tuple[dict[cst.CSTNode, list[int]], dict[int, str]]:
    """`positions.spans_and_texts(kept.module, nodes, texts)`, from the kept
    spans and a codegen of the spliced statement where they suffice; the
    answers are kept for the next edit."""
    found, said = _from_known(kept, nodes, texts)
    if found is None or said is None:
        found, said = spans_and_texts(kept.module, nodes, texts)
        kept.generated = "module"
    kept.placed = Placed(
        kept.module,
        {id(n): (n, tuple(found[n])) for n in nodes},  # type: ignore[misc]
        {id(n): (n, said[id(n)]) for n in texts},
    )
    kept.base = None  # (the module before the splice: no longer needed)
    return found, said


def _from_known(
    kept: Kept, nodes: Sequence[cst.CSTNode], texts: Sequence[cst.CSTNode]
) -> tuple[dict[cst.CSTNode, list[int]] | None, dict[int, str] | None]:
    known = _known(kept)
    if known is None:
        return None, None
    placed, after, moved = known
    found: dict[cst.CSTNode, list[int]] = {}
    said: dict[int, str] = {}
    wanted: list[cst.CSTNode] = []
    for node in nodes:
        entry = placed.spans.get(id(node))
        if entry is None or entry[0] is not node:
            wanted.append(node)
            continue
        line, col, end_line, end_col = entry[1]
        if line > after:
            line, end_line = line + moved, end_line + moved
        found[node] = [line, col, end_line, end_col]
    unsaid = []
    for node in texts:
        entry = placed.texts.get(id(node))
        if entry is None or entry[0] is not node:
            unsaid.append(node)
        else:
            said[id(node)] = entry[1]
    if wanted or unsaid:
        if kept.changed is None or placed.module is kept.module:
            return None, None  # the missing nodes: anywhere in the module
        state = _SpansAndTexts(kept.module, {id(n) for n in wanted}, {id(n) for n in unsaid})
        state.line = kept.changed.start + 1  # the statement's first line (leading lines too)
        kept.module.body[kept.changed.index]._codegen(state)
        kept.generated = "statement"
        for node in wanted:
            if id(node) not in state.computed:
                return None, None  # not in the new statement
            (line, col), (end_line, end_col) = state.computed[id(node)]
            found[node] = [line, col + 1, end_line, end_col + 1]
        for node in unsaid:
            if id(node) not in state.found:
                return None, None
            said[id(node)] = state.found[id(node)]
    return found, said
