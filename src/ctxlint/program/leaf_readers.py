"""Which functions read a config leaf by its name, and the calls that hand one a
literal name.

The readers are the runtime module's `config_leaf` (the design's read side of
`override`) and every function that hands its own parameter straight to a
reader (SGLang's `TokenizerManager.config_value`), wrappers of wrappers
included, by simple name, when every function of that name in the tree is a
reader. A wrapper that answers some names itself before reading (`if name in
_MANAGER_OWNED_FIELDS: return getattr(self, name)`) keeps those names: the
strings of the module constants it tests the parameter against. Per file,
`LiteralLeafVisitor` gathers the one-argument calls with an identifier-like
literal, the functions handing a parameter on, the module constants' strings
and the functions named like the reader; `literal_reads` answers which reader
calls name their leaf with a literal. Asked by CTX603 (its facts are kept
under its id).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, string_value
from ctxlint.facts.typed import Site, site
from ctxlint.facts.visitor import FileVisitor
from ctxlint.program.calls import call_graph
from ctxlint.program.core import Program

KEY = "CTX603"  # the rule whose facts these are
READER = "config_leaf"  # the design's read side of `override`


def _callee_name(func: cst.BaseExpression) -> str | None:
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return None


def _strings(expr: cst.BaseExpression) -> list[str] | None:
    """The strings of a tuple/list/set literal (or frozenset/set/tuple of one)."""
    if isinstance(expr, cst.Call) and len(expr.args) == 1:
        expr = expr.args[0].value
    if not isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        return None
    out = [string_value(e.value) for e in expr.elements]
    return [s for s in out if s is not None] if all(s is not None for s in out) else None


@dataclass(frozen=True, slots=True)
class LiteralCall:
    """`callee("literal")`: a one-argument call with an identifier-like literal."""

    callee: str  # its simple name
    literal: str
    site: Site


@dataclass(frozen=True, slots=True)
class Wrapper:
    """A function handing one of its parameters on to a one-argument call."""

    param: str | None  # the parameter it hands on
    calls: tuple[str, ...]  # the simple names it hands it to
    guards: tuple[str, ...]  # the names it tests the parameter against (`name in CONST`)


@dataclass(frozen=True, slots=True)
class LeafFacts:
    calls: tuple[LiteralCall, ...]
    wrappers: dict[str, Wrapper]  # qualified function -> what it hands on
    consts: dict[str, tuple[str, ...]]  # module constant -> its strings
    defs: tuple[str, ...]  # functions named like the reader, qualified


@dataclass(slots=True)
class _OpenFunction:
    """What a function being walked hands on, so far."""

    params: set[str]
    param: str | None = None
    calls: set[str] = field(default_factory=set)
    guards: set[str] = field(default_factory=set)


class LiteralLeafVisitor(FileVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.calls: list[LiteralCall] = []
        self.consts: dict[str, tuple[str, ...]] = {}  # module constant -> its strings
        self.wrappers: dict[str, Wrapper] = {}
        self._params: list[tuple[str, _OpenFunction]] = []  # open functions
        self.defs: list[str] = []  # functions named like the reader, qualified

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        q = f"{self.ctx.module}.{self.ctx.qualname}"
        if node.name.value == READER:
            self.defs.append(q)
        params = {p.name.value for p in (*node.params.posonly_params, *node.params.params)}
        self._params.append((q, _OpenFunction(params)))

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        q, info = self._params.pop()
        if info.calls:
            self.wrappers[q] = Wrapper(
                info.param, tuple(sorted(info.calls)), tuple(sorted(info.guards))
            )

    def visit_Comparison(self, node: cst.Comparison) -> None:
        # `name in CONST`: a wrapper answering some names itself
        if not self._params or not isinstance(node.left, cst.Name):
            return
        _, info = self._params[-1]
        if node.left.value not in info.params:
            return
        for t in node.comparisons:
            if isinstance(t.operator, cst.In) and isinstance(t.comparator, cst.Name):
                info.guards.add(t.comparator.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        if self.ctx.scope.kind != "module" or len(node.targets) != 1:
            return
        target = node.targets[0].target
        found = _strings(node.value)
        if isinstance(target, cst.Name) and found is not None:
            self.consts[target.value] = tuple(found)

    def visit_Call(self, node: cst.Call) -> None:
        name = _callee_name(node.func)
        if name is None or len(node.args) != 1:
            return
        arg = node.args[0]
        if arg.keyword is not None or arg.star:
            return
        if self._params and isinstance(arg.value, cst.Name):
            _, info = self._params[-1]
            if arg.value.value in info.params:  # a parameter handed on: maybe a wrapper
                info.calls.add(name)
                info.param = arg.value.value
            return
        literal = string_value(arg.value)
        if literal is None or not literal.isidentifier():
            return
        self.calls.append(LiteralCall(name, literal, site(self.ctx, node)))

    def finish(self) -> LeafFacts | None:
        if not (self.calls or self.wrappers or self.defs):
            return None
        return LeafFacts(tuple(self.calls), self.wrappers, self.consts, tuple(self.defs))


def _build(program: Program) -> tuple[dict[str, set[str]], list[str]]:
    """Reader simple name -> the names it answers itself (overlay), and the
    runtime's reader definitions."""
    runtime = program.vocab.runtime_module
    roots: list[str] = []
    wrappers: dict[str, tuple[str, Wrapper, dict[str, tuple[str, ...]]]] = {}
    for _, module, facts in program.typed_facts(KEY, LeafFacts):
        roots += [q for q in facts.defs if q.startswith(runtime + ".")]
        for q, w in facts.wrappers.items():
            wrappers[q] = (module, w, facts.consts)
    if not roots:
        return {}, []
    readers: dict[str, set[str]] = {READER: set()}
    reader_defs = set(roots)
    changed = True
    while changed:  # wrappers of wrappers
        changed = False
        for q, (_, w, consts) in wrappers.items():
            if q in reader_defs or not set(w.calls) & set(readers):
                continue
            reader_defs.add(q)
            overlay = {s for g in w.guards for s in consts.get(g, ())}
            readers.setdefault(q.rpartition(".")[2], set()).update(overlay)
            changed = True
    # a simple name is a reader only where every function of that name is one
    graph = call_graph(program)
    for q, fn in graph.funcs.items():
        short = q.rpartition(".")[2]
        if short in readers and q not in reader_defs and fn is not None:
            readers.pop(short)
    return readers, sorted(roots)


def leaf_readers(program: Program) -> tuple[dict[str, set[str]], list[str]]:
    """Reader simple name -> the names it answers itself, and the runtime's
    reader definitions (memoised: the tokens, the sets and the check ask it)."""
    return program.memo(f"{KEY}:readers", lambda: _build(program))


def literal_reads(program: Program) -> Iterator[tuple[str, LiteralCall]]:
    """(path, call) of each reader call with a literal name the reader does not
    answer itself, by path."""
    readers, _ = leaf_readers(program)
    for path, _, facts in program.typed_facts(KEY, LeafFacts):
        for c in facts.calls:
            overlay = readers.get(c.callee)
            if overlay is not None and c.literal not in overlay:
                yield path, c
