"""CTX102 supplied-exposure: a field read off a record instance the code was handed.

The instance a function receives is the same object the process published, so
a field read off it answers with the operator's raw input: a value resolution
decided, or a post-publish override set, passes it by. The design pins these
reads at zero outside named exemptions. Spellings: `server_args.f` on a
parameter (the codebase's record-parameter names, or one annotated with the
record class), `self.server_args.f`, literal `getattr(server_args, "f"[, d])`,
the parked form (`self.x = server_args` in a method taking it, read as
`self.x.f` anywhere in the class), and chains through another object's record
(`runner.server_args.f`). Reads off the seed are CTX101's.

A record property that reads no configuration (its body touches `self` only
for slots that are neither fields nor members, SGLang's provenance
`launch_command`) has no bag behind it and no leaf to read instead: reading it
off a handed record is not exposure. Where a property does read fields and no
leaf answers it, the finding says the runtime lacks the accessor.

Facts carry the holder's shape only; whether a name is a record parameter is
a whole-program question (program.record_conventions), and every exemption is
decided in check() so that config changes never invalidate cached facts.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any, ClassVar, Literal

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, dotted
from ctxlint.facts.typed import Site, Span, site
from ctxlint.facts.vocab import Vocabulary
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.core import Program
from ctxlint.program.holders import HolderKind
from ctxlint.program.published import Before, Call, publish_order
from ctxlint.program.reads import ReadVisitor, lacking_accessor, leaf_spelling, namespace_hint
from ctxlint.program.record_conventions import RecordConvention, record_convention, record_names
from ctxlint.program.record_members import properties_reading_nothing
from ctxlint.program.rule import RawFinding, Rule, field_data

ID = "CTX102"
ALLOWED_CLASSES = "exposure-allowed-classes"
FACTORIES = "exposure-factories"
# Factories whose contract is "build X from the record you are handed".
BUILTIN_FACTORIES = ("from_server_args", "create_*_from_server_args")
# A parameter annotated with one of these is not a claim about its type.
_UNTYPED = ("Any", "object")


@dataclass(frozen=True, slots=True)
class Holder:
    """What a read is off: a parameter of the reading function ("param"), an
    attribute of self ("self"), or another object's attribute ("chain")."""

    kind: Literal["param", "self", "chain"]
    name: str  # the parameter, or the attribute
    annotated: bool = False  # annotated with the record class (the parameter, or the attribute)
    cls: str | None = None  # self: the class whose method reads it
    via: str | None = None  # chain: what the attribute is read off, as written


@dataclass(frozen=True, slots=True)
class ExposedRead:
    field: str
    form: str  # ReadVisitor's: "attr", "getattr"...
    holder: Holder
    cls: str | None  # the class the read is in
    site: Site


@dataclass(frozen=True, slots=True)
class Park:
    """`self.<attr> = <param>` in a method of `cls`; param None: `self.<attr> =
    ServerArgs(...)`, a record the class constructs itself."""

    cls: str
    attr: str
    param: str | None = None
    annotated: bool = False  # the parameter is annotated with the record class


@dataclass(frozen=True, slots=True)
class CallAt:
    """A call in a function that reads a handed record: the name it calls (the
    last part) and where, to place a publishing call whose event keeps no line."""

    scope: str
    name: str
    span: Span


@dataclass(frozen=True, slots=True)
class ExposureFacts:
    reads: tuple[ExposedRead, ...]
    parks: tuple[Park, ...]
    # the record's properties that read no configuration (in the record's module)
    unbacked: tuple[str, ...] = ()
    calls: tuple[CallAt, ...] = ()  # in the functions with a read


