"""The fast walk and span resolution agree exactly with LibCST's own visit and
PositionProvider, node for node, on real code and on awkward syntax."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import libcst as cst
import pytest
from libcst._nodes.base import CSTCodegenError
from libcst.metadata import MetadataWrapper, PositionProvider

from ctxlint.facts.positions import spans
from ctxlint.facts.walk import TRIVIA, walk

REPO = Path(__file__).resolve().parents[2]

AWKWARD = '''\
@deco(1)\r
@other
async def f(a, /, b: int = (1), *args, c, d=2, **kw) -> "X":
    x = [i for i in range(3) if i]; y = {k: v for k, v in kw.items()}
    async with a as (p, q), b:
        yield (await g(*args, **kw))[1:2, ::3]
    match a:
        case {"k": [1, *rest]} | Point(x=0) if rest:
            pass
    return lambda z=1: z if z else -z


class C(B, metaclass=M):
    """doc"""

    def m(self): return f"{self.x!r:>{width}}" + r'raw' \\
        'joined'
    try:
        pass
    except* (E, F) as e:
        del e
    t: tuple[int, ...] = (yield)
    global_ = [*a, *b] if (n := len(a)) else None
'''


def _sources() -> list[str]:
    files = sorted((REPO / "src").rglob("*.py")) + sorted((REPO / "examples").rglob("*.py"))
    return [AWKWARD] + [p.read_text() for p in files]


class _Recorder(cst.CSTVisitor):
    """LibCST's own order, with layout subtrees left out as the walk does."""

    def __init__(self) -> None:
        self.events: list[tuple[str, int]] = []
        self.hidden = 0

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.hidden or type(node) in TRIVIA:
            self.hidden += 1
        else:
            self.events.append(("visit", id(node)))
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if self.hidden:
            self.hidden -= 1
        else:
            self.events.append(("leave", id(original_node)))


def _recorder(events: list[tuple[str, int]], kind: str) -> Callable[[cst.CSTNode], None]:
    return lambda node: events.append((kind, id(node)))


@pytest.mark.parametrize("index", range(0, 60, 6))
def test_walk_matches_libcst_visit_order(index: int) -> None:
    for source in _sources()[index : index + 6]:
        module = cst.parse_module(source)
        expected = _Recorder()
        module.visit(expected)
        got: list[tuple[str, int]] = []
        walk(module, _recorder(got, "visit"), _recorder(got, "leave"))
        assert got == expected.events
        assert len(got) > 2


def test_spans_match_position_provider_for_every_node() -> None:
    checked = 0
    for source in _sources()[:25]:
        module = cst.parse_module(source)
        reference = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        nodes = [n for n in reference if not isinstance(n, cst.Module)]
        mine = spans(module, nodes)
        for node in nodes:
            r = reference[node]
            assert mine[node] == [r.start.line, r.start.column + 1, r.end.line, r.end.column + 1]
            checked += 1
    assert checked > 10_000


@pytest.mark.parametrize("every", [1, 7, 101])
def test_spans_of_a_few_nodes_match_position_provider(every: int) -> None:
    """spans() records only the nodes asked about (and the end nodes their
    syntactic spans borrow): each one alone, or every 7th or 101st, is placed
    as PositionProvider places it."""
    checked = 0
    for source in _sources()[25:40]:
        module = cst.parse_module(source)
        reference = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        nodes = [n for n in reference if not isinstance(n, cst.Module)]
        groups = [[n] for n in nodes[::50]] if every == 1 else [nodes[::every]]
        for group in groups:
            mine = spans(module, group)
            for node in group:
                r = reference[node]
                want = [r.start.line, r.start.column + 1, r.end.line, r.end.column + 1]
                assert mine[node] == want, (type(node).__name__, mine[node], want)
                checked += 1
    assert checked > 200


COMMENTED = """\
def f(a):  # the head
    x = g(  # opens
        a,  # the first
        # a line of its own
        b=[1,
           2],  # closes
    )
    if x:  # nested
        return {"k": h(x),  # inside a dict
                **x}
    return f"#{a}"  # an f-string's text that starts as a comment would
"""


@pytest.mark.parametrize("every", [1, 3])
def test_snippets_from_the_span_pass_match_a_codegen_of_each_node(every: int) -> None:
    """The span pass's text of a node (nested ones too, across lines, comments
    inside) is exactly FileContext.snippet's own codegen of that node."""
    from ctxlint.facts.context import FileContext
    from ctxlint.facts.positions import spans_and_texts

    checked = 0
    for source in [COMMENTED, AWKWARD, *_sources()[40:48]]:
        module = cst.parse_module(source)
        ctx = FileContext(path="m.py", module="m", is_package=False, module_node=module, vocab=None)
        reference = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        nodes = [n for n in reference if not isinstance(n, cst.Module)][::every]
        _, texts = spans_and_texts(module, nodes[:3], nodes)
        for node in nodes:
            try:
                alone = ctx.snippet(node)
            except CSTCodegenError:  # a default its parent decides (a bare Comma)
                continue
            assert texts[id(node)] == alone, type(node).__name__
            checked += 1
        if source is COMMENTED:  # the comments are in the tree, and out of the text
            assert "#" in module.code and not any("the first" in t for t in texts.values())
    assert checked > 2_000
