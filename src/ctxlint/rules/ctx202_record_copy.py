"""CTX202 record-copy: the no-copy contract.

A record is never copied-and-edited: resolution reads only its own input, so a
copy re-resolves to the parent's answers (or, marked resolved, arrives without
its memo), and a per-process difference travels as a declaration inside the
one object. Reported: the record class (or an ancestor) defining `override`,
`derive` or `replace_resolved`; a call of one of those on a record instance or
on the record class; `dataclasses.replace`, `copy.copy`, `copy.deepcopy`,
`copy.replace` and `msgspec.structs.replace` of a record, under any import
spelling. Record instances are the ones CTX201 knows (records' one holder
classifier: seed and aliases, annotated names and attributes, the derived
record-parameter names, new records, copies of any), plus `self` inside the
record class.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext
from ctxlint.facts.typed import Site, site
from ctxlint.facts.visitor import FileVisitor
from ctxlint.facts.vocab import Vocabulary
from ctxlint.program import holders
from ctxlint.program.classes import class_index
from ctxlint.program.core import Program
from ctxlint.program.holders import Holder, HolderKind
from ctxlint.program.reads import positional
from ctxlint.program.record_conventions import (
    COPY_HELPERS,
    copy_helper_scopes,
    in_helper,
    record_convention,
    record_names,
)
from ctxlint.program.resolution import KEY as RESOLUTION
from ctxlint.program.resolution import resolution
from ctxlint.program.rule import RawFinding, Rule

ID = "CTX202"
COPY_METHODS = ("override", "derive", "replace_resolved")
COPY_FUNCTIONS = {q: f"{q}()" for q in holders.COPY_FUNCTIONS}
# holders that are a record only if the codebase names its records so
NAMED = (HolderKind.NAME, HolderKind.ATTR)


def fix(declaration: str) -> str:
    """The remedies, naming the declaration function as this tree's def spells it
    (CTX104/CTX201's `Resolution.declaration_hint()`): a release without the
    design's `declare_resolution` gets its own writer, not a name it lacks."""
    return (
        f"Declare a decision on the record you hold with {declaration}; pass a per-runner "
        "value as a constructor argument; test doubles use "
        "get_context().override_server_args(...)."
    )


# the one copy method that edits the record it is called on (SGLang 0.5.17's
# `ServerArgs.override(source, **fields)`): an edit after resolution, not a copy
IN_PLACE = ".override()"


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


def _facts(program: Program) -> Iterator[tuple[str, str, CopyFacts]]:
    return program.typed_facts(ID, CopyFacts)


def _classes(program: Program) -> dict[str, tuple[str, CopyClass]]:
    """Qualified class name -> (path, class facts) over every parsed file."""
    out: dict[str, tuple[str, CopyClass]] = {}
    for path, _, facts in _facts(program):
        for c in facts.classes:
            out.setdefault(c.qual, (path, c))
    return out


def record_lineage(program: Program) -> list[str]:
    """The record class and its ancestors (C3 order, program.classes), record first;
    ancestors the parsed tree does not define yet are named, for more_tokens."""
    return class_index(program).linearization(program.vocab.record_class)


class RecordCopy(Rule):
    id = ID
    name = "record-copy"
    summary = (
        "A record is never copied-and-edited: no override/derive/replace_resolved on it, "
        "no dataclasses.replace/copy/msgspec.structs.replace of one"
    )
    visitor = RecordCopyVisitor
    # the declaration function the remedy names is the tree's own (resolution)
    requires = ("calls", "classes", "records", RESOLUTION)
    options: ClassVar[dict[str, Any]] = {COPY_HELPERS: []}

    def tokens(self, vocab: Vocabulary) -> set[str]:
        # the record's modules too: resolution derives the declaration function from them
        modules = {vocab.record_module, *(q.rpartition(".")[0] for q in vocab.field_classes)}
        return {*vocab.seed_accessors, vocab.record_name} | {f"module:{m}" for m in modules}

    def more_tokens(self, program: Program) -> set[str]:
        # record parameter names (calls on them), and the record's ancestors'
        # definitions (an inherited `derive` is defined on the record too)
        ancestors = {f"class {q.rpartition('.')[2]}" for q in record_lineage(program)[1:]}
        res = resolution(program)
        return record_names(program) | ancestors | res.wanted_tokens() | res.slot_names

    def derive(self, program: Program) -> dict[str, Any]:
        classes = _classes(program)
        defined = []
        for q in record_lineage(program):
            if q in classes:
                defined += [f"{q}.{d.name}" for d in classes[q][1].defs]
        return {
            "record lineage": record_lineage(program),
            "copy entry points defined on the record": sorted(defined),
        }

    def check(self, program: Program) -> Iterable[RawFinding]:
        record = program.vocab.record_name
        remedy = fix(resolution(program).declaration_hint())
        classes = _classes(program)
        for q in record_lineage(program):
            if q not in classes:
                continue
            path, c = classes[q]
            where = "" if q == program.vocab.record_class else f" (inherited by {record})"
            for d in c.defs:
                yield RawFinding(
                    ID,
                    path,
                    d.site.scope,
                    d.site.snippet,
                    d.site.span,
                    f"`{q.rpartition('.')[2]}.{d.name}` defined on the record{where}: no "
                    f"copy or edit entry point may exist on {record}",
                    f"Remove it. {remedy}",
                )
        holders = record_convention(program)
        helpers = copy_helper_scopes(program)
        for path, module, facts in _facts(program):
            for c in facts.calls:
                b = c.base
                if b is not None and b.kind in NAMED and not holders.holds(b.name, module):  # type: ignore[arg-type]
                    continue
                if in_helper(helpers, module, c.site.scope):
                    continue  # the design's one copy-and-edit helper
                yield RawFinding(
                    ID,
                    path,
                    c.site.scope,
                    c.site.snippet,
                    c.site.span,
                    f"edit of a record after resolution ({c.form}): the bags were projected at "
                    "publish and do not see it"
                    if c.form == IN_PLACE
                    else f"copy-and-edit of a record ({c.form}): a copy re-resolves to the "
                    "parent's answers and its edits reach no bag",
                    remedy,
                )


RULE = RecordCopy()