class ExposureVisitor(ReadVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        vocab = ctx.vocab
        assert vocab is not None
        self.active = ctx.module != vocab.runtime_module
        self.readable = set(vocab.fields) | set(vocab.properties)
        self.reads: list[ExposedRead] = []
        self.parks: list[Park] = []
        self.unbacked: list[str] = []
        self.calls: list[tuple[str, str, cst.Call]] = []  # (scope, name, node)

    # -- the record's properties -------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        vocab = self.ctx.vocab
        assert vocab is not None
        if self.ctx.module == vocab.record_module and self.ctx.qualname == vocab.record_name:
            self.unbacked.extend(properties_reading_nothing(node, set(vocab.fields)))

    # -- parameters -------------------------------------------------------------
    def _param(self, name: str) -> str | None:
        """What the parameter `name` (in the nearest function declaring it)
        claims: "rec" (annotated as the record), "plain" (no claim), "other"."""
        param = self.ctx.parts[BINDINGS].parameter(name)
        if param is None or param.star in ("*", "**"):
            return None  # not a parameter, or `*args`/`**kwargs`
        ann = param.annotation
        if ann is None:
            return "plain"
        if self.ctx.records.is_record_annotation(ann.annotation):
            return "rec"
        if (dotted(ann.annotation) or "").rpartition(".")[2] in _UNTYPED:
            return "plain"
        return "other"

    # -- holders ----------------------------------------------------------------
    def _holder(self, base: cst.BaseExpression) -> Holder | None:
        """The handed record `base` may be (records' one classifier), as facts:
        a name only as a parameter of the function reading it."""
        holder = self.ctx.records.holder(base)
        if holder is None or holder.kind is HolderKind.SEED:
            return None  # the seed: CTX101
        if isinstance(base, cst.Name):
            kind = self._param(base.value)
            if kind in ("rec", "plain"):
                return Holder("param", base.value, annotated=kind == "rec")
            return None
        if holder.kind is HolderKind.SELF_ATTR:
            return Holder("self", holder.name, cls=holder.cls)  # type: ignore[arg-type]
        if holder.kind is HolderKind.ATTR:
            return Holder("chain", holder.name, via=holder.via)  # type: ignore[arg-type]
        return None

    def _record(self, node: cst.CSTNode, base: cst.BaseExpression, field: str, form: str) -> None:
        holder = self._holder(base)
        if holder is None:
            return
        cls = self.ctx.enclosing_class()
        self.reads.append(ExposedRead(field, form, holder, cls, site(self.ctx, node)))

    def visit_Call(self, node: cst.Call) -> None:
        super().visit_Call(node)
        if not self.active or not self.ctx.in_function():
            return
        func = node.func
        name = func.value if isinstance(func, cst.Name) else None
        if isinstance(func, cst.Attribute):
            name = func.attr.value
        if name is not None:
            self.calls.append((self.ctx.qualname, name, node))

    def _constructs_record(self, value: cst.BaseExpression) -> bool:
        """`ServerArgs(...)` / `ServerArgs.from_cli_args(...)`: a record the code owns."""
        if not isinstance(value, cst.Call):
            return False
        target = self.ctx.resolve(value.func) or ""
        record = self.ctx.vocab.record_class  # type: ignore[union-attr]
        return target == record or target.rpartition(".")[0] == record

    def leave_Assign(self, node: cst.Assign) -> None:
        """`self.x = server_args` in a method that takes it: the parked form (also
        one element of a tuple assignment, `self.n, self.x = n, server_args`);
        `self.x = ServerArgs(...)`: a record the class builds, not one handed."""
        if not self.active:
            return
        cls = self.ctx.enclosing_class()
        if cls is None:
            return
        for t in node.targets:
            for target, value in _pairs(t.target, node.value):
                self._park(cls, target, value)

    def _park(self, cls: str, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        kind = self._param(value.value) if isinstance(value, cst.Name) else None
        owned = kind is None and self._constructs_record(value)
        if kind not in ("rec", "plain") and not owned:
            return
        attr = self.ctx.records.self_attr(target)
        if attr is None:
            return
        if owned:
            self.parks.append(Park(cls, attr))
        else:
            self.parks.append(Park(cls, attr, value.value, kind == "rec"))  # type: ignore[attr-defined]

    def finish(self) -> ExposureFacts | None:
        rec = self.ctx.records
        reads = []
        for r in self.reads:
            h = r.holder
            if h.kind == "self":
                if rec.parked(h.cls, h.name):
                    continue  # the seed parked on self: CTX101
                held = replace(h, annotated=rec.annotated_attr(h.cls, h.name))
                r = replace(r, holder=held)
            reads.append(r)
        if not reads and not self.unbacked:
            return None
        # where each call is, in the functions with a read only (anchors cost a pass)
        scopes = {r.site.scope for r in reads}
        calls = tuple(
            CallAt(scope, name, self.ctx.anchor(node))  # type: ignore[arg-type]
            for scope, name, node in self.calls
            if scope in scopes
        )
        return ExposureFacts(tuple(reads), tuple(self.parks), tuple(self.unbacked), calls)


def _pairs(
    target: cst.BaseExpression, value: cst.BaseExpression
) -> Iterator[tuple[cst.BaseExpression, cst.BaseExpression]]:
    """(target, value) pairs of an assignment, element by element where a tuple
    or list target meets a literal of the same length with nothing starred."""
    seqs = (cst.Tuple, cst.List)
    if isinstance(target, seqs) and isinstance(value, seqs):
        ts, vs = target.elements, value.elements
        flat = not any(isinstance(e, cst.StarredElement) for e in (*ts, *vs))
        if flat and len(ts) == len(vs):
            for t, v in zip(ts, vs, strict=True):
                yield from _pairs(t.value, v.value)
            return
    yield target, value


def _facts(program: Program) -> Iterator[tuple[str, str, ExposureFacts]]:
    return program.typed_facts(ID, ExposureFacts)


def _matches(patterns: Iterable[str], name: str) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)


class SuppliedExposure(Rule):
    id = ID
    name = "supplied-exposure"
    summary = (
        "A field read off a record instance the code was handed (a parameter, self.server_args, "
        "a parked alias, another object's record) instead of its bag"
    )
    fixes = ("unsafe",)  # ctxlint fix (docs/fix.md)
    fix_guards = ("CTX301",)  # a read it rewrites must not come before publish
    visitor = ExposureVisitor
    # the call graph: whether a publish precedes a read decides its hint
    requires = ("records", BINDINGS, "calls", "classes")
    options: ClassVar[dict[str, Any]] = {ALLOWED_CLASSES: [], FACTORIES: []}

    def fixers(self) -> tuple[Callable[..., None], ...]:
        from ctxlint.rules.ctx102_supplied_exposure.fix import fix_supplied_reads

        return (fix_supplied_reads,)

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return {vocab.record_name, "publish"}

    def more_tokens(self, program: Program) -> set[str]:
        return record_names(program)

    # -- derivation -------------------------------------------------------------
    def _option(self, program: Program, key: str) -> list[str]:
        value = program.config.options.get(key, self.options[key])
        return [str(v) for v in value]

    def _parked(self, program: Program, names: RecordConvention) -> dict[tuple[str, str, str], str]:
        """(path, class, attr) -> the parameter parked there, for record parameters."""
        out: dict[tuple[str, str, str], str] = {}
        for path, module, facts in _facts(program):
            for p in facts.parks:
                if p.param is not None and (p.annotated or names.holds(p.param, module)):
                    out[(path, p.cls, p.attr)] = p.param
        return out

    @staticmethod
    def _owned(program: Program) -> set[tuple[str, str, str]]:
        """(path, class, attr) the class assigns a record it constructs itself."""
        return {
            (path, p.cls, p.attr)
            for path, _, facts in _facts(program)
            for p in facts.parks
            if p.param is None
        }

    def derive(self, program: Program) -> dict[str, Any]:
        names = record_convention(program)
        allowed = self._option(program, ALLOWED_CLASSES)
        classes = {
            (module, r.cls) for _, module, facts in _facts(program) for r in facts.reads if r.cls
        }
        return {
            "record parameter names": sorted(names.names),
            "parked record attributes": sorted(
                f"{path}:{cls}.{attr} = {n}"
                for (path, cls, attr), n in self._parked(program, names).items()
            ),
            "exempt factory patterns": [*BUILTIN_FACTORIES, *self._option(program, FACTORIES)],
            "allowed classes": allowed,
            # a stale allow-list entry passes green forever: show it
            "allowed classes with no read": sorted(
                a for a in allowed if not any(_class_matches(a, m, c) for m, c in classes)
            ),
        }

    # -- check ------------------------------------------------------------------
    def check(self, program: Program) -> Iterable[RawFinding]:
        names = record_convention(program)
        parked = self._parked(program, names)
        owned = self._owned(program)
        factories = [*BUILTIN_FACTORIES, *self._option(program, FACTORIES)]
        allowed = self._option(program, ALLOWED_CLASSES)
        rname = program.vocab.record_name
        unbacked = {p for _, _, facts in _facts(program) for p in facts.unbacked}
        calls: dict[tuple[str, str], list[Call]] = {}
        for path, _, facts in _facts(program):
            for c in facts.calls:
                calls.setdefault((path, c.scope), []).append((c.name, c.span[0], c.span[2]))
        for path, module, facts in _facts(program):
            for r in facts.reads:
                h = r.holder
                if h.kind == "param":
                    if not (h.annotated or names.holds(h.name, module)):
                        continue
                    how = f"parameter `{h.name}`"
                elif h.kind == "self":
                    key = (path, r.cls, h.name)
                    via = parked.get(key)  # type: ignore[arg-type]
                    if via is None and key in owned:
                        continue  # the class built this record itself: nobody handed it
                    if via is not None and h.name != via:
                        how = f"`self.{h.name}`, parked from parameter `{via}`"
                    elif h.annotated or names.holds(h.name, module) or via is not None:
                        how = f"`self.{h.name}`"
                    else:
                        continue
                else:
                    if not names.holds(h.name, module):
                        continue
                    how = f"`{h.via}.{h.name}`"  # another object's record
                if any(_matches(factories, part) for part in r.site.scope.split(".")):
                    continue
                if r.cls and any(_class_matches(a, module, r.cls) for a in allowed):
                    continue
                if r.field in unbacked:
                    continue  # provenance: no configuration behind it, nothing to read instead
                spelled = " (literal getattr)" if r.form == "getattr" else ""
                yield RawFinding(
                    ID,
                    path,
                    r.site.scope,
                    r.site.snippet,
                    r.site.span,
                    f"`{r.field}` read off a handed {rname}{spelled} through {how}: raw "
                    "input, which resolution and post-publish overrides pass by",
                    details=_remedy(
                        program, module, r.site, r.field, calls.get((path, r.site.scope), [])
                    ),
                    data=field_data(program.vocab, r.field),
                )


def _remedy(program: Program, module: str, site: Site, field: str, calls: list[Call]) -> str:
    """What to read instead, named only where the runtime defines it, and only
    where a publish may precede the read (a bag accessor raises before it): the
    ordered question, asked of this statement (program/published.py)."""
    before = publish_order(program).before(f"{module}.{site.scope}", site.span, calls)
    if before is Before.UNPUBLISHED:
        return (
            f"No publish precedes this read in `{site.scope}` on any path "
            "into it, so a bag accessor raises here: pass the resolved value down as an "
            "argument, or keep the handed record."
        )
    vocab = program.vocab
    where = leaf_spelling(vocab, field)
    # the leaf with when it answers: a body's publish may sit in a branch
    after = (
        " once the process has published (code that runs before its publish takes the "
        "value as a constructor argument instead)"
    )
    if where is not None:
        return f"Read {where}{after}."
    if field in vocab.fields:
        hint = namespace_hint(vocab, field)
        return f"{hint[0].upper()}{hint[1:]}; then read that leaf{after}."
    return (
        f"`{field}` is a property of the record with no bag leaf: {lacking_accessor(vocab)}{after}."
    )


def _class_matches(allowed: str, module: str, cls: str) -> bool:
    """`GrammarManager` names any class of that name (or one nested in it);
    `pkg.mod.Class` names exactly that one."""
    if "." in allowed:
        full = f"{module}.{cls}"
        return full == allowed or full.startswith(allowed + ".")
    return allowed in cls.split(".")


RULE = SuppliedExposure()
