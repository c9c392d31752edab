"""Which field reads are off a record instance the code was handed, and how it
is held there.

The instance a function receives is the same object the process published.
Spellings: `server_args.f` on a parameter (the codebase's record-parameter
names, or one annotated with the record class), `self.server_args.f`, literal
`getattr(server_args, "f"[, d])`, the parked form (`self.x = server_args` in a
method taking it, read as `self.x.f` anywhere in the class), and chains
through another object's record (`runner.server_args.f`). Reads off the seed
(seed_reads) are not handed, nor is a record the class constructs itself
(`self.x = ServerArgs(...)`), nor a record property that reads no
configuration (its body touches `self` only for slots that are neither fields
nor members, SGLang's provenance `launch_command`): no bag is behind it.

Which of those the design keeps is program.whole_object's question.

Facts carry the holder's shape only; whether a name is a record parameter is
a whole-program question (record_conventions), decided here over every file,
so that config changes never invalidate cached facts. The calls of each
function with a read are kept to ask whether a publish precedes the read
(published.PublishOrder).

Asked by CTX102 (supplied-exposure), whose visitor gathers the reads, the
parked aliases, the unbacked properties and the calls under its id (KEY).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Literal

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, dotted
from ctxlint.facts.typed import Site, Span, site
from ctxlint.facts.vocab import Vocabulary
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.core import Program
from ctxlint.program.holders import HolderKind
from ctxlint.program.published import Before, CallAt, calls_by_function, publish_order
from ctxlint.program.reads import ReadVisitor, lacking_accessor, leaf_spelling, namespace_hint
from ctxlint.program.record_conventions import record_convention
from ctxlint.program.record_members import properties_reading_nothing
from ctxlint.program.resolution import KEY as RESOLUTION

KEY = "CTX102"  # the rule whose facts these are
# the model parts it reads (the asking rule's requires): the visitor asks the record
# tracker and the binding model; whether a publish precedes a read, the call graph
# the pipeline (which reads are CTX103's, which function materialises declarations)
REQUIRES = ("records", BINDINGS, "calls", "classes", RESOLUTION)
# A parameter annotated with one of these is not a claim about its type.
_UNTYPED = ("Any", "object")


@dataclass(frozen=True, slots=True)
class ReadHolder:
    """What a read is off: a parameter of the reading function ("param"), an
    attribute of self ("self"), or another object's attribute ("chain"): records'
    verdict (program.holders.Holder) narrowed to what a handed record can be."""

    kind: Literal["param", "self", "chain"]
    name: str  # the parameter, or the attribute
    annotated: bool = False  # annotated with the record class (the parameter, or the attribute)
    cls: str | None = None  # self: the class whose method reads it
    via: str | None = None  # chain: what the attribute is read off, as written


@dataclass(frozen=True, slots=True)
class ExposedRead:
    field: str
    form: str  # ReadVisitor's: "attr", "getattr"...
    holder: ReadHolder
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
    scope: str = ""  # the method that parks it


@dataclass(frozen=True, slots=True)
class OnParam:
    """A call on a parameter in a function with a read: `<param>.<name>(...)`
    (`method` True), or `<name>(<param>, ...)` with the parameter first (`name`
    qualified where the file resolves it): where that function resolves the
    record it was handed (program.exposure_cuts)."""

    scope: str
    param: str
    name: str
    method: bool
    span: Span


@dataclass(frozen=True, slots=True)
class ExposureFacts:
    reads: tuple[ExposedRead, ...]
    parks: tuple[Park, ...]
    # the record's properties that read no configuration (in the record's module)
    unbacked: tuple[str, ...] = ()
    calls: tuple[CallAt, ...] = ()  # in the functions with a read
    # functions (qualified) writing a parameter's attribute by a computed name,
    # `setattr(server_args, field, value)`: a materialiser candidate
    setters: tuple[str, ...] = ()
    on_params: tuple[OnParam, ...] = ()  # in the functions with a read


class ExposureVisitor(ReadVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.reads: list[ExposedRead] = []
        self.parks: list[Park] = []
        self.unbacked: list[str] = []
        self.calls: list[tuple[str, str, cst.Call]] = []  # (scope, name, node)
        self.setters: set[str] = set()
        self.on_params: list[tuple[str, str, str, bool, cst.Call]] = []

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
    def _holder(self, base: cst.BaseExpression) -> ReadHolder | None:
        """The handed record `base` may be (records' one classifier), as facts:
        a name only as a parameter of the function reading it."""
        holder = self.ctx.records.holder(base)
        if holder is None or holder.kind is HolderKind.SEED:
            return None  # the seed: CTX101
        if isinstance(base, cst.Name):
            kind = self._param(base.value)
            if kind in ("rec", "plain"):
                return ReadHolder("param", base.value, annotated=kind == "rec")
            return None
        if holder.kind is HolderKind.SELF_ATTR:
            return ReadHolder("self", holder.name, cls=holder.cls)  # type: ignore[arg-type]
        if holder.kind is HolderKind.ATTR:
            return ReadHolder("chain", holder.name, via=holder.via)  # type: ignore[arg-type]
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
            self._on_param(func, name, node)
        if name == "setattr" and isinstance(func, cst.Name) and len(node.args) >= 3:
            obj, attr = node.args[0].value, node.args[1].value
            computed = not isinstance(attr, (cst.SimpleString, cst.ConcatenatedString))
            if computed and isinstance(obj, cst.Name) and self._param(obj.value) is not None:
                self.setters.add(f"{self.ctx.module}.{self.ctx.qualname}")

    def _on_param(self, func: cst.BaseExpression, name: str, node: cst.Call) -> None:
        """Keep `param.name(...)` and `name(param, ...)` (the parameter first)."""
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
            held, method = func.value.value, True
        elif node.args and node.args[0].keyword is None and not node.args[0].star:
            first = node.args[0].value
            held, method = (first.value if isinstance(first, cst.Name) else ""), False
            name = (self.ctx.resolve(func) or name) if held else name
        else:
            return
        if held and self._param(held) in ("rec", "plain"):
            self.on_params.append((self.ctx.qualname, held, name, method, node))

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
            name = value.value  # type: ignore[attr-defined]
            self.parks.append(Park(cls, attr, name, kind == "rec", self.ctx.qualname))

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
        if not reads and not self.unbacked and not self.setters:
            return None
        # where each call is, in the functions with a read only (anchors cost a pass)
        scopes = {r.site.scope for r in reads}
        calls = tuple(
            CallAt(scope, name, self.ctx.anchor(node))  # type: ignore[arg-type]
            for scope, name, node in self.calls
            if scope in scopes
        )
        on_params = tuple(
            OnParam(scope, held, name, method, self.ctx.anchor(node))  # type: ignore[arg-type]
            for scope, held, name, method, node in self.on_params
            if scope in scopes
        )
        return ExposureFacts(
            tuple(reads),
            tuple(self.parks),
            tuple(self.unbacked),
            calls,
            tuple(sorted(self.setters)),
            on_params,
        )


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


@dataclass(frozen=True, slots=True)
class Handed:
    """How a handed record is held where a field is read off it: a parameter,
    `self.<name>` (`via`: the parameter parked there under another name), or
    another object's attribute (`via`: what it is read off, as written)."""

    kind: Literal["param", "self", "chain"]
    name: str
    via: str | None = None

    def parked(self) -> str:
        """Where a record held on `self` came from, for a finding's details."""
        if self.kind != "self" or not self.via:
            return ""
        return f"`self.{self.name}` is parked from parameter `{self.via}`. "


class HandedReads:
    """Every read off a handed record, over the whole program."""

    def __init__(self, program: Program) -> None:
        self.names = record_convention(program)
        self.files = list(program.typed_facts(KEY, ExposureFacts))
        # (path, class, attr) -> the record parameter parked there
        self.parked: dict[tuple[str, str, str], str] = {}
        for path, module, facts in self.files:
            for p in facts.parks:
                if p.param is not None and (p.annotated or self.names.holds(p.param, module)):
                    self.parked[(path, p.cls, p.attr)] = p.param
        # (path, class, attr) the class assigns a record it constructs itself
        self.owned = {
            (path, p.cls, p.attr) for path, _, f in self.files for p in f.parks if p.param is None
        }
        self.unbacked = {p for _, _, f in self.files for p in f.unbacked}
        # (module, class) of every read in a class, handed or not
        self.classes = {(m, r.cls) for _, m, f in self.files for r in f.reads if r.cls}
        # (path, method, parameter) a method parks on self
        self.parking = {
            (path, p.scope, p.param) for path, _, f in self.files for p in f.parks if p.param
        }
        # (path, function) -> its calls
        self.calls = calls_by_function((path, f.calls) for path, _, f in self.files)
        # (path, function) -> the calls it makes on a parameter
        self.on_params: dict[tuple[str, str], list[OnParam]] = {}
        for path, _, f in self.files:
            for c in f.on_params:
                self.on_params.setdefault((path, c.scope), []).append(c)

    def held(self, path: str, module: str, r: ExposedRead) -> Handed | None:
        """How the record `r` reads off is handed, or None where it is not."""
        h = r.holder
        if h.kind == "param":
            return (
                Handed("param", h.name) if h.annotated or self.names.holds(h.name, module) else None
            )
        if h.kind == "chain":
            return Handed("chain", h.name, h.via) if self.names.holds(h.name, module) else None
        key = (path, r.cls, h.name)
        via = self.parked.get(key)  # type: ignore[arg-type]
        if via is None and key in self.owned:
            return None  # the class built this record itself: nobody handed it
        if via is not None and h.name != via:
            return Handed("self", h.name, via)
        if h.annotated or self.names.holds(h.name, module) or via is not None:
            return Handed("self", h.name)
        return None

    def reads(self) -> Iterator[tuple[str, str, ExposedRead, Handed]]:
        """(path, module, read, how it is held) for each read off a handed record
        of a field with configuration behind it."""
        for path, module, facts in self.files:
            for r in facts.reads:
                held = self.held(path, module, r)
                if held is not None and r.field not in self.unbacked:
                    yield path, module, r, held

    def remedy(self, program: Program, path: str, module: str, r: ExposedRead) -> str:
        """What to read instead, named only where the runtime defines it, and only
        where the accessor answers there: where no publish precedes the read on
        any path into it the accessor raises, and where the read's own function
        publishes after it (a constructor that publishes, 0.5.17's
        `TokenizerManager.__init__`) the leaf answers below that publish."""
        q, calls = f"{module}.{r.site.scope}", self.calls.get((path, r.site.scope), [])
        order = publish_order(program)
        before = order.before(q, r.site.span, calls)
        line = order.follows(q, r.site.span, calls)
        scope, vocab = r.site.scope, program.vocab
        if line is not None:
            read = _leaf(vocab, r.field, f" below line {line}")
            if before is Before.PUBLISHED:  # a re-publish: the bags hold the earlier one
                return (
                    f"`{scope}` publishes again at line {line}, after this read (above it the "
                    f"bags hold the earlier publish): {read}."
                )
            return (
                f"`{scope}` publishes at line {line}, after this read, so a bag accessor "
                f"raises here{'' if before is Before.UNPUBLISHED else ' unless an earlier publish ran'}"
                f": {read}, or pass the resolved value down as an argument."
            )
        if before is Before.UNPUBLISHED:
            return (
                f"No publish precedes this read in `{scope}` on any path into it, so a bag "
                "accessor raises here: pass the resolved value down as an argument, or keep "
                "the handed record."
            )
        # the leaf with when it answers: a body's publish may sit in a branch
        after = (
            " once the process has published (code that runs before its publish takes the "
            "value as a constructor argument instead)"
        )
        read = _leaf(vocab, r.field, after)
        return f"{read[0].upper()}{read[1:]}."

    def whole_object(self, path: str, r: ExposedRead, held: Handed) -> bool:
        """The read is of a record handed along as a parameter (`f(server_args)`),
        not held by an object (program.whole_object also asks `parks_worker`)."""
        return held.kind == "param"

    def parks(self, path: str, r: ExposedRead, held: Handed) -> bool:
        """The read is in the method that parks the parameter it reads off."""
        return (path, r.site.scope, held.name) in self.parking


def _leaf(vocab: Vocabulary, field: str, when: str) -> str:
    """ "read <the leaf>" + `when`, as the runtime spells it; for a field with no
    leaf, the namespace it belongs to; for a property, the accessor it lacks."""
    where = leaf_spelling(vocab, field)
    if where is not None:
        return f"read {where}{when}"
    if field in vocab.fields:
        return f"{namespace_hint(vocab, field)}; then read that leaf{when}"
    return (
        f"`{field}` is a property of the record with no bag leaf: {lacking_accessor(vocab)}{when}"
    )


def handed_reads(program: Program) -> HandedReads:
    """The run's answer, built once."""
    return program.memo(f"{KEY}:handed", lambda: HandedReads(program))
