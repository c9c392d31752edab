"""Where code leases a named stream or buffer from the runtime's resources tier,
and from which subsystem (asked by CTX701).

The tier is the class the runtime module's `get_resources()` is annotated to
return; its *registries* are the attributes its methods (or the runtime
module's, through `<x>.resources`) store into keyed by their first parameter
(`self.streams[name] = ...`): those methods are the *lease methods*, and the
runtime module's functions that store so or hand their first parameter to a
lease method are the *lease functions*. A *lease site* is a call, outside the
runtime module, of a lease function or of a lease method on a runtime
accessor's result, with its registry and its name argument (a literal, a
module constant bound once to one, or a string built from a literal prefix:
`f"k3_symm:{name}"` is the name `k3_symm:{…}`, the prefix naming the role). A module's *subsystem* is its package one
level below the root (the runtime module's package for the modules inside it,
else the module's top-level package).

`LeaseVisitor` gathers a file's facts (and, as a `CaptureVisitor`, its graph
capture blocks); `Leases` answers from them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.annotations import parse_string
from ctxlint.facts.context import FileContext, dotted, string_value
from ctxlint.facts.typed import Span
from ctxlint.program.callees import function_key
from ctxlint.program.core import Program
from ctxlint.program.graph_capture import Capture, CaptureBlock, CaptureVisitor, Reached

# The resources tier's accessor (the design's `get_resources()`): a fixed name,
# because per-file facts are keyed by content and vocabulary, not by config.
ACCESSOR = "get_resources"
SLOT = "resources"  # the tier's slot on the runtime context (`ctx.resources`)


PREFIXED = "{…}"  # stands for the computed rest of a name with a literal prefix


def _prefix(expr: cst.BaseExpression) -> tuple[str, bool]:
    """The literal text a string expression starts with, and whether that is
    all of it: `f"a_{x}"` -> ("a_", False); `"a" f"b{x}"` -> ("ab", False)."""
    whole = string_value(expr)
    if whole is not None:
        return whole, True
    if isinstance(expr, cst.FormattedString):
        first = expr.parts[0] if expr.parts else None
        text = first.value if isinstance(first, cst.FormattedStringText) else ""
        return text, len(expr.parts) <= 1 and bool(text)
    if isinstance(expr, cst.ConcatenatedString) or (
        isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add)
    ):
        left, done = _prefix(expr.left)
        if not done:
            return left, False
        right, done = _prefix(expr.right)
        return left + right, done
    return "", False


def lease_name(expr: cst.BaseExpression) -> str | None:
    """A lease's name: the literal, or `<prefix>{…}` for a string computed
    after a literal prefix with a word in it (the prefix names the role; a
    bare `_` or a name that starts computed names none)."""
    text, whole = _prefix(expr)
    if whole:
        return text
    return text + PREFIXED if any(c.isalnum() for c in text) else None


def _computed(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The expressions a string expression interpolates (`f"a_{x}"` -> x)."""
    if isinstance(expr, cst.FormattedString):
        return [p.expression for p in expr.parts if isinstance(p, cst.FormattedStringExpression)]
    if isinstance(expr, cst.ConcatenatedString) or (
        isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add)
    ):
        return _computed(expr.left) + _computed(expr.right)
    if isinstance(expr, (cst.SimpleString, cst.FormattedStringText)):
        return []
    return [expr]


def _device_args(node: cst.CSTNode) -> list[cst.BaseExpression]:
    """The values passed as `device=` anywhere under `node`."""
    out: list[cst.BaseExpression] = []
    todo = [node]
    while todo:
        n = todo.pop()
        if isinstance(n, cst.Arg) and n.keyword is not None and n.keyword.value == "device":
            out.append(n.value)
        todo.extend(n.children)
    return out


def per_device(call: cst.Call, name: cst.BaseExpression) -> bool:
    """The name interpolates the very value its factory places the buffer on
    (`get_buffer(f"ws:{device}", lambda: torch.zeros(n, device=device))`): one
    lease per device, which the design keeps in the registry's entries directly."""
    factory = next((a.value for a in call.args if a.keyword and a.keyword.value == "factory"), None)
    positional = [a.value for a in call.args if a.keyword is None and not a.star]
    factory = factory or (positional[1] if len(positional) > 1 else None)
    if factory is None:
        return False
    return any(d.deep_equals(x) for d in _device_args(factory) for x in _computed(name))


def _first_arg(node: cst.Call) -> cst.BaseExpression | None:
    for a in node.args:
        if a.keyword is not None and a.keyword.value == "name":
            return a.value
    positional = [a for a in node.args if a.keyword is None and not a.star]
    return positional[0].value if positional else None


@dataclass(frozen=True, slots=True)
class RuntimeCall:
    """A call into the runtime module with an argument: a lease candidate."""

    fn: str  # the calling function (callees.function_key)
    target: str  # `rt.f`, or `rt.acc().m` for a method on an accessor's result
    # its name argument when a literal (or a constant bound to one), or its
    # literal prefix followed by PREFIXED
    name: str | None
    arg: str  # the name argument as written
    capture: bool  # made inside a graph-capture block
    snippet: str
    span: Span
    per_device: bool = False  # its computed name keys it by its factory's device


