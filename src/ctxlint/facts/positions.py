"""Line/column spans for a few nodes of a parsed module, cheaply.

LibCST's PositionProvider builds a CodeRange object for every node of the tree
through a regex split per token; on large trees that costs twice the parse. This
codegen state keeps the same rules (syntactic positions where a node records
one, whitespace-inclusive otherwise) with plain tuples, a newline fast path, and
no metadata wrapper, and answers only for the nodes asked about.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import libcst as cst
from libcst._nodes.internal import CodegenState

_NEWLINE = re.compile(r"\r\n?|\n")
Pos = tuple[int, int]  # line (1-based), column (0-based)


class _SpanState(CodegenState):
    """CodegenState that tracks the cursor and records (start, end) per node."""

    def __init__(self, module: cst.Module) -> None:
        super().__init__(
            default_indent=module.default_indent, default_newline=module.default_newline
        )
        self.line = 1
        self.column = 0
        self.stack: list[Pos] = []
        self.computed: dict[int, tuple[Pos, Pos]] = {}  # by id(): CSTNode.__hash__ is Python code

    def _advance(self, value: str) -> None:
        if "\n" not in value and "\r" not in value:
            self.column += len(value)
            return
        segments = _NEWLINE.split(value)
        self.line += len(segments) - 1
        self.column = len(segments[-1])

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self._advance(token)

    def add_token(self, value: str) -> None:
        self._advance(value)

    def pop_trailing_newline(self) -> None:
        pass  # positions are taken before the module's last newline matters

    def before_codegen(self, node: cst.CSTNode) -> None:
        self.stack.append((self.line, self.column))

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self.stack.pop()
        key = id(node)
        if key not in self.computed:
            self.computed[key] = (start, (self.line, self.column))

    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> _Syntactic:
        return _Syntactic(self, node, start_node, end_node)


class _Syntactic:
    """The syntactic span of a node, hoisted from children where LibCST says so
    (a plain class: contextlib's generator wrapper costs more than the codegen)."""

    __slots__ = ("end_node", "node", "start", "start_node", "state")

    def __init__(
        self,
        state: _SpanState,
        node: cst.CSTNode,
        start_node: cst.CSTNode | None,
        end_node: cst.CSTNode | None,
    ) -> None:
        self.state, self.node = state, node
        self.start_node, self.end_node = start_node, end_node
        self.start = (state.line, state.column)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        state = self.state
        start, end = self.start, (state.line, state.column)
        if self.start_node is not None:
            start = state.computed[id(self.start_node)][0]
        if self.end_node is not None:
            end = state.computed[id(self.end_node)][1]
        state.computed[id(self.node)] = (start, end)
        return False


class _NoSpan:
    """The syntactic span of a node nobody asked about: nothing to record."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return False


_NO_SPAN = _NoSpan()


class _WantedSpans(_SpanState):
    """_SpanState that records only the wanted nodes (by id), and the end nodes
    their syntactic spans borrow: the cursor still runs through the whole
    module, but most nodes cost no stack entry, span or context object."""

    def __init__(self, module: cst.Module, wanted: set[int]) -> None:
        super().__init__(module)
        self.wanted = wanted

    def before_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self.wanted:
            super().before_codegen(node)

    def after_codegen(self, node: cst.CSTNode) -> None:
        if id(node) in self.wanted:
            super().after_codegen(node)

    def record_syntactic_position(
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> _Syntactic | _NoSpan:
        if id(node) not in self.wanted:
            return _NO_SPAN
        # LibCST generates a borrowed node inside this block: wanted from now on
        for other in (start_node, end_node):
            if other is not None:
                self.wanted.add(id(other))
        return super().record_syntactic_position(node, start_node=start_node, end_node=end_node)


class _SpansAndTexts(_WantedSpans):
    """_WantedSpans that also keeps the text of some nodes as the module's pass
    generates it, comments left out and whitespace folded: what a codegen of
    each node alone gives (FileContext.snippet), for no walk of its own.
    Indentation tokens differ from a node's own codegen only in whitespace,
    which the folding makes one space either way."""

    def __init__(self, module: cst.Module, wanted: set[int], texts: set[int]) -> None:
        super().__init__(module, wanted)
        self.texts = texts
        self.tokens: list[str] = []  # while a text node is open
        self.open: list[tuple[int, int]] = []  # (id of the node, its first token)
        self.found: dict[int, str] = {}

    def add_indent_tokens(self) -> None:
        super().add_indent_tokens()
        if self.open:
            self.tokens.extend(self.indent_tokens)

    def add_token(self, value: str) -> None:
        self._advance(value)
        if self.open:
            self.tokens.append(value)

    # the two hooks run for every node of the module: one frame each, inlined
    def before_codegen(self, node: cst.CSTNode) -> None:
        key = id(node)
        if key in self.wanted:
            self.stack.append((self.line, self.column))
        if key in self.texts:
            self.open.append((key, len(self.tokens)))

    def after_codegen(self, node: cst.CSTNode) -> None:
        key = id(node)
        if self.open:
            if type(node) is cst.Comment:  # its one token: its text
                self.tokens.pop()
            if self.open[-1][0] == key:
                first = self.open.pop()[1]
                text = " ".join("".join(self.tokens[first:]).split())
                # an `elif` is its parent's spelling: the node alone generates `if`
                self.found[key] = text[2:] if type(node) is cst.If and text[:5] == "elif " else text
                if not self.open:
                    self.tokens.clear()
        if key in self.wanted:
            start = self.stack.pop()
            if key not in self.computed:
                self.computed[key] = (start, (self.line, self.column))


def spans(module: cst.Module, nodes: Iterable[cst.CSTNode]) -> dict[cst.CSTNode, list[int]]:
    """[line, column, end_line, end_column] (columns 1-based) for each node,
    exactly as PositionProvider would place it."""
    return spans_and_texts(module, nodes, ())[0]


def spans_and_texts(
    module: cst.Module, nodes: Iterable[cst.CSTNode], texts: Iterable[cst.CSTNode]
) -> tuple[dict[cst.CSTNode, list[int]], dict[int, str]]:
    """`spans(module, nodes)`, and by id() the one-line text of each of `texts`
    (FileContext.snippet's), from the same pass."""
    nodes = list(nodes)
    state = _SpansAndTexts(module, {id(n) for n in nodes}, {id(n) for n in texts})
    module._codegen(state)
    out: dict[cst.CSTNode, list[int]] = {}
    for node in nodes:
        (line, col), (end_line, end_col) = state.computed[id(node)]
        out[node] = [line, col + 1, end_line, end_col + 1]
    return out, state.found


class NodeWalk(_SpanState):
    """One codegen pass that records every node's span (as `spans` gives it) and
    its parent: what PositionProvider and ParentNodeProvider answer, for a
    fraction of their cost (ctxlint fix locates findings with it)."""

    def __init__(self, module: cst.Module) -> None:
        super().__init__(module)
        self.parents: dict[int, cst.CSTNode] = {}
        self.nodes: list[cst.CSTNode] = []  # every node, in source order
        self._nodes: list[cst.CSTNode] = []
        module._codegen(self)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self.nodes.append(node)
        if self._nodes:
            self.parents.setdefault(id(node), self._nodes[-1])
        self._nodes.append(node)
        super().before_codegen(node)

    def after_codegen(self, node: cst.CSTNode) -> None:
        self._nodes.pop()
        super().after_codegen(node)

    def span(self, node: cst.CSTNode) -> list[int]:
        """[line, column, end_line, end_column], columns 1-based."""
        (line, col), (end_line, end_col) = self.computed[id(node)]
        return [line, col + 1, end_line, end_col + 1]
