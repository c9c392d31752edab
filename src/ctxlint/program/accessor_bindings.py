"""Where is an accessor name bound, called with arguments or used as a member,
and does each meet the runtime's accessor (CTX401 asks; its fixer renames them).

The walk (AccessorBindingVisitor, under CTX401's facts key) keeps every binding
of an accessor name (through the program's binding model), each member call or
binding of one, the imports of the runtime module, and whether ruff's F811 may
have something to say. `accessor_uses` answers once the whole program is known:
what an import target means (the runtime's accessor, possibly re-exported, by
the class index), which bindings collide with the module's accessor and which
stand apart, which calls with arguments call the accessor, and which member
uses find no method of that name (program.method_lookup).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts import ruff
from ctxlint.facts.context import FileContext, LineAnchor, import_bindings
from ctxlint.facts.typed import Site as FactSite
from ctxlint.facts.typed import Span
from ctxlint.facts.visitor import FileVisitor
from ctxlint.facts.vocab import Vocabulary
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.bindings import Bindings, Site
from ctxlint.program.classes import KEY as CLASSES
from ctxlint.program.classes import class_index
from ctxlint.program.core import Program
from ctxlint.program.holders import Holder, HolderKind
from ctxlint.program.method_lookup import (
    MemberReceiver,
    MethodLookup,
    defining,
    find_method,
    member_receiver,
)
from ctxlint.program.record_conventions import RECORDS, record_convention
from ctxlint.program.rule import Located

KEY = "CTX401"  # the rule whose facts these are


def accessor_names(vocab: Vocabulary) -> set[str]:
    """The runtime module's accessors. A seed accessor found in the record's module
    (a legacy `get_global_server_args`) is not a name the runtime module owns: a
    rival record's function of that name, or an import of the legacy one, is fine."""
    return {
        *vocab.bag_accessors,
        *(s for s in vocab.seed_accessors if s not in vocab.accessor_modules),
    }


@dataclass(frozen=True, slots=True)
class NameBinding:
    """A binding of an accessor name as a module or function name (program.bindings'
    Site kinds, and "late import": the runtime's accessor imported in a function
    below a call of it)."""

    name: str
    kind: str
    scope: str
    scope_kind: str  # module, function, comprehension
    snippet: str
    span: Span
    target: str | None = None  # an import's qualified target
    # a parameter's kind: "keyword-only", "positional-only" or "positional" (either)
    passing: str | None = None


@dataclass(frozen=True, slots=True)
class KeywordCall:
    """A call passing an accessor-named keyword (`EPLBManager(get_model=...)`):
    the callee's parameter of that name cannot be renamed alone."""

    callee: str  # what the called name resolves to (qualified)
    keyword: str
    line: int


@dataclass(frozen=True, slots=True)
class ArgsCall:
    """An accessor-named call with arguments."""

    name: str
    target: str | None  # what the called name resolves to
    local: bool  # called by its bare name
    chain: list[str]  # the enclosing functions, outermost first
    scope: str
    snippet: str
    span: Span


@dataclass(frozen=True, slots=True)
class MemberUse:
    """`recv.get_x` read (receiver set) or bound: as a member ("<kind> to an
    attribute"), on the runtime module ("monkeypatch"), as a "class attribute"
    or a "nested class"."""

    name: str
    kind: str
    scope: str
    snippet: str
    span: Span
    receiver: MemberReceiver | None = None


@dataclass(frozen=True, slots=True)
class RuntimeImport:
    """An import of the runtime's own accessor (kept only where ruff may report)."""

    name: str
    scope: str
    snippet: str
    span: Span


@dataclass(frozen=True, slots=True)
class AccessorFacts:
    bindings: list[NameBinding]
    calls: list[ArgsCall]
    members: list[MemberUse]
    imports: dict[str, str]  # module-level accessor-named import -> its target
    legit: list[RuntimeImport]
    ruff: bool  # an accessor name bound twice: ruff's F811 may report
    noqa: list[tuple[int, str]] = field(default_factory=list)  # ruff reads them
    # the names this module binds to the runtime's own accessor (anywhere in
    # it): a binding of another name is a collision only where they meet
    runtime_bound: list[str] = field(default_factory=list)
    class_attrs: dict[str, list[str]] = field(default_factory=dict)  # class -> those names
    # the runtime's accessors reached under another name (`import get_device as
    # get_device_namespace`) or through the runtime module (`rc.get_device()`):
    # qualified targets, followed through re-exports once the program is known
    reached: list[str] = field(default_factory=list)
    keyword_calls: list[KeywordCall] = field(default_factory=list)
    # the bag accessors whose fields this module reads off a record (a migration
    # pending: its rewrite imports that accessor), with the holder a record only
    # by the naming convention ("" for any other holder)
    pending: list[tuple[str, str]] = field(default_factory=list)


