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
from ctxlint.facts.context import FileContext, string_value
from ctxlint.facts.typed import Site, site
from ctxlint.facts.visitor import FileVisitor
from ctxlint.program import holders
from ctxlint.program.classes import class_index
from ctxlint.program.core import Program
from ctxlint.program.declarable import declarable_fields
from ctxlint.program.holders import Holder, HolderKind
from ctxlint.program.published import Before, Call, CallAt, calls_by_function, publish_order
from ctxlint.program.reads import positional
from ctxlint.program.record_conventions import copy_helper_scopes, in_helper, record_convention

KEY = "CTX202"  # the rule whose facts these are
# the one copy method that edits the record it is called on (SGLang 0.5.17's
# `ServerArgs.override(source, **fields)`): an edit, not a copy
IN_PLACE = ".override()"
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
    # the fields it sets: its keywords, and the literal keys of a `**{...}` it
    # splats (`**other` sets fields no one can name here)
    fields: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CopyFacts:
    classes: tuple[CopyClass, ...]  # the classes defining a copy method
    calls: tuple[CopyCall, ...]
    # every call of the functions holding an in-place edit (whether a publish
    # precedes the edit is asked of their order: program.published)
    around: tuple[CallAt, ...] = ()


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
        self._called: list[tuple[str, str, cst.Call]] = []  # (scope, name, node) in functions

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
        self.calls.append(CopyCall(form, holder, site(self.ctx, node), _set_fields(node)))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if self.ctx.in_function():
            name = func.attr.value if isinstance(func, cst.Attribute) else None
            name = func.value if isinstance(func, cst.Name) else name
            if name is not None:
                self._called.append((self.ctx.qualname, name, node))
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
        edits = {c.site.scope for c in calls if c.form == IN_PLACE}
        around = []
        for scope, name, node in self._called:
            if scope in edits:
                around.append(CallAt(scope, name, self.ctx.anchor(node)))  # type: ignore[arg-type]
        return CopyFacts(tuple(self.classes), calls, tuple(around))


def _set_fields(node: cst.Call) -> tuple[str, ...]:
    """The field names a copy call sets: keywords, and literal keys splatted."""
    out: list[str] = []
    for a in node.args:
        if a.keyword is not None:
            out.append(a.keyword.value)
        elif a.star == "**" and isinstance(a.value, cst.Dict):
            for e in a.value.elements:
                key = string_value(e.key) if isinstance(e, cst.DictElement) else None
                if key is not None:
                    out.append(key)
    return tuple(out)


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


def record_copies(program: Program) -> Iterator[tuple[str, str, CopyCall]]:
    """(path, module, call) of each call copying (or editing in place) a record, by path."""
    convention = record_convention(program)
    helpers = copy_helper_scopes(program)
    for path, module, facts in program.typed_facts(KEY, CopyFacts):
        for c in facts.calls:
            b = c.base
            if b is not None and b.kind in NAMED and not convention.holds(b.name, module):  # type: ignore[arg-type]
                continue
            if not in_helper(helpers, module, c.site.scope):  # the design's one copy helper
                yield path, module, c


def publish_before(program: Program, path: str, module: str, c: CopyCall) -> Before:
    """Whether a publish precedes the call on the ways into it (program.published):
    an in-place edit that none precedes is projected by the publish that follows."""
    calls = program.memo(f"{KEY}:around", lambda: _around(program)).get((path, c.site.scope), [])
    return publish_order(program).before(f"{module}.{c.site.scope}", c.site.span, calls)


def _around(program: Program) -> dict[tuple[str, str], list[Call]]:
    """(path, function) -> the calls of a function holding an in-place edit."""
    return calls_by_function((p, f.around) for p, _, f in program.typed_facts(KEY, CopyFacts))


def copy_finding(program: Program, path: str, module: str, c: CopyCall) -> tuple[str, str]:
    """CTX202's message and details for a copy call. An edit's remedy is
    program.declarable's for the fields it sets; a copy's leads with the
    constructor argument, for the fields it is given by name or, for a plain
    copy (`deepcopy(rec)`), by the in-place edits after it in its function (0.5.17's
    draft worker: `deepcopy` then `.override(..., context_length=...)`)."""
    can = declarable_fields(program)
    why, first = copy_message(program, path, module, c)
    if c.form == IN_PLACE:
        return why, can.remedy(c.fields, first, _own_names(program, c.form))
    own = _own_names(program, c.form)
    fields = {f for f in c.fields if own is None or f not in own}
    if not fields:
        own = _own_names(program, IN_PLACE)
        for p, _, e in record_copies(program):
            after = e.site.span[0] > c.site.span[0]
            if p == path and e.form == IN_PLACE and e.site.scope == c.site.scope and after:
                fields.update(f for f in e.fields if own is None or f not in own)
    return why, can.copy_remedy(sorted(fields) if fields else None, own)


def copy_message(program: Program, path: str, module: str, c: CopyCall) -> tuple[str, str]:
    """CTX202's message for a copy call, and the remedy to lead with: an in-place
    edit's as the publish order places it (where none precedes it, the record is
    still being set up: build it with the values)."""
    if c.form != IN_PLACE:
        # the design's rule, true whether or not the copy is published later (a
        # published copy's undeclared edits do reach that process's bags)
        why = "a resolved record is never copied: the copy's edits are no declaration, so "
        why += "they bypass resolution"
        return f"copy-and-edit of a record ({c.form}): {why}", ""
    before = publish_before(program, path, module, c)
    if before is Before.PUBLISHED:
        why = "the bags were projected at publish and do not see it"
        return f"edit of a record after resolution ({c.form}): {why}", ""
    if before is Before.UNPUBLISHED:
        why = "no publish precedes it, so a later publish projects it, but the record has no "
        why += "edit entry point (the no-copy contract)"
        record = program.vocab.record_name
        return f"edit of a record ({c.form}): {why}", (
            f"Build the record with the values ({record}(..., **fields)). "
        )
    why = "where it runs after its process published, the bags do not see it; before, it "
    return f"edit of a record ({c.form}): {why}still breaks the no-copy contract", ""


def _own_names(program: Program, form: str) -> frozenset[str] | None:
    """The named parameters of the record's edit method (`override(self, source,
    **fields)`: `source` is no field it sets), or None where the record class
    does not define it in the tree (then no keyword is judged a non-field)."""
    index = class_index(program)
    vocab = program.vocab
    record = f"{vocab.record_module}.{vocab.record_name}"
    if record not in index.classes:
        return None
    name = form.strip(".()")
    for cls in index.mro(record):
        info = index.classes.get(cls)
        if info is not None and name in info.methods:
            params = info.methods[name].params
            return frozenset(p[0] for p in params if p[1] in ("po", "pk", "ko"))
    return None
