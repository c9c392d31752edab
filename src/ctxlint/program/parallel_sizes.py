"""Where a configured parallel size is read where a live width is meant: which
`<parallel>.<key>_size` reads sit in a function running a collective on an
aliased group (the communicator's width is its width function's answer), and
which `<parallel>.<size> > 1` tests spell a leaf the runtime defines as exactly
that test (`dcp_enabled=cfg.dcp_size > 1`, or a property whose body makes it).

The groups are program.process_groups'; `SizesVisitor` extends its visitor with
the size reads, the size tests and (beside the runtime module) the enabled
leaves, kept under CTX704's id; `ParallelSizes` answers from them (CTX704 asks).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, string_value
from ctxlint.facts.property_answers import PropertyAnswers
from ctxlint.facts.typed import Site, site
from ctxlint.program.core import Program
from ctxlint.program.process_groups import GroupFacts, ProcessGroups, ProcessGroupsVisitor

KEY = "CTX704"  # the rule whose facts these are


@dataclass(frozen=True, slots=True)
class SizeRead:
    """`<parallel>.<leaf>` (a `_size` leaf) read in `fn`."""

    fn: str
    leaf: str
    site: Site


@dataclass(frozen=True, slots=True)
class SizeTest:
    """`<receiver>.<leaf> > 1` in `fn`."""

    fn: str
    leaf: str
    receiver: str
    site: Site


@dataclass(frozen=True, slots=True)
class WidthFacts:
    groups: GroupFacts | None  # program.process_groups
    calls: dict[str, list[str]]  # what a function reading a size calls
    sizes: list[SizeRead]
    tests: list[SizeTest]
    enabled: dict[str, str]  # leaf -> the size it tests (the runtime module)


def _is_one(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Integer) and expr.value == "1"


def _size_test(expr: cst.BaseExpression) -> str | None:
    """`x.dcp_size > 1` (or `1 < x.dcp_size`) as "dcp_size"."""
    if not isinstance(expr, cst.Comparison) or len(expr.comparisons) != 1:
        return None
    comp = expr.comparisons[0]
    left, right, op = expr.left, comp.comparator, comp.operator
    if isinstance(op, cst.LessThan) and _is_one(left):
        left, right, op = right, left, cst.GreaterThan()
    if isinstance(op, cst.GreaterThan) and _is_one(right) and isinstance(left, cst.Attribute):
        return left.attr.value
    return None


class SizesVisitor(ProcessGroupsVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        assert ctx.vocab is not None
        vocab = ctx.vocab
        # the runtime module and its siblings: where an enabled leaf is defined
        self.in_runtime = ctx.module.rpartition(".")[0] == vocab.runtime_module.rpartition(".")[0]
        self.sizes: list[SizeRead] = []  # reads of <parallel>.X_size
        self.tests: list[SizeTest] = []  # <parallel>.X > 1
        self.enabled: dict[str, str] = {}  # leaf -> the size it tests (runtime module)
        self.answers = PropertyAnswers()  # inside the runtime module: what a property answers

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self.in_runtime:
            self.answers.enter(node)
        super().visit_FunctionDef(node)

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        answered = self.answers.leave() if self.in_runtime else None
        if answered is not None:
            # a property binds the test only when it is all it answers (0.5.17's
            # `dcp_enabled` also answers False while the DCP group is missing)
            sizes = {_size_test(v) for v in answered[1]}
            if len(sizes) == 1 and None not in sizes:
                self.enabled.setdefault(answered[0], sizes.pop())  # type: ignore[arg-type]

    def visit_Return(self, node: cst.Return) -> None:
        if self.in_runtime:
            self.answers.returned(node)
        super().visit_Return(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        fn = self._fn()
        leaf = node.attr.value
        if fn is not None and leaf.endswith("_size") and self.is_parallel(node.value):
            self.sizes.append(SizeRead(fn, leaf, site(self.ctx, node)))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        size = _size_test(node)
        if size is None:
            return
        if self.in_runtime and self._binding is not None and self._binding[1] == id(node):
            self.enabled.setdefault(self._binding[0], size)  # `dcp_enabled=cfg.dcp_size > 1`
        left = (
            node.left if _is_one(node.comparisons[0].comparator) else node.comparisons[0].comparator
        )
        assert isinstance(left, cst.Attribute)
        fn = self._fn()
        if fn is not None and self.is_parallel(left.value):
            receiver = self.ctx.snippet(left.value)
            self.tests.append(SizeTest(fn, size, receiver, site(self.ctx, node)))

    _binding: tuple[str, int] | None = None  # (keyword or key, id of its value)

    def visit_Arg(self, node: cst.Arg) -> None:
        if self.in_runtime and node.keyword is not None:
            self._binding = (node.keyword.value, id(node.value))

    def visit_DictElement(self, node: cst.DictElement) -> None:
        key = string_value(node.key) if self.in_runtime else None
        if key is not None:
            self._binding = (key, id(node.value))

    def finish(self) -> WidthFacts | None:
        sized = {s.fn for s in self.sizes}
        # what a function reading a size calls: a collective may be a helper's
        calls = {f"{self.ctx.module}.{q}": sorted(c) for q, c in self.calls.items() if q in sized}
        groups = self.group_facts()
        if not (groups or calls or self.sizes or self.tests or self.enabled):
            return None
        return WidthFacts(groups, calls, self.sizes, self.tests, self.enabled)


class ParallelSizes(ProcessGroups):
    """The process groups (program.process_groups), and the enabled leaves."""

    def __init__(self, program: Program) -> None:
        vocab = program.vocab
        self.files = list(program.typed_facts(KEY, WidthFacts))
        super().__init__(vocab, (f.groups for _, _, f in self.files))
        # the runtime module's enabled leaves: size -> leaf (`dcp_size` -> `dcp_enabled`)
        self.enabled: dict[str, str] = {}
        for _, module, f in self.files:
            if module.rpartition(".")[0] == vocab.runtime_module.rpartition(".")[0]:
                for leaf, size in sorted(f.enabled.items()):
                    self.enabled.setdefault(size, leaf)

    def width_reads(self) -> Iterator[tuple[str, SizeRead, str]]:
        """(path, read, group key): each size read of an aliased group with a width
        function, in a function running a collective on that group (or calling one)."""
        for path, module, f in self.files:
            for s in f.sizes:
                key = s.leaf[: -len("_size")]
                if key not in self.aliased or key not in self.widths:
                    continue
                fn = f"{module}.{s.fn}"
                refs = f.groups.collectives.get(fn, []) if f.groups else []
                if self.collective(key, f.calls.get(fn, []), refs):
                    yield path, s, key

    def leaf_tests(self) -> Iterator[tuple[str, SizeTest, str]]:
        """(path, test, enabled leaf): each size test the runtime defines a leaf as."""
        for path, _, f in self.files:
            for t in f.tests:
                leaf = self.enabled.get(t.leaf)
                if leaf is not None:
                    yield path, t, leaf