class AccessorBindingVisitor(FileVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        vocab = ctx.vocab
        assert vocab is not None
        self.names = accessor_names(vocab)
        self.runtime = vocab.runtime_module
        self.is_runtime = ctx.module == vocab.runtime_module
        self.bindings: list[NameBinding] = []
        self.calls: list[ArgsCall] = []
        self.members: list[MemberUse] = []
        self.imports: dict[str, str] = {}  # module-level accessor-named import -> target
        self.class_attrs: dict[str, list[str]] = {}  # class -> accessor-named attributes
        self.reached: set[str] = set()  # accessors reached by another spelling (targets)
        # record field -> its bag's accessor; the record reads of those fields
        tops = {ns: a for a, ns in vocab.bag_accessors.items()}
        self.field_bags = {f: tops.get(ns.partition(".")[0]) for f, ns in vocab.fields.items()}
        self.record_reads: list[tuple[str, Holder]] = []
        self.keyword_calls: list[KeywordCall] = []
        self._skip: set[int] = set()  # attribute nodes that are binding targets
        self._legit: list[tuple[cst.CSTNode, str, str]] = []  # runtime imports: node, name, scope
        self._counts: dict[str, int] = {}  # accessor name -> bindings of it (for F811)
        # function scope -> accessor names called before any local binding of them
        self._called: dict[str, set[str]] = {}
        self._bound_so_far: dict[str, set[str]] = {}  # function scope -> names bound so far
        self.model.watch(self.names, self._site)  # every binding of an accessor name

    @property
    def model(self) -> Bindings:
        return self.ctx.parts[BINDINGS]

    # -- bindings -------------------------------------------------------------
    def _site(self, site: Site) -> None:
        """A binding of an accessor name (program.bindings tells every one)."""
        name, scope, scope_kind = site.name.value, site.scope, site.scope_kind
        if scope_kind == "attribute":
            self._skip.add(id(site.node))
            self._member_binding(site.name, site.node or site.name, site.kind, site.receiver)
            return
        if scope_kind == "class":  # a class attribute or a nested class
            if not self.is_runtime:
                kind = "nested class" if site.kind == "class" else "class attribute"
                self._member_binding(site.name, site.name, kind, None)
                # the class declares the member: `self.<name>()` calls it
                owner = f"{self.ctx.module}.{scope}"
                if name not in self.class_attrs.setdefault(owner, []):
                    self.class_attrs[owner].append(name)
            return
        self._counts[name] = self._counts.get(name, 0) + 1
        if scope_kind == "function":
            self._bound_so_far.setdefault(scope, set()).add(name)
        if scope_kind == "module":  # the last module-level binding is what others import
            if site.target is not None:
                self.imports[name] = site.target
            else:
                self.imports.pop(name, None)
        if self.is_runtime:
            return
        if site.target == f"{self.runtime}.{name}":
            self._legit.append((site.node or site.name, name, scope))
            if scope_kind == "function" and name in self._called.get(scope, ()):
                # called above the function's first binding of the name (this
                # import): UnboundLocalError on that path
                self.bindings.append(self._fact(site, "late import", "function", quote=False))
            return
        self.bindings.append(self._fact(site, site.kind, scope_kind))

    def _fact(self, site: Site, kind: str, scope_kind: str, quote: bool = True) -> NameBinding:
        node = site.node if quote else None
        snippet = self.ctx.snippet(node) if node is not None else f"{kind} {site.name.value}"
        span = self.ctx.anchor(site.name)
        target = site.target if quote else None
        passing = _passing(self.ctx, site.node) if kind == "parameter" else None
        return NameBinding(
            site.name.value,
            kind,
            site.scope,
            scope_kind,
            snippet,
            span,  # type: ignore[arg-type]
            target,
            passing,
        )

    def _member_binding(
        self, name: cst.Name, node: cst.CSTNode, kind: str, receiver: cst.BaseExpression | None
    ) -> None:
        runtime = receiver is not None and self.ctx.resolve(receiver) == self.runtime
        self._member(name, node, "monkeypatch" if runtime else kind, None)

    def _member(
        self, name: cst.Name, node: cst.CSTNode, kind: str, recv: MemberReceiver | None
    ) -> None:
        ctx = self.ctx
        span = ctx.anchor(name)
        use = MemberUse(name.value, kind, ctx.qualname, ctx.snippet(node), span, recv)  # type: ignore[arg-type]
        self.members.append(use)

    # -- uses -----------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name):
            name = func.value
        elif isinstance(func, cst.Attribute):
            name = func.attr.value
        else:
            return
        for a in node.args:  # `EPLBManager(get_model=...)`: the callee's parameter
            if a.keyword is not None and a.keyword.value in self.names:
                callee = self.ctx.resolve(func) or ""
                line = self.ctx.anchor(a.keyword, LineAnchor)  # positions: only if any
                self.keyword_calls.append(KeywordCall(callee, a.keyword.value, line))  # type: ignore[arg-type]
        if name not in self.names:
            return
        chain = self.model.function_chain()
        if (
            chain
            and isinstance(func, cst.Name)
            and name not in self._bound_so_far.get(chain[0], ())
        ):
            self._called.setdefault(chain[0], set()).add(name)
        if node.args:
            ctx = self.ctx
            local = isinstance(func, cst.Name)
            call = ArgsCall(
                name,
                ctx.resolve(func),
                local,
                chain,
                ctx.qualname,
                ctx.snippet(node),
                ctx.anchor(node),  # type: ignore[arg-type]
            )
            self.calls.append(call)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if self.field_bags.get(node.attr.value) and not self.is_runtime:  # a record read?
            holder = self.ctx.records.holder(node.value)
            if holder is not None and holder.kind is not HolderKind.RECEIVER:
                self.record_reads.append((self.field_bags[node.attr.value], holder))  # type: ignore[arg-type]
        if node.attr.value not in self.names or id(node) in self._skip or self.model.importing:
            return
        recv = member_receiver(self.model, node.value)
        if recv.kind == "ref" and recv.name == self.runtime:  # the runtime's own
            self.reached.add(f"{self.runtime}.{node.attr.value}")
        else:
            self._member(node.attr, node, "member", recv)

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        """An accessor imported under another name (`get_device as get_device_namespace`)."""
        if self.is_runtime:
            return
        for local, target in import_bindings(node, self.ctx.module, self.ctx.is_package).items():
            name = target.rpartition(".")[2]
            if name in self.names and local != name:
                self.reached.add(target)

    # -- output ---------------------------------------------------------------
    def finish(self) -> AccessorFacts | None:
        ruff_candidate = any(n >= 2 for n in self._counts.values())
        legit: list[RuntimeImport] = []
        if ruff_candidate:  # spans only where ruff can report (positions cost a pass)
            ctx = self.ctx
            legit = [
                RuntimeImport(n, s, ctx.snippet(node), ctx.anchor(node))  # type: ignore[arg-type]
                for node, n, s in self._legit
            ]
        # ruff reads the noqa directives: an edit of one alone runs it again
        noqa = ruff.directives(self.ctx.text) if ruff_candidate else []
        found = self.bindings or self.calls or self.members or self.imports or legit
        pending = self._pending()
        if not (found or ruff_candidate or noqa or self.reached or self.keyword_calls):
            return None
        runtime_bound = sorted({n for _, n, _ in self._legit})
        return AccessorFacts(
            self.bindings,
            self.calls,
            self.members,
            self.imports,
            legit,
            ruff_candidate,
            noqa,
            runtime_bound,
            self.class_attrs,
            sorted(self.reached),
            self.keyword_calls,
            pending,
        )

    def _pending(self) -> list[tuple[str, str]]:
        """The record reads of a bag whose accessor name this module imports from
        elsewhere (only those can meet it): (accessor, conventional holder name)."""
        named = {b.name for b in self.bindings if b.kind == "import"}
        out: set[tuple[str, str]] = set()
        for accessor, holder in self.record_reads:
            if accessor in named:
                h = Holder.of_fact(self.ctx.records.settle(holder.fact()))
                conventional = h.kind in (HolderKind.NAME, HolderKind.ATTR)
                out.add((accessor, (h.name or "") if conventional else ""))
        return sorted(out)


def _passing(ctx: FileContext, param: cst.CSTNode | None) -> str | None:
    """How a caller passes the parameter `param` of the function being entered:
    "keyword-only", "positional-only" or "positional" (by position or keyword)."""
    fn = ctx.scope.node
    if not isinstance(param, cst.Param) or not isinstance(fn, cst.FunctionDef):
        return None
    params = fn.params
    if any(p is param for p in params.kwonly_params):
        return "keyword-only"
    if any(p is param for p in params.posonly_params):
        return "positional-only"
    return "positional" if any(p is param for p in params.params) else None


# -- the whole program ----------------------------------------------------------
@dataclass(slots=True)
class FileUses:
    """One module's accessor-name bindings, calls with arguments and member uses
    that meet the runtime's accessor; what meets none is `apart`."""

    bindings: list[tuple[NameBinding, bool]]  # and: shadows an imported accessor
    calls: list[ArgsCall]  # calls of the runtime's accessor, with arguments
    members: list[tuple[MemberUse, MethodLookup | None]]  # None: a member binding
    apart: list[str]  # "path:line snippet" of the bindings that meet no accessor
    # a parameter binding -> the calls passing it by keyword ("path:line")
    keyword_callers: dict[int, list[str]] = field(default_factory=dict)


class AccessorUses:
    """The accessor names' bindings and uses over the program (once per Program)."""

    def __init__(self, program: Program) -> None:
        vocab = program.vocab
        self.names = accessor_names(vocab)
        self.index = class_index(program)
        self.runtime = vocab.runtime_module
        # accessor -> the bag it answers ("seed record" for the seed accessors)
        self.bags = {
            **dict(vocab.bag_accessors),
            **{s: "seed record" for s in vocab.seed_accessors},
        }
        facts = list(program.typed_facts(KEY, AccessorFacts))
        self.files = [(p, f) for p, _, f in facts]
        self.modules = {p: m for p, m, _ in facts}
        self.convention = record_convention(program)
        # callee (qualified) -> keyword -> the calls passing it ("path:line")
        self.keyword_calls: dict[str, dict[str, list[str]]] = {}
        for p, _, f in facts:
            for k in f.keyword_calls:
                at = self.keyword_calls.setdefault(k.callee, {}).setdefault(k.keyword, [])
                at.append(f"{p}:{k.line}")
        # class -> the accessor-named attributes its body declares (a field
        # holding a callable: `get_model: Callable[[], nn.Module]`)
        self.class_attrs: dict[str, set[str]] = {}
        for _, facts in self.files:
            for cls, names in facts.class_attrs.items():
                self.class_attrs.setdefault(cls, set()).update(names)

    def is_accessor(self, target: str) -> bool:
        """Whether an import target is the runtime's accessor (possibly re-exported)."""
        runtime = self.runtime
        return self.index.follow(target, lambda n: n.rpartition(".")[0] == runtime) is not None

    def defining(self) -> dict[str, list[str]]:
        """Accessor name -> the tree's classes defining a method of that name."""
        return defining(self.index, self.names)

    def reexports(self) -> list[str]:
        """Re-exports actually imported from: `from pkg import get_exec` where pkg
        imports the runtime's accessor."""
        return sorted(
            {
                b.target
                for _, f in self.files
                for b in f.bindings
                if b.kind == "import"
                and b.target is not None
                and b.target.rpartition(".")[0] != self.runtime
                and self.is_accessor(b.target)
            }
        )

    def ruff_candidates(self) -> list[str]:
        """The files binding an accessor name twice: where ruff's F811 may report."""
        return sorted(p for p, f in self.files if f.ruff)

    def f811_sites(
        self, hits: list[ruff.F811], taken: set[tuple[str, int]]
    ) -> Iterator[tuple[ruff.F811, Located]]:
        """Each of ruff's F811 hits at a line `taken` (path, line) does not hold, once
        a line, with where it is told: the import of the runtime's accessor, or
        else the binding of an accessor name, at that line (or the hit itself)."""
        taken = set(taken)
        for hit in hits:
            if (hit.path, hit.row) in taken or self._one_object(hit):
                continue
            taken.add((hit.path, hit.row))
            yield hit, self._site_at(hit)

    def _one_object(self, hit: ruff.F811) -> bool:
        """Every binding of the name in the file is the runtime's accessor of that
        name (imported from the runtime module or through a re-export of it): the
        redefinition binds the same object, so the name keeps one meaning, which
        is not the design's two-meanings hazard (ruff's F811 hygiene stays ruff's)."""
        name = hit.name
        accessor = f"{self.runtime}.{name}"
        for p, facts in self.files:
            if p != hit.path:
                continue
            others = [b for b in facts.bindings if b.name == name]
            if not any(lg.name == name and lg.span[0] == hit.row for lg in facts.legit) and not any(
                b.span[0] == hit.row for b in others
            ):
                return False  # ruff's line is no binding the facts know
            return all(
                b.kind in ("import", "late import")
                and b.target is not None
                and self.index.follow(b.target, accessor.__eq__) is not None
                for b in others
            )
        return False

    def _site_at(self, hit: ruff.F811) -> Located:
        for p, facts in self.files:
            if p == hit.path:
                site = next((lg for lg in facts.legit if lg.span[0] == hit.row), None)
                site = site or next((b for b in facts.bindings if b.span[0] == hit.row), None)
                if site is not None:
                    return site
        span = [hit.row, hit.col, hit.row, hit.col]
        return FactSite("<module>", f"ruff F811 {hit.name}", span)

    def uses(self, path: str, facts: AccessorFacts) -> FileUses:
        """One module's uses (see FileUses)."""
        out = FileUses([], [], [], [])
        imported = {n for n, t in facts.imports.items() if self.is_accessor(t)}
        meets = self._runtime_bound(facts)
        reached = meets | self._reached(path, facts)
        for b in facts.bindings:
            target = b.target or ""
            to_accessor = b.kind == "import" and self.is_accessor(target)
            if to_accessor and b.name == target.rpartition(".")[2]:
                continue  # a re-export of the runtime's own accessor
            if not to_accessor and not _collides(b, meets, reached):
                out.apart.append(f"{path}:{b.span[0]} {b.snippet}")
                continue
            if b.passing is not None:
                callers = self.keyword_callers(self.modules.get(path, ""), b)
                if callers:
                    out.keyword_callers[id(b)] = callers
            out.bindings.append((b, b.name in imported))
        shadowed = {
            (b.name, b.scope)
            for b in facts.bindings
            if b.scope_kind == "function" and b.kind != "late import"
        }
        for c in facts.calls:
            if c.local and any((c.name, s) in shadowed for s in c.chain):
                continue  # a local of that name, reported as its binding
            target = c.target or ""
            if target.endswith(f".{c.name}") and self.is_accessor(target):
                out.calls.append(c)
        for m in facts.members:
            if m.receiver is None:  # a member binding
                if m.kind != "monkeypatch" and m.name not in meets:
                    out.apart.append(f"{path}:{m.span[0]} {m.snippet}")
                else:
                    out.members.append((m, None))
                continue
            found = find_method(self.index, m.receiver, m.name)
            if not (
                found.found or any(m.name in self.class_attrs.get(c, ()) for c in found.classes)
            ):
                # (a class declaring the attribute, a field holding a callable: the
                # use calls it, and the field's binding is the finding, where it collides)
                out.members.append((m, found))
        return out

    def _reached(self, path: str, facts: AccessorFacts) -> set[str]:
        """The accessor names this module reaches by another spelling (imported
        under another name, called through the runtime module), or will once its
        record reads of that bag migrate (the fix imports the accessor)."""
        out = set()
        for target in facts.reached:
            if self.is_accessor(target):
                out.add(target.rpartition(".")[2])
        module = self.modules.get(path, "")
        convention = self.convention
        for accessor, name in facts.pending:
            if not name or convention.holds(name, module):
                out.add(accessor)
        return out

    def keyword_callers(self, module: str, b: NameBinding) -> list[str]:
        """The calls passing the parameter `b` by keyword: calls of its function, or
        of its class where the function is `__init__` (re-exports followed)."""
        if b.passing not in ("keyword-only", "positional"):
            return []
        func = f"{module}.{b.scope}"
        owner, _, last = func.rpartition(".")
        wanted = {func, owner} if last == "__init__" else {func}
        out: list[str] = []
        for callee, keywords in self.keyword_calls.items():
            if b.name in keywords and self.index.follow(callee, wanted.__contains__):
                out += keywords[b.name]
        return sorted(out)

    def _runtime_bound(self, facts: AccessorFacts) -> set[str]:
        """The accessor names this module binds to the runtime's own accessor: an
        import of it (directly or through a re-export) under its own name."""
        bound = set(facts.runtime_bound)
        for b in facts.bindings:
            target = b.target or ""
            if b.kind == "import" and b.name == target.rpartition(".")[2]:
                if self.is_accessor(target):
                    bound.add(b.name)
        return bound


def _collides(b: NameBinding, meets: set[str], reached: set[str]) -> bool:
    """Whether a binding of an accessor name meets the runtime's accessor of that
    name: the module binds that accessor too, or (for a same-named import, the
    design's "same-named import next to the bag one") reaches it by any
    spelling: SGLang 0.5.23's expert_distribution.py imports the device bag as
    `get_device_namespace` beside `utils.get_device`, so there `get_device` is
    not the bag in a module that reads the bag. An import in a module reading
    only other bags meets nothing (F811 stays silent); it is listed apart."""
    return b.name in meets or (b.kind == "import" and b.name in reached)


def binding_message(
    b: NameBinding, runtime: str, bag: str, imported: bool, callers: list[str]
) -> tuple[str, str]:
    """CTX401's message for a binding of an accessor name, and its details (the
    remedy where it needs more than the message holds); `imported`: it shadows
    the module's import of the accessor; `callers`: the calls passing it by
    keyword, for a parameter."""
    name, kind = b.name, b.kind
    means = f"the accessor name means `{runtime}.{name}` (the process-wide {bag})"
    if kind == "late import":
        return (
            f"`{name}` is used above its function-local import: inside the function the name "
            "is local throughout, so that use raises UnboundLocalError; import it once at "
            "module level"
        ), ""
    if kind == "import":
        return f"`{name}` imported from `{b.target}`: {means}", (
            "import the other one under another name, so that the accessor's name means the "
            "accessor here"
        )
    if b.passing is not None:  # a parameter binds on entry: its remedy is its callers'
        what = f"`{name}` is a parameter of `{b.scope}`"
        if imported:
            what += " and shadows the imported accessor: every use there is it"
        else:
            what += f": {means}"
        keyword = " with its callers' keyword" if callers or b.passing == "keyword-only" else ""
        return f"{what}; rename the parameter{keyword}", _parameter_remedy(b, callers)
    if b.scope_kind == "function" and imported:
        return (
            f"`{name}` bound by {kind} in `{b.scope}` shadows the imported accessor: a use "
            "above the binding raises UnboundLocalError"
        ), f"every use of `{name}` in that function is the local: rename the local"
    where = "in the module" if b.scope_kind == "module" else f"in `{b.scope}`"
    return f"`{name}` bound by {kind} {where}: {means}", (
        "the accessor name is bound once per module: rename this"
    )


def _parameter_remedy(b: NameBinding, callers: list[str]) -> str:
    """From how the parameter is passed: by keyword (a keyword-only one always;
    otherwise where a call does), renaming it takes its callers' keyword too."""
    name = b.name
    other = f"or import the accessor under another name (`{name} as ...`) and keep the parameter"
    if callers:
        more = f" and {len(callers) - 2} more" if len(callers) > 2 else ""
        return (
            f"callers pass it by keyword (`{name}=` at {', '.join(callers[:2])}{more}), so "
            f"renaming the parameter alone raises TypeError there: rename it with their "
            f"keyword, {other}"
        )
    if b.passing == "keyword-only":
        return f"it is keyword-only, so callers pass `{name}=`: rename it with them, {other}"
    if b.passing == "positional-only":
        return "rename the parameter (positional-only: no caller names it)"
    return f"rename the parameter (and any caller's `{name}=` keyword), {other}"


def accessor_uses(program: Program) -> AccessorUses:
    # its facts, the class index's and the record conventions'
    reads = (KEY, CLASSES, RECORDS)
    return program.memo("accessor uses", lambda: AccessorUses(program), reads)


def method_classes(program: Program) -> set[str]:
    """The simple names of the classes defining an accessor-named method and of
    their subclasses: a subclass lives in a file that names its base, and parsing
    the files naming them completes the inheritance chains."""
    index = class_index(program)
    definers = {q for qs in defining(index, accessor_names(program.vocab)).values() for q in qs}
    definers |= {s for q in list(definers) for s in index.subclasses(q)}
    return {q.rpartition(".")[2] for q in definers}
