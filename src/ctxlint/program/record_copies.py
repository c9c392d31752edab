"""Where a record is copied or edited by a copy entry point: the copy methods
(`override`, `derive`, `replace_resolved`) the record's lineage defines, and
each call that copies a record holder.

Per file, `RecordCopyVisitor` keeps the classes defining a copy method, and
the calls of one on a record holder (records' one classifier, the receiver
only inside the record class) or on the record class (`ServerArgs.derive(rec,
...)`), and of `dataclasses.replace`, `copy.copy`, `copy.deepcopy`,
`copy.replace` or `msgspec.structs.replace` with a holder first, under any
import spelling, each holder settled at the file's end. The program side
answers which lineage classes define a copy method (`copy_entry_points`) and
which calls copy a record (`record_copies`): a holder of the naming
convention only where the convention holds, none inside a configured copy
helper. Asked by CTX202 (its facts are kept under its id).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext
from ctxlint.facts.typed import Site, site
from ctxlint.facts.visitor import FileVisitor
from ctxlint.program import holders
from ctxlint.program.classes import class_index
from ctxlint.program.core import Program
from ctxlint.program.holders import Holder, HolderKind
from ctxlint.program.reads import positional
from ctxlint.program.record_conventions import copy_helper_scopes, in_helper, record_convention

KEY = "CTX202"  # the rule whose facts these are
COPY_METHODS = ("override", "derive", "replace_resolved")
COPY_FUNCTIONS = {q: f"{q}()" for q in holders.COPY_FUNCTIONS}
# holders that are a record only if the codebase names its records so
NAMED = (HolderKind.NAME, HolderKind.ATTR)


@dataclass(frozen=True, slots=True)
class CopyDef:
    """`def override`/`derive`/`replace_resolved` in a class."""

    name: str
    site: Site


@dataclass(frozen=True, slots=True)
class CopyClass:
    qual: str
    defs: tuple[CopyDef, ...]


@dataclass(frozen=True, slots=True)
class CopyCall:
    form: str  # how the copy is spelled: ".derive()", "copy.copy()"...
    base: Holder | None  # what is copied (records' verdict, settled); None: the record class
    site: Site


@dataclass(frozen=True, slots=True)
class CopyFacts:
    classes: tuple[CopyClass, ...]  # the classes defining a copy method
    calls: tuple[CopyCall, ...]


class RecordCopyVisitor(FileVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        vocab = ctx.vocab
        assert vocab is not None
        self.record_class = vocab.record_class
        self.record_local = (
            vocab.record_name if ctx.module == vocab.record_module else None
        )  # the record's qualname inside this module, when this is the record module
        self.classes: list[CopyClass] = []
        self.calls: list[CopyCall] = []
        self._open: list[tuple[str, list[CopyDef]]] = []  # classes being filled, innermost last

    # -- class definitions ---------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        # the dispatcher has pushed the class scope already
        self._open.append((f"{self.ctx.module}.{self.ctx.qualname}", []))

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        qual, defs = self._open.pop()
        if defs:  # the lineage is the class index's (record_lineage)
            self.classes.append(CopyClass(qual, tuple(defs)))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        name = node.name.value
        outer = self.ctx.scopes[-2] if len(self.ctx.scopes) > 1 else None
        if name in COPY_METHODS and outer is not None and outer.kind == "class" and self._open:
            where = Site(self.ctx.qualname, f"def {name}", self.ctx.anchor(node.name))  # type: ignore[arg-type]
            self._open[-1][1].append(CopyDef(name, where))

    # -- calls ----------------------------------------------------------------
    def _in_record_class(self) -> bool:
        return self.record_local is not None and self.ctx.enclosing_class() == self.record_local

    def _holder(self, expr: cst.BaseExpression) -> Holder | None:
        """The record holder `expr` is (records' one classifier), as facts: the
        receiver only inside the record class; None if it cannot be one."""
        holder = self.ctx.records.holder(expr)
        if holder is None:
            return None
        if holder.kind is HolderKind.RECEIVER and not self._in_record_class():
            return None
        return holder

    def _add(self, node: cst.Call, form: str, holder: Holder | None) -> None:
        self.calls.append(CopyCall(form, holder, site(self.ctx, node)))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value in COPY_METHODS:
            method = func.attr.value
            if self.ctx.resolve(func.value) == self.record_class:
                # ServerArgs.derive(rec, ...): the unbound spelling of the same copy
                self._add(node, f"{self.record_class.rpartition('.')[2]}.{method}()", None)
                return
            holder = self._holder(func.value)
            if holder is not None:
                self._add(node, f".{method}()", holder)
            return
        # cheap reject before resolving: a dotted copy function ends in one of these
        if isinstance(func, cst.Attribute):
            if func.attr.value not in ("replace", "copy", "deepcopy"):
                return
        elif not isinstance(func, cst.Name):
            return
        form = COPY_FUNCTIONS.get(self.ctx.resolve(func) or "")
        if form is None:
            return
        args = positional(node)
        if args:
            holder = self._holder(args[0])
            if holder is not None:
                self._add(node, form, holder)

    def finish(self) -> CopyFacts | None:
        rec = self.ctx.records
        calls = tuple(
            c if c.base is None else replace(c, base=Holder.of_fact(rec.settle(c.base.fact())))
            for c in self.calls
        )
        if not calls and not self.classes:
            return None
        return CopyFacts(tuple(self.classes), calls)


def _classes(program: Program) -> dict[str, tuple[str, CopyClass]]:
    """Qualified class name -> (path, class facts) over every parsed file."""
    out: dict[str, tuple[str, CopyClass]] = {}
    for path, _, facts in program.typed_facts(KEY, CopyFacts):
        for c in facts.classes:
            out.setdefault(c.qual, (path, c))
    return out


def record_lineage(program: Program) -> list[str]:
    """The record class and its ancestors (C3 order, program.classes), record first;
    ancestors the parsed tree does not define yet are named, for more_tokens."""
    return class_index(program).linearization(program.vocab.record_class)


def copy_entry_points(program: Program) -> Iterator[tuple[str, str, CopyClass]]:
    """(class, path, its copy methods) for each class of the record's lineage
    that defines one, in lineage order."""
    classes = _classes(program)
    for q in record_lineage(program):
        if q in classes:
            yield q, *classes[q]


def record_copies(program: Program) -> Iterator[tuple[str, CopyCall]]:
    """(path, call) of each call copying (or editing in place) a record, by path."""
    convention = record_convention(program)
    helpers = copy_helper_scopes(program)
    for path, module, facts in program.typed_facts(KEY, CopyFacts):
        for c in facts.calls:
            b = c.base
            if b is not None and b.kind in NAMED and not convention.holds(b.name, module):  # type: ignore[arg-type]
                continue
            if not in_helper(helpers, module, c.site.scope):  # the design's one copy helper
                yield path, c