@dataclass(frozen=True, slots=True)
class TierFunction:
    """A function storing into a keyed registry, or handing its first parameter on."""

    cls: str | None  # its class, qualified
    stores: tuple[tuple[str, str], ...]  # (registry attribute, "self" or "slot")
    delegates: tuple[str, ...]  # the methods it hands its first parameter to


@dataclass(frozen=True, slots=True)
class LeaseFacts:
    calls: tuple[RuntimeCall, ...]
    tier: dict[str, TierFunction]
    accessor: str | None  # the class the module's `get_resources()` is annotated to return
    defines: bool  # the module defines `get_resources()` at module level
    capture: dict[str, list[list[str]]]  # function -> the callees inside capture (target JSON)
    captures: tuple[CaptureBlock, ...]


@dataclass(frozen=True, slots=True)
class LeaseSite:
    path: str
    module: str
    registry: str  # the registry attribute the lease stores into
    call: RuntimeCall


class LeaseVisitor(CaptureVisitor):
    """Calls into the runtime module with an argument (lease candidates), the
    keyed stores and delegations that define lease methods, module constants,
    and the calls made inside graph-capture blocks."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        assert ctx.vocab is not None
        self.rt = ctx.vocab.runtime_module
        self.calls: list[tuple[RuntimeCall, str | None]] = []  # and the constant it names
        self.consts: dict[str, str | None] = {}  # module-level NAME = "literal"
        # function -> (class, stores, delegates)
        self.tier: dict[str, tuple[str | None, list[tuple[str, str]], list[str]]] = {}
        self.accessor: str | None = None
        self.defines = False  # this module defines the accessor at module level

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        if len(self.ctx.scopes) == 2 and node.name.value == ACCESSOR:
            self.defines = True
        if len(self.ctx.scopes) == 2 and node.name.value == ACCESSOR and node.returns:
            ann = parse_string(node.returns.annotation)
            if isinstance(ann, (cst.Name, cst.Attribute)):
                self.accessor = self.ctx.resolve(ann)

    def _param0(self) -> str | None:
        node = self.ctx.scope.node
        if not isinstance(node, cst.FunctionDef):
            return None
        p = node.params
        names = [x.name.value for x in (*p.posonly_params, *p.params)]
        if names and names[0] == self.ctx.scope.self_name:
            names = names[1:]
        return names[0] if names else None

    def _tier(self) -> tuple[str | None, list[tuple[str, str]], list[str]]:
        cls = self.ctx.scope.class_qualname
        return self.tier.setdefault(
            function_key(self.ctx), (f"{self.ctx.module}.{cls}" if cls else None, [], [])
        )

    def visit_Assign(self, node: cst.Assign) -> None:
        if self.ctx.scope.kind == "module":
            for t in node.targets:
                if isinstance(t.target, cst.Name):
                    name = t.target.value
                    value = string_value(node.value)
                    self.consts[name] = value if name not in self.consts else None
            return
        if not self.ctx.in_function():
            return
        p0 = self._param0()
        for t in node.targets:
            target = t.target
            if not (isinstance(target, cst.Subscript) and len(target.slice) == 1):
                continue
            index = target.slice[0].slice
            chain = dotted(target.value)
            if (
                p0
                and isinstance(index, cst.Index)
                and isinstance(index.value, cst.Name)
                and index.value.value == p0
                and chain
                and "." in chain
            ):
                *base, attr = chain.split(".")
                on_self = base == [self.ctx.scope.self_name]
                via_slot = base[-1] == SLOT and self.ctx.module == self.rt
                if on_self or via_slot:
                    self._tier()[1].append((attr, "self" if on_self else "slot"))

    def _target(self, func: cst.BaseExpression) -> str | None:
        """`rt.f`, or `rt.acc().m` / `rt.acc().slot.m` for a method on an accessor's result."""
        resolved = self.ctx.resolve(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        if resolved and resolved.startswith(self.rt + "."):
            return resolved
        chain: list[str] = []
        while isinstance(func, cst.Attribute):
            chain.append(func.attr.value)
            func = func.value
        if isinstance(func, cst.Call) and chain and not func.args:
            inner = (
                self.ctx.resolve(func.func)
                if isinstance(func.func, (cst.Name, cst.Attribute))
                else None
            )
            if inner and inner.startswith(self.rt + "."):
                return f"{inner}().{'.'.join(reversed(chain))}"
        return None

    def visit_Call(self, node: cst.Call) -> None:
        super().visit_Call(node)
        arg = _first_arg(node)
        if arg is None:
            return
        # delegations make lease functions only in the runtime module
        p0 = self._param0() if self.ctx.in_function() and self.ctx.module == self.rt else None
        func = node.func
        if p0 and isinstance(func, cst.Attribute) and isinstance(arg, cst.Name) and arg.value == p0:
            self._tier()[2].append(func.attr.value)
        target = self._target(func)
        if target is None:
            return
        call = RuntimeCall(
            function_key(self.ctx),
            target,
            lease_name(arg),
            self.ctx.snippet(arg)[:80],
            self.capturing,
            self.ctx.snippet(node)[:160],
            self.ctx.anchor(node),  # type: ignore[arg-type]
            per_device(node, arg),
        )
        self.calls.append((call, arg.value if isinstance(arg, cst.Name) else None))

    def finish(self) -> LeaseFacts | None:
        calls = tuple(  # a module constant bound once to a literal is that literal
            replace(c, name=self.consts.get(const)) if c.name is None and const is not None else c
            for c, const in self.calls
        )
        tier = {
            q: TierFunction(cls, tuple(stores), tuple(delegates))
            for q, (cls, stores, delegates) in self.tier.items()
            if stores or delegates
        }
        if not (calls or tier or self.defines or self.capture or self.captures):
            return None
        return LeaseFacts(
            calls, tier, self.accessor, self.defines, self.capture, tuple(self.captures)
        )


class Leases:
    """The resources tier, the lease functions, every lease site with its
    subsystem, and the program's capture blocks (from the facts under `key`)."""

    def __init__(self, program: Program, key: str) -> None:
        rt = program.vocab.runtime_module
        self.rt = rt
        self.tier_class: str | None = None
        self.has_accessor = False
        tier: dict[str, tuple[str, TierFunction]] = {}
        calls: list[tuple[str, str, RuntimeCall]] = []
        self.capture = Capture()
        for path, module, facts in program.typed_facts(key, LeaseFacts):
            if module == rt and facts.accessor is not None:
                self.tier_class = facts.accessor
            if module == rt and facts.defines:
                self.has_accessor = True
            for q, t in facts.tier.items():
                tier[q] = (module, t)
            calls += [(path, module, c) for c in facts.calls]
            self.capture.add(path, facts.capture, facts.captures)
        # lease methods: the tier's own keyed stores, or the runtime module's through the slot
        self.methods: dict[str, str] = {}
        for q, (module, t) in tier.items():
            for attr, how in t.stores:
                if (how == "self" and t.cls == self.tier_class and t.cls) or (
                    how == "slot" and module == rt and t.cls
                ):
                    self.methods[q] = attr
        names = {q.rpartition(".")[2]: attr for q, attr in self.methods.items()}
        # lease functions: the runtime module's functions that store or delegate so
        self.functions: dict[str, str] = {}
        for q, (module, t) in tier.items():
            if module != rt or t.cls is not None:
                continue
            registry = next((a for a, how in t.stores if how == "slot"), None)
            registry = registry or next((names[d] for d in t.delegates if d in names), None)
            if registry:
                self.functions[q] = registry
        self.sites: list[LeaseSite] = []
        for path, module, c in calls:
            registry = self.functions.get(c.target)
            if registry is None and "()." in c.target:
                registry = names.get(c.target.rpartition(".")[2])
            if registry is not None and module != rt:
                self.sites.append(LeaseSite(path, module, registry, c))
        self.subsystem = self._subsystems()

    def _subsystems(self) -> dict[str, str]:
        """module -> subsystem, for every module with a lease site."""
        rt_pkg = self.rt.rpartition(".")[0]
        out: dict[str, str] = {}
        for s in self.sites:
            inside = bool(rt_pkg) and s.module.startswith(rt_pkg + ".")
            depth = len(rt_pkg.split(".")) if inside else 1
            out[s.module] = ".".join(s.module.split(".")[: depth + 1])
        return out

    def table(self) -> dict[str, list[str]]:
        """`<registry> <name>` -> the subsystems leasing it (literal names and
        literal prefixes)."""
        out: dict[str, set[str]] = {}
        for s in self.sites:
            if s.call.name is not None:
                out.setdefault(f"{s.registry} {s.call.name}", set()).add(self.subsystem[s.module])
        return {k: sorted(v) for k, v in sorted(out.items())}

    def shared_names(self) -> list[tuple[str, dict[str, list[LeaseSite]]]]:
        """Each `<registry> <name>` (a literal or a prefix) leased from two subsystems or more,
        by key: subsystem -> its sites."""
        by_key: dict[str, dict[str, list[LeaseSite]]] = {}
        for s in self.sites:
            if s.call.name is not None:
                key = f"{s.registry} {s.call.name}"
                by_key.setdefault(key, {}).setdefault(self.subsystem[s.module], []).append(s)
        return [(k, subs) for k, subs in sorted(by_key.items()) if len(subs) >= 2]

    def reached_from_capture(self, program: Program, key: str) -> Reached:
        """`Capture.reached`, memoised per run."""
        return program.memo(f"{key}:reach", lambda: self.capture.reached(program))


def leases(program: Program, key: str) -> Leases:
    """The Leases from the facts under `key`, memoised per run."""
    return program.memo(f"{key}:model", lambda: Leases(program, key))
