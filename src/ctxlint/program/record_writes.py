"""Record writes: where a record instance is written, and by which spelling.

Per file, every write whose target the records part calls a record holder
(`rec.f = v`, `del rec.f`, a `for`/`with` target, `setattr(rec, ...)`,
`object.__setattr__(rec, ...)`, `rec.__setattr__(...)`, `vars(rec)[...]`,
`rec.__dict__.update(...)`...), with the methods later called on the written
name in its function; and in the record's module its write seal: the record's
methods that set a flag its own `__setattr__` checks before refusing a write
(`resolution_entries`). `record_writes` keeps the writes that are onto a record
by the codebase's naming convention and outside the configured copy helpers.
Asked by CTX201, whose facts these are.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, dotted, string_value
from ctxlint.facts.typed import Site, site
from ctxlint.facts.visitor import FileVisitor
from ctxlint.program.core import Program
from ctxlint.program.holders import Holder, HolderKind
from ctxlint.program.override_seeds import OverrideSeeds, SeedWatch
from ctxlint.program.reads import positional
from ctxlint.program.record_conventions import copy_helper_scopes, in_helper, record_convention
from ctxlint.program.record_members import provenance_slots

ID = "CTX201"  # the rule whose facts these are
SETATTR_CALLS = {"setattr": "setattr()", "delattr": "delattr()"}
# holders that are a record only if the codebase names its records so
NAMED = (HolderKind.NAME, HolderKind.ATTR)


@dataclass(frozen=True, slots=True)
class RecordWrite:
    field: str | None  # None: named at run time (`setattr(rec, name, v)`)
    form: str  # "assignment", "setattr()", "vars().update()"...
    base: Holder  # what is written to (records' verdict, settled)
    site: Site
    then: tuple[str, ...] = ()  # methods later called on the written name, in its function


@dataclass(frozen=True, slots=True)
class WriteFacts:
    writes: tuple[RecordWrite, ...]
    # the record's write seal (its module only): record method -> the flags it sets
    # that the record's `__setattr__` checks before refusing a write
    seal: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # the record's provenance slots (its module only): slot -> the property that
    # returns it and reads nothing else (no configuration is behind it)
    provenance: dict[str, str] = field(default_factory=dict)
    # the runtime's test override, where it seeds non-field slots (its module only)
    seeds: OverrideSeeds | None = None


class RecordWriteVisitor(FileVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        vocab = ctx.vocab
        assert vocab is not None
        # the runtime module owns the record slot (it builds the record a test
        # override publishes and seeds its private caches): not a mutation site
        self.active = ctx.module != vocab.runtime_module
        # each write, with its order among the calls and the name written to (in a function)
        self.writes: list[tuple[RecordWrite, int, str | None]] = []
        # (scope, name, method, order) of every `name.method(...)` call, to tell
        # which writes a resolution entry follows
        self.calls: list[tuple[str, str, str, int]] = []
        self.order = 0
        self.in_record_module = ctx.module == vocab.record_module
        self.record_name = vocab.record_name
        self.seal_flags: set[str] = set()  # flags the record's __setattr__ checks
        self.sets_flags: dict[str, set[str]] = {}  # record method -> flags it sets true
        self.negated = 0  # depth of `not` operators around the current node
        self.provenance: dict[str, str] = {}
        self.seeds = SeedWatch(ctx) if ctx.module == vocab.runtime_module else None

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        vocab = self.ctx.vocab
        if self.in_record_module and vocab and self.ctx.qualname == self.record_name:
            self.provenance.update(provenance_slots(node, set(vocab.fields)))

    def _write(
        self, node: cst.CSTNode, base: cst.BaseExpression, field: str | None, form: str
    ) -> None:
        if not self.active:
            return
        holder = self.ctx.records.holder(base)
        if holder is None or holder.kind is HolderKind.RECEIVER:
            return
        self.order += 1
        write = RecordWrite(field, form, holder, site(self.ctx, node))
        named = isinstance(base, cst.Name) and self.ctx.scope.kind == "function"
        self.writes.append((write, self.order, base.value if named else None))  # type: ignore[attr-defined]

    def _target(self, target: cst.BaseExpression, form: str) -> None:
        if isinstance(target, cst.Attribute):
            self._write(target, target.value, target.attr.value, form)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for e in target.elements:
                self._target(e.value, form)
        elif isinstance(target, cst.StarredElement):
            self._target(target.value, form)
        elif isinstance(target, cst.Subscript):
            self._dict_write(target, form)

    def _dict_write(self, target: cst.Subscript, form: str) -> None:
        """`vars(rec)["f"] = v` and `rec.__dict__["f"] = v`."""
        holder = target.value
        base: cst.BaseExpression | None = None
        if isinstance(holder, cst.Call) and dotted(holder.func) == "vars" and holder.args:
            base, how = holder.args[0].value, "vars()[...]"
        elif isinstance(holder, cst.Attribute) and holder.attr.value == "__dict__":
            base, how = holder.value, "__dict__[...]"
        if base is None or len(target.slice) != 1:
            return
        index = target.slice[0].slice
        key = string_value(index.value) if isinstance(index, cst.Index) else None
        self._write(target, base, key, f"{how} {form}")

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._target(node.target, "assignment")

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._target(node.target, "annotated assignment")

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target, "augmented assignment")

    def visit_For(self, node: cst.For) -> None:
        self._target(node.target, "for target")

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._target(node.asname.name, "with target")

    def visit_Del(self, node: cst.Del) -> None:
        self._target(node.target, "del")

    # -- the record's write seal (in the record module only) -------------------
    def _record_method(self) -> str | None:
        scope = self.ctx.scope
        if not self.in_record_module or scope.kind != "function":
            return None
        if self.ctx.enclosing_class() != self.record_name or scope.self_name is None:
            return None
        return scope.qualname.rpartition(".")[2]

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        self.negated += isinstance(node.operator, cst.Not)

    def leave_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        self.negated -= isinstance(node.operator, cst.Not)

    def _seal_flag_read(self, node: cst.Call) -> None:
        """`getattr(self, "_flag", False)` in the record's `__setattr__`, not negated:
        a flag that, set, makes the record refuse writes."""
        if self.negated or self._record_method() != "__setattr__":
            return
        args = positional(node)
        if dotted(node.func) == "getattr" and len(args) >= 2:
            flag = string_value(args[1])
            if flag and isinstance(args[0], cst.Name) and args[0].value == self.ctx.scope.self_name:
                self.seal_flags.add(flag)

    def _seal_flag_set(self, node: cst.Assign) -> None:
        """`self._flag = True` in a method of the record."""
        method = self._record_method()
        if method is None or not (isinstance(node.value, cst.Name) and node.value.value == "True"):
            return
        for t in node.targets:
            attr = self.ctx.records.self_attr(t.target)
            if attr is not None:
                self.sets_flags.setdefault(method, set()).add(attr)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._seal_flag_set(node)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self.seeds is not None:
            self.seeds.function(node)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        self._seal_flag_read(node)
        if self.seeds is not None:
            self.seeds.call(node)
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and self.ctx.scope.kind == "function"
        ):
            self.order += 1
            self.calls.append((self.ctx.qualname, func.value.value, func.attr.value, self.order))
        args = positional(node)
        name = dotted(func)
        if name in SETATTR_CALLS and len(args) >= 2:
            self._write(node, args[0], string_value(args[1]), SETATTR_CALLS[name])
        elif isinstance(func, cst.Attribute) and func.attr.value == "__setattr__":
            if name is not None and len(args) >= 3 and name.count(".") >= 1:
                # object.__setattr__(rec, "f", v) / SomeClass.__setattr__(rec, "f", v)
                self._write(node, args[0], string_value(args[1]), f"{name}()")
            if len(args) == 2:  # rec.__setattr__("f", v)
                self._write(node, func.value, string_value(args[0]), "__setattr__()")
        elif isinstance(func, cst.Attribute) and func.attr.value == "update":
            holder = func.value
            if isinstance(holder, cst.Call) and dotted(holder.func) == "vars" and holder.args:
                self._write(node, holder.args[0].value, None, "vars().update()")
            elif isinstance(holder, cst.Attribute) and holder.attr.value == "__dict__":
                self._write(node, holder.value, None, "__dict__.update()")

    def finish(self) -> WriteFacts | None:
        rec = self.ctx.records
        writes = []
        for w, order, name in self.writes:
            scope = w.site.scope
            then = {m for s, n, m, o in self.calls if o > order and (s, n) == (scope, name)}
            base = Holder.of_fact(rec.settle(w.base.fact()))
            writes.append(replace(w, base=base, then=tuple(sorted(then))))
        seal = {m: tuple(sorted(flags & self.seal_flags)) for m, flags in self.sets_flags.items()}
        seal = {m: flags for m, flags in sorted(seal.items()) if flags}
        seeds = self.seeds.result() if self.seeds is not None else None
        if not writes and not seal and not self.provenance and seeds is None:
            return None
        return WriteFacts(tuple(writes), seal, self.provenance, seeds)


def resolution_entries(program: Program) -> dict[str, list[str]]:
    """The record's methods that set its write seal: each sets a flag that the
    record's own `__setattr__` checks before refusing a write (SGLang's
    `resolve_once` sets `_input_frozen` and `_resolution_finished`)."""
    path = program.module_path(program.vocab.record_module)
    facts = program.typed_file(path, ID, WriteFacts) if path else None
    return {m: list(flags) for m, flags in facts.seal.items()} if facts else {}


def provenance(program: Program) -> dict[str, str]:
    """The record's provenance slots: slot -> the property returning it alone."""
    path = program.module_path(program.vocab.record_module)
    facts = program.typed_file(path, ID, WriteFacts) if path else None
    return dict(facts.provenance) if facts else {}


def override_seeds(program: Program) -> OverrideSeeds | None:
    """The runtime's test override, where it seeds non-field slots (program.override_seeds)."""
    path = program.module_path(program.vocab.runtime_module)
    facts = program.typed_file(path, ID, WriteFacts) if path else None
    return facts.seeds if facts else None


def bypasses_guard(w: RecordWrite) -> bool:
    """A class-level `__setattr__` (`object.__setattr__(rec, ...)`,
    `msgspec.Struct.__setattr__(rec, ...)`): the record's own guard never runs."""
    return w.form.endswith(".__setattr__()")


def record_writes(program: Program) -> Iterator[tuple[str, str, RecordWrite]]:
    """(path, module, write) for each write onto a record: a holder the codebase's
    naming convention makes a record there, outside the configured copy helpers."""
    convention = record_convention(program)
    helpers = copy_helper_scopes(program)
    for path, module, facts in program.typed_facts(ID, WriteFacts):
        for w in facts.writes:
            b = w.base
            if b.kind in NAMED and not convention.holds(b.name, module):  # type: ignore[arg-type]
                continue
            if not in_helper(helpers, module, w.site.scope):
                yield path, module, w
