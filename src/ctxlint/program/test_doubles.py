"""What test code replaces or stands in for, and what the runtime offers it
(asked by CTX402).

Per file (`DoubleVisitor`): the bindings it replaces (`mod.get_exec = ...`,
`setattr`/`monkeypatch.setattr`, `mock.patch("a.b.get_exec")`, `patch.object`)
and whether the replacement only raises (a tripwire), the config stand-ins it
builds (a `SimpleNamespace`, a `Mock`/`MagicMock` without the record class as
its spec, a dict) and where it puts each (a runtime function's argument, a
keyword, an attribute, a name), the records it builds by hand for a runtime
function (and whether the function resets the context in a `finally` after
publishing it), and what it binds from the runtime module. In the runtime
module: its public functions callable with no argument (and which return
something), and the functions that take a record.

Over the program (`Doubles`): the runtime accessors (the vocabulary's seed,
bag and legacy accessors, and the tiers' accessors the program model names:
`get_flags`, `get_forward`, `get_resources`, `get_context`), which patch
target replaces one (the runtime's binding or a module's import of it), the
runtime's reset (`reset_context`, the design's teardown), the runtime
functions taking a record (annotated so, or a parameter named by the record
convention) and the test files (program/test_code).
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, dotted, string_value
from ctxlint.facts.typed import Site, site
from ctxlint.facts.visitor import FileVisitor
from ctxlint.program import flags_tier, forward_flags, manager_owned, resource_leases
from ctxlint.program.core import Program
from ctxlint.program.record_conventions import record_convention
from ctxlint.program.test_code import is_test_file

# the standard library's stand-ins (and the `mock` backport's spelling of them)
STAND_INS = {
    "types.SimpleNamespace": "SimpleNamespace",
    **{f"{m}.{c}": c for m in ("unittest.mock", "mock") for c in ("Mock", "MagicMock")},
    **{
        f"{m}.NonCallable{c}": f"NonCallable{c}"
        for m in ("unittest.mock", "mock")
        for c in ("Mock", "MagicMock")
    },
}
PATCHERS = {"unittest.mock.patch", "mock.patch"}
PATCH_OBJECT = {"unittest.mock.patch.object", "mock.patch.object"}
# the tiers' accessors besides the seed and the bags: the fixed names the program
# model gives them (each counts only where the runtime module defines it)
TIER_ACCESSORS = (
    flags_tier.ACCESSOR,
    forward_flags.ACCESSOR,
    resource_leases.ACCESSOR,
    manager_owned.CONTEXT,
)
# the design's teardown: drops the published config, so every accessor fails closed
RESET = "reset_context"
# the runtime's publishing test override (a method of its context): what a test
# kit's own publishing helper could be replaced by, where it takes the same
OVERRIDE = "override_server_args"


def _builtin_exception(name: str) -> bool:
    found = getattr(builtins, name, None)
    return isinstance(found, type) and issubclass(found, BaseException)


def _returns_value(fn: cst.FunctionDef) -> bool:
    if fn.returns is not None:
        return dotted(fn.returns.annotation) != "None"
    body = fn.body.body if isinstance(fn.body, cst.IndentedBlock) else ()
    return any(
        isinstance(small, cst.Return) and small.value is not None
        for stmt in body
        if isinstance(stmt, cst.SimpleStatementLine)
        for small in stmt.body
    )


def _only_raises(fn: cst.FunctionDef) -> bool:
    """The body is one `raise` (after a docstring): a tripwire, not a stand-in."""
    if isinstance(fn.body, cst.IndentedBlock):
        lines = list(fn.body.body)
        if lines and _docstring(lines[0]):
            lines = lines[1:]
        if len(lines) != 1 or not isinstance(lines[0], cst.SimpleStatementLine):
            return False
        small = lines[0].body
    else:
        small = fn.body.body  # `def f(): raise X`
    return len(small) == 1 and isinstance(small[0], cst.Raise) and small[0].exc is not None


def _docstring(stmt: cst.BaseStatement) -> bool:
    if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
        return False
    first = stmt.body[0]
    return isinstance(first, cst.Expr) and isinstance(
        first.value, (cst.SimpleString, cst.ConcatenatedString)
    )


def _keyword(call: cst.Call, name: str) -> cst.BaseExpression | None:
    return next((a.value for a in call.args if a.keyword and a.keyword.value == name), None)


def _replacement(patch: cst.Call) -> cst.BaseExpression | None:
    """What a `mock.patch`/`patch.object` call says replaces the target, by keyword:
    `new=...`, else a raising `side_effect=...` makes the patched mock a tripwire."""
    return _keyword(patch, "new") or _keyword(patch, "side_effect")


def _calls_under(node: cst.CSTNode, calls: dict[int, cst.Call]) -> None:
    """Add the calls under `node` to `calls`, by identity (the facts' own walk:
    a CSTVisitor subclass here would import LibCST with the module)."""
    from ctxlint.facts.walk import walk  # LibCST: only once a file is walked

    def visit(n: cst.CSTNode) -> None:
        if type(n) is cst.Call:
            calls[id(n)] = n  # type: ignore[assignment]

    walk(node, visit, _nothing)


def _nothing(_node: cst.CSTNode) -> None:
    return None


@dataclass(frozen=True, slots=True)
class RecordTaker:
    """A public function of the runtime module, and whether it takes a record."""

    name: str
    annotated: bool  # a parameter annotated with the record class
    params: tuple[str, ...]  # its unannotated parameters (a record by the convention?)
    optional: tuple[str, ...] = ()  # its parameters with a default (`ranks=None`)


@dataclass(frozen=True, slots=True)
class Patch:
    """A binding replaced: `target` (qualified) by `form` ("assignment", "setattr"...);
    `raises`: the replacement only raises (a tripwire asserting it is never called)."""

    target: str
    form: str
    site: Site
    raises: bool = False


@dataclass(frozen=True, slots=True)
class StandIn:
    """A config stand-in (`kind`: "dict", "SimpleNamespace", "Mock"...) put in `slot`:
    "call <runtime function>", "keyword <name>", "attribute <name>", "name <name>"."""

    kind: str
    slot: str
    site: Site


@dataclass(frozen=True, slots=True)
class ByHand:
    """A record built by hand, handed to the runtime function `callee`; `scoped`:
    before or inside a `try` of the same function whose `finally` calls the
    runtime's reset (the scoped publishing wrapper a test kit offers);
    `fields_handed`: built from the function's own `**` parameter (its callers
    hand it fields, not a record); `keywords`: what the call passes by keyword."""

    callee: str
    site: Site
    scoped: bool = False
    fields_handed: bool = False
    keywords: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class DoubleFacts:
    accessors: tuple[str, ...] = ()  # the runtime module's: zero-argument, returning
    no_argument: tuple[str, ...] = ()  # the runtime module's: callable with no argument
    record_takers: tuple[RecordTaker, ...] = ()  # the runtime module's functions
    patches: tuple[Patch, ...] = ()
    stand_ins: tuple[StandIn, ...] = ()
    by_hand: tuple[ByHand, ...] = ()
    # what the module binds from the runtime: local name -> qualified target
    runtime_imports: dict[str, str] = field(default_factory=dict)
    # the runtime's publishing test override's named parameters (None: it has none)
    override_params: tuple[str, ...] | None = None


class DoubleVisitor(FileVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        vocab = ctx.vocab
        assert vocab is not None
        self.runtime = vocab.runtime_module
        self.is_runtime = ctx.module == vocab.runtime_module
        self.accessors: list[str] = []  # the runtime module's: zero-argument, returning
        self.no_argument: list[str] = []  # the runtime module's: callable with no argument
        self.record_takers: list[RecordTaker] = []  # the runtime module's functions
        self.patches: list[Patch] = []
        self.stand_ins: list[StandIn] = []
        self.by_hand: list[ByHand] = []
        self.raising: set[tuple[str, str]] = set()  # (scope, name) of functions only raising
        # a replacement named by a bare name: (patch index, the scopes it may be defined in)
        self.named: list[tuple[int, tuple[str, ...], str]] = []
        self.scoped_calls: dict[int, set[int]] = {}  # function node -> calls a reset scopes
        self.override_params: tuple[str, ...] | None = None

    def _imported(self, expr: cst.BaseExpression) -> str | None:
        """The qualified name of `a.b` when its head is imported (a module), else None."""
        name = dotted(expr)
        if name is None:
            return None
        head = name.partition(".")[0]
        if head in self.ctx.imports or any(head in s.imports for s in self.ctx.scopes[1:]):
            return self.ctx.resolve(expr)
        return None

    def _stand_in(self, expr: cst.BaseExpression) -> str | None:
        """What kind of config stand-in `expr` builds, or None."""
        if isinstance(expr, cst.Dict):
            return "dict"
        if not isinstance(expr, cst.Call) or not isinstance(expr.func, (cst.Name, cst.Attribute)):
            return None
        if isinstance(expr.func, cst.Name) and expr.func.value == "dict":
            return None if self._imported(expr.func) else "dict"  # the builtin, unless rebound
        kind = STAND_INS.get(self.ctx.resolve(expr.func) or "")
        if kind is None or kind == "SimpleNamespace":
            return kind
        record = self.ctx.vocab.record_class if self.ctx.vocab else ""
        for i, arg in enumerate(
            expr.args
        ):  # a mock specced by the record class is the record's shape
            spec = (arg.keyword is None and i == 0) or (
                arg.keyword is not None and arg.keyword.value in ("spec", "spec_set")
            )
            if spec and isinstance(arg.value, (cst.Name, cst.Attribute)):
                if self.ctx.resolve(arg.value) == record:
                    return None
        return kind

    def _built_record(self, expr: cst.BaseExpression) -> bool:
        rec = self.ctx.records
        if rec.is_construction(expr):
            return True
        return isinstance(expr, cst.Name) and rec.is_construction(rec.copied_from(expr.value))

    # -- the runtime module's own functions ---------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if _only_raises(node):
            self.raising.add((self.ctx.scopes[-2].qualname, node.name.value))
        params = node.params
        positional = [*params.posonly_params, *params.params, *params.kwonly_params]
        if self.is_runtime and node.name.value == OVERRIDE and self.ctx.enclosing_class():
            self.override_params = tuple(p.name.value for p in positional[1:])  # not self
        if not self.is_runtime or len(self.ctx.scopes) != 2 or node.name.value.startswith("_"):
            return
        if all(p.default is not None for p in positional):
            self.no_argument.append(node.name.value)
            if _returns_value(node):
                self.accessors.append(node.name.value)
        # parameters that take a record: annotated so, or (decided once the
        # codebase's convention is known) named so
        rec = self.ctx.records
        annotated = any(
            p.annotation is not None and rec.is_record_annotation(p.annotation.annotation)
            for p in positional
        )
        plain = tuple(p.name.value for p in positional if p.annotation is None)
        optional = tuple(p.name.value for p in positional if p.default is not None)
        self.record_takers.append(RecordTaker(node.name.value, annotated, plain, optional))

    # -- replaced bindings ----------------------------------------------------------
    def _replaced(
        self, target: str, form: str, where: cst.CSTNode, new: cst.BaseExpression | None
    ) -> None:
        """A patch of `target`; `new`: what replaces it, when the patch says."""
        raises = False
        if new is not None:
            raises = self._raising(new)
            if isinstance(new, cst.Name) and not raises:  # a def later in an outer scope
                scopes = tuple(s.qualname for s in self.ctx.scopes)
                self.named.append((len(self.patches), scopes, new.value))
        self.patches.append(Patch(target, form, site(self.ctx, where), raises))

    def _raising(self, expr: cst.BaseExpression) -> bool:
        """`expr` only raises when called: a function whose body is one `raise`, an
        exception (`side_effect=AssertionError`), or a mock with such a side effect."""
        if isinstance(expr, cst.Name):
            if any((s.qualname, expr.value) in self.raising for s in self.ctx.scopes):
                return True
            return _builtin_exception(expr.value) and self._imported(expr) is None
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name):
            if _builtin_exception(expr.func.value) and self._imported(expr.func) is None:
                return True  # an exception instance handed as a side effect
        if isinstance(expr, cst.Call) and STAND_INS.get(self.ctx.resolve(expr.func) or ""):
            effect = _keyword(expr, "side_effect")
            return effect is not None and self._raising(effect)
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            if isinstance(t.target, cst.Attribute):
                q = self._imported(t.target)
                if q is not None:
                    self._replaced(q, "assignment", t.target, node.value)
        kind = self._stand_in(node.value)
        if kind is None:
            return
        for t in node.targets:
            if isinstance(t.target, cst.Attribute):
                slot = f"attribute {t.target.attr.value}"
            elif isinstance(t.target, cst.Name):
                slot = f"name {t.target.value}"
            else:
                continue
            self.stand_ins.append(StandIn(kind, slot, site(self.ctx, node.value)))

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, (cst.Name, cst.Attribute)):
            return
        last = func.value if isinstance(func, cst.Name) else func.attr.value
        args = [a for a in node.args if not a.star]
        positional = [a.value for a in args if a.keyword is None]
        if last == "setattr" and len(positional) >= 2:
            self._setattr(node, positional)
        elif last in ("patch", "object") and positional:
            self._patch(node, func, positional)
        q = self.ctx.resolve(func) or ""
        runtime_call = q.rpartition(".")[0] == self.runtime
        for a in args:
            if not (runtime_call or a.keyword is not None):
                continue
            kind = self._stand_in(a.value)
            if kind is not None:
                slot = f"call {q}" if runtime_call else f"keyword {a.keyword.value}"  # type: ignore[union-attr]
                self.stand_ins.append(StandIn(kind, slot, site(self.ctx, a.value)))
            elif runtime_call and self._built_record(a.value):
                keywords = tuple(k.keyword.value for k in args if k.keyword is not None)
                handed = self._fields_handed(a.value)
                where = site(self.ctx, node)
                self.by_hand.append(ByHand(q, where, self._scoped(node), handed, keywords))

    def _fields_handed(self, expr: cst.BaseExpression) -> bool:
        """The record is built from the enclosing function's own `**` parameter
        (`ServerArgs(model_path="dummy", **fields)`, directly or through a local)."""
        built = self.ctx.records.copied_from(expr.value) if isinstance(expr, cst.Name) else expr
        fn = self.ctx.scope.node if self.ctx.scope.kind == "function" else None
        if not isinstance(built, cst.Call) or not isinstance(fn, cst.FunctionDef):
            return False
        star = fn.params.star_kwarg
        name = star.name.value if isinstance(star, cst.Param) else None
        return any(
            a.star == "**" and isinstance(a.value, cst.Name) and a.value.value == name
            for a in built.args
        )

    def _scoped(self, call: cst.Call) -> bool:
        """`call` runs before or inside a `try` of its function (a statement of the
        function's own body) whose `finally` calls the runtime's reset."""
        fn = self.ctx.scope.node if self.ctx.scope.kind == "function" else None
        if not isinstance(fn, cst.FunctionDef) or not isinstance(fn.body, cst.IndentedBlock):
            return False
        if id(fn) not in self.scoped_calls:
            calls: dict[int, cst.Call] = {}
            for stmt in fn.body.body:
                _calls_under(stmt, calls)
                if isinstance(stmt, cst.Try) and self._resets(stmt.finalbody):
                    break
            else:
                calls.clear()  # no reset in a `finally`: nothing is scoped
            self.scoped_calls[id(fn)] = set(calls)
        return id(call) in self.scoped_calls[id(fn)]

    def _resets(self, final: cst.Finally | None) -> bool:
        """A `finally` calling the runtime's reset (any import spelling)."""
        if final is None:
            return False
        calls: dict[int, cst.Call] = {}
        _calls_under(final, calls)
        reset = f"{self.runtime}.{RESET}"
        return any(
            isinstance(c.func, (cst.Name, cst.Attribute)) and self.ctx.resolve(c.func) == reset
            for c in calls.values()
        )

    def _setattr(self, node: cst.Call, positional: list[cst.BaseExpression]) -> None:
        first, name = positional[0], string_value(positional[1])
        if name is not None:  # setattr(mod, "get_exec", ...) / monkeypatch.setattr(mod, ...)
            q = self._imported(first)
            if q is not None:
                new = positional[2] if len(positional) >= 3 else None
                self._replaced(f"{q}.{name}", "setattr", node, new)
            elif len(positional) >= 3:
                kind = self._stand_in(positional[2])
                if kind is not None:
                    where = site(self.ctx, positional[2])
                    self.stand_ins.append(StandIn(kind, f"attribute {name}", where))
            return
        dotted_target = string_value(first)  # monkeypatch.setattr("pkg.mod.get_exec", ...)
        if dotted_target is not None and "." in dotted_target:
            self._replaced(dotted_target, "setattr", node, positional[1])

    def _patch(
        self, node: cst.Call, func: cst.BaseExpression, positional: list[cst.BaseExpression]
    ) -> None:
        q = self.ctx.resolve(func) or ""
        mocker = (dotted(func) or "").endswith(("mocker.patch", "mocker.patch.object"))
        if q in PATCHERS or (mocker and not q.endswith(".object")):
            target = string_value(positional[0])
            if target is not None and "." in target:
                new = positional[1] if len(positional) >= 2 else _replacement(node)
                self._replaced(target, "patch", node, new)
        elif (q in PATCH_OBJECT or mocker) and len(positional) >= 2:
            name = string_value(positional[1])
            owner = self._imported(positional[0])
            if name is not None and owner is not None:
                new = positional[2] if len(positional) >= 3 else _replacement(node)
                self._replaced(f"{owner}.{name}", "patch.object", node, new)

    def finish(self) -> DoubleFacts | None:
        # what this module binds from the runtime (a patched consumer's accessor names)
        runtime_names = {
            local: target
            for local, target in self.ctx.imports.items()
            if target.rpartition(".")[0] == self.runtime
        }
        if not (self.is_runtime or self.patches or self.stand_ins or self.by_hand or runtime_names):
            return None
        for i, scopes, name in self.named:  # a raising def below the patch, in an outer scope
            if any((s, name) in self.raising for s in scopes):
                self.patches[i] = replace(self.patches[i], raises=True)
        return DoubleFacts(
            tuple(self.accessors),
            tuple(self.no_argument),
            tuple(self.record_takers),
            tuple(self.patches),
            tuple(self.stand_ins),
            tuple(self.by_hand),
            runtime_names,
            self.override_params,
        )


class Doubles:
    """The sets a check of test doubles runs over, all from the code (the facts
    under `key`) and the configuration (the test roots)."""

    def __init__(self, program: Program, key: str, roots: list[str]) -> None:
        vocab = program.vocab
        self.program = program
        self.key = key
        runtime = DoubleFacts()
        imports: dict[str, dict[str, str]] = {}
        for _, module, facts in self.facts():
            if module == vocab.runtime_module:
                runtime = facts
            if facts.runtime_imports:
                imports[module] = facts.runtime_imports
        # the accessors as the rest of the model knows them: the vocabulary's seed and
        # bag accessors, its legacy ones the runtime defines, and the other tiers'
        # accessors; never any other zero-argument function (`publish_role()` is a
        # role query, a derived helper is not a tier)
        rt = vocab.runtime_module
        own = set(runtime.accessors)
        self.accessors = {vocab.qualified(a) for a in (*vocab.seed_accessors, *vocab.bag_accessors)}
        self.accessors |= {f"{rt}.{a}" for a in TIER_ACCESSORS if a in own}
        self.accessors |= {f"{rt}.{a}" for a in own} & set(vocab.legacy_accessors)
        # the runtime's reset, where it defines one callable with no argument
        self.reset = RESET if RESET in runtime.no_argument else None
        self.imports = imports
        self.convention = record_convention(program)
        self.record_names = self.convention.names
        self.record_takers = {
            f"{vocab.runtime_module}.{f.name}"
            for f in runtime.record_takers
            if f.annotated or set(f.params) & self.record_names
        }
        # per record taker, the optional parameters the publishing test override
        # cannot carry (`publish(..., ranks=...)` beside `override_server_args(**fields)`)
        takes = set(runtime.override_params or ())
        self.beyond_override = {
            f"{vocab.runtime_module}.{f.name}": set(f.optional) - takes
            for f in runtime.record_takers
            if runtime.override_params is not None
        }
        # by convention over every checked file: the set does not move when another
        # rule's tokens make more files parsed (a test file with none of this rule's
        # tokens has nothing to report)
        self.test_files = sorted(p for p in program.paths if is_test_file(p, roots))

    def kit_seam(self, h: ByHand) -> bool:
        """A test kit's publishing seam: a record published by hand that is not the
        test's own. Either the scoped wrapper (reset in a `finally`), or a helper
        whose callers hand it fields (`**` parameter) and that passes what the
        override cannot carry (`ranks=`): the override cannot replace it."""
        if h.scoped and self.reset:
            return True
        return h.fields_handed and bool(set(h.keywords) & self.beyond_override.get(h.callee, set()))

    def accessor(self, target: str) -> str | None:
        """The runtime accessor a patch target replaces: the runtime's own binding,
        or a module's import of it."""
        if target in self.accessors:
            return target
        module, _, name = target.rpartition(".")
        bound = self.imports.get(module, {}).get(name)
        return bound if bound in self.accessors else None

    def accessor_names(self) -> set[str]:
        return {q.rpartition(".")[2] for q in self.accessors}

    def facts(self) -> Iterator[tuple[str, str, DoubleFacts]]:
        return self.program.typed_facts(self.key, DoubleFacts)

    def patched_modules(self) -> set[str]:
        """The modules a patch replaces an accessor-named binding in (their
        imports tell whether the name is the runtime's)."""
        names = self.accessor_names()
        out = set()
        for _, _, facts in self.facts():
            for p in facts.patches:
                module, _, name = p.target.rpartition(".")
                if name in names and module:
                    out.add(f"module:{module}")
        return out
