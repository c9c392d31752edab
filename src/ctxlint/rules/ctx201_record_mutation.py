"""CTX201 record-mutation: a write onto a record instance.

The record is the operator's raw input, sealed after resolution; a write
outside the resolution pipeline desyncs it from the bags it was projected into
(and raises at run time under the strict guard, which refuses any attribute,
declared field or not). Instances are the seed and its aliases, names and
attributes annotated with the record class, the names the codebase itself gives
record parameters (derived from annotations), names bound to a new record
(`args = ServerArgs(...)`), and copies of any of these.

A write followed, in the same function and on the same name, by a call of one
of the record's resolution entries (derived: the record's methods that set a
flag its `__setattr__` checks before refusing) happens before resolution: it is
reported as what it is, a write to the operator's input outside the pipeline.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, dotted, string_value
from ctxlint.facts.typed import Site, site
from ctxlint.facts.visitor import FileVisitor
from ctxlint.facts.vocab import Vocabulary
from ctxlint.program.core import Program
from ctxlint.program.holders import Holder, HolderKind
from ctxlint.program.reads import namespace_hint, positional
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

ID = "CTX201"
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

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        self._seal_flag_read(node)
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
        if not writes and not seal:
            return None
        return WriteFacts(tuple(writes), seal)


def resolution_entries(program: Program) -> dict[str, list[str]]:
    """The record's methods that set its write seal: each sets a flag that the
    record's own `__setattr__` checks before refusing a write (SGLang's
    `resolve_once` sets `_input_frozen` and `_resolution_finished`)."""
    path = program.module_path(program.vocab.record_module)
    facts = program.typed_file(path, ID, WriteFacts) if path else None
    return {m: list(flags) for m, flags in facts.seal.items()} if facts else {}


def _not_config(program: Program, name: str) -> str:
    """The remedy for a write of a name that is no field (a private memo, a
    provenance note): the config remedies do not fit (`get_context().override`
    refuses a non-field and the record's constructor takes no such argument).
    Where the name backs a record property (`_x` behind `x`), name it."""
    why = (
        "it is not configuration: get_context().override takes only fields and the "
        "record's constructor no such argument; keep the value off the record"
    )
    prop = name.lstrip("_")
    if prop != name and prop in program.vocab.properties:
        why += (
            f" (it backs the record's `{prop}` property: give that property the inputs it "
            "is computed from instead of seeding it)"
        )
    return why


class RecordMutation(Rule):
    id = ID
    name = "record-mutation"
    summary = "A write onto a record instance outside the resolution pipeline"
    visitor = RecordWriteVisitor
    # the resolution pipeline and its declaration function: a write inside
    # resolution is answered with the declaration this tree declares
    requires = ("records", "calls", "classes", RESOLUTION)
    options: ClassVar[dict[str, Any]] = {COPY_HELPERS: []}

    def tokens(self, vocab: Vocabulary) -> set[str]:
        modules = {vocab.record_module, *(q.rpartition(".")[0] for q in vocab.field_classes)}
        return {*vocab.seed_accessors, vocab.record_name} | {f"module:{m}" for m in modules}

    def more_tokens(self, program: Program) -> set[str]:
        res = resolution(program)
        return record_names(program) | res.wanted_tokens() | res.slot_names

    def derive(self, program: Program) -> dict[str, Any]:
        convention = record_convention(program)
        return {
            "record parameter names": sorted(convention.names),
            "record parameter names meaning a rival record class": convention.describe(),
            "resolution entries": [
                f"{m} (sets {', '.join(flags)})" for m, flags in resolution_entries(program).items()
            ],
        }

    def check(self, program: Program) -> Iterable[RawFinding]:
        convention = record_convention(program)
        entries = resolution_entries(program)
        fields = set(program.vocab.fields)
        helpers = copy_helper_scopes(program)
        res = resolution(program)
        for path, module, facts in program.typed_facts(ID, WriteFacts):
            for w in facts.writes:
                b = w.base
                if b.kind in NAMED and not convention.holds(b.name, module):  # type: ignore[arg-type]
                    continue
                if in_helper(helpers, module, w.site.scope):
                    continue
                if w.field is None:
                    what = "write to a record attribute named at run time"
                elif w.field in fields:
                    what = f"write to record field `{w.field}`"
                else:
                    what = f"write to `{w.field}` on the record (not a declared field)"
                sealed_by = [m for m in w.then if m in entries]
                inside = res.entry_reaching(f"{module}.{w.site.scope}")
                if sealed_by:
                    why = (
                        f"a write to the operator's input outside the resolution pipeline "
                        f"(before .{sealed_by[0]}() resolves the record); a launcher-stage "
                        f"decision is resolution: declare it with {res.declaration_hint()}"
                    )
                elif inside is not None:
                    why = (
                        f"inside resolution (reached from {inside}), where a decision is "
                        f"declared, not written: declare it with {res.declaration_hint()}"
                    )
                elif w.field is not None and w.field not in fields:
                    why = _not_config(program, w.field)
                else:
                    why = (
                        "the record is read-only after resolution; change config with "
                        "get_context().override(source, ...) or pass the value as a "
                        "constructor argument"
                    )
                if w.field in fields:  # where its value lives, or the step not yet taken
                    why += f"; {namespace_hint(program.vocab, w.field)}"
                s = w.site
                yield RawFinding(ID, path, s.scope, s.snippet, s.span, f"{what} ({w.form}): {why}")


RULE = RecordMutation()
