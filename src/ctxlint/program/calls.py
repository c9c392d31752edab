"""Per-file call facts for whole-program call-graph rules (CTX301), and the graph.

The visitor records, for every function and method, its events in execution
order (calls are recorded when they *complete*, so `f(g())` records `g` first):
bag reads, `publish`, `assert_published`, and calls with their targets resolved
as far as one file allows. Targets are strings the whole-program side resolves:

- `g:pkg.mod.name[.attr...]` a name through the import table, a module-level
  name, a nested def, a callable parameter default or a local alias of one;
- `s:meth`   `self.meth(...)` (a method, or a callable parked on `self`);
- `S:meth`   `super().meth(...)`;
- `i:attr.meth` `self.attr.meth(...)` where `self.attr = Cls(...)` somewhere.

Positions cost a second pass over a file, so only events that can become a
finding site are anchored (chosen in `finish()` from what the file alone knows).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, dotted
from ctxlint.facts.visitor import FileVisitor
from ctxlint.program.classes import class_index
from ctxlint.program.core import Program

PROCESS_POOL = "ProcessPoolExecutor"
RECORD_PARAM = "server_args"  # the design's name for a handed record


def _module_names(module: cst.Module) -> set[str]:
    """Names bound at module level by def/class/assignment (imports are in ctx)."""
    out: set[str] = set()
    todo: list[Any] = list(module.body)
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            out.add(stmt.name.value)
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                targets: list[cst.BaseExpression] = []
                if isinstance(small, cst.Assign):
                    targets = [t.target for t in small.targets]
                elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
                    targets = [small.target]
                out.update(t.value for t in targets if isinstance(t, cst.Name))
        elif isinstance(stmt, (cst.If, cst.Try, cst.With)):
            for block in (getattr(stmt, "body", None), getattr(stmt, "orelse", None)):
                body = getattr(block, "body", None)
                if isinstance(body, (list, tuple)):
                    todo.extend(body)
            for handler in getattr(stmt, "handlers", ()):
                todo.extend(handler.body.body)
    return out


@dataclass
class _Func:
    qual: str  # module-qualified
    cls: str | None  # module-qualified class of a method
    self_name: str | None
    params: set[str]
    defaults: dict[str, list[str]]  # parameter -> targets of its callable default
    takes_record: bool = False  # a parameter annotated as the record, or named server_args
    aliases: dict[str, list[str]] = field(default_factory=dict)  # local = name
    instances: dict[str, list[str]] = field(default_factory=dict)  # local = Cls(...)
    pools: set[str] = field(default_factory=set)  # locals holding a process pool
    self_aliases: set[str] = field(default_factory=set)  # `self = cls.__new__(cls)`
    nested: dict[str, str] = field(default_factory=dict)  # nested def -> qualname
    events: list[list[Any]] = field(default_factory=list)  # [kind, payload, node]
    refs: set[str] = field(default_factory=set)  # in-package names referenced, not called


class CallFactsVisitor(FileVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        vocab = ctx.vocab
        assert vocab is not None
        rt = vocab.runtime_module
        self.special = {f"{rt}.publish": "p", f"{rt}.assert_published": "a"}
        self.accessors = {vocab.qualified(a): a for a in vocab.bag_accessors}
        self.module_names = _module_names(ctx.module_node)
        self.stack: list[_Func] = []
        self.funcs: dict[str, _Func] = {}
        self.lambdas = 0
        self.classes: dict[str, dict[str, Any]] = {}
        self.starts: list[dict[str, Any]] = []
        self.pool_attrs: set[tuple[str, str]] = set()  # (class, attr) holding a process pool
        self.package = ctx.module.partition(".")[0]
        self.module_refs: set[str] = set()  # referenced by import-time code
        self.in_import = False
        self.def_names: set[int] = set()  # the name nodes of def/class statements

    # -- names --------------------------------------------------------------
    def _q(self, local: str) -> str:
        return f"{self.ctx.module}.{local}"

    def _targets(self, expr: cst.BaseExpression) -> list[str]:
        """Targets of a callable expression (what `expr(...)` would run)."""
        if isinstance(expr, cst.Call):  # functools.partial(f, ...) runs f
            name = dotted(expr.func)
            if name and name.rpartition(".")[2] == "partial" and expr.args:
                return self._targets(expr.args[0].value)
            return []
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Call):
            inner = expr.value
            if dotted(inner.func) == "super" and not self._shadowed("super"):
                return [f"S:{expr.attr.value}"]
            return []
        name = dotted(expr)
        if name is None:
            return []
        head, _, rest = name.partition(".")
        fn = self.stack[-1] if self.stack else None
        if fn is not None:
            if head == fn.self_name or head in fn.self_aliases:
                if not rest:
                    return []
                parts = rest.split(".")
                if len(parts) == 1:
                    return [f"s:{parts[0]}"]
                if len(parts) == 2:
                    return [f"i:{parts[0]}.{parts[1]}"]
                return []
            for outer in reversed(self.stack):
                if head in outer.nested:
                    return [f"g:{outer.nested[head]}" + (f".{rest}" if rest else "")]
            if head in fn.aliases:
                return [t + (f".{rest}" if rest else "") for t in fn.aliases[head]]
            if head in fn.instances:
                return [f"{t}.{rest}" for t in fn.instances[head]] if rest else []
            if head in fn.defaults:
                return [t + (f".{rest}" if rest else "") for t in fn.defaults[head]]
            if head in fn.params:
                return []
            for scope in self.ctx.scopes[1:]:
                if head in scope.imports:
                    resolved = self.ctx.resolve(expr)
                    return [f"g:{resolved}"] if resolved else []
        if head in self.ctx.imports or head in self.module_names:
            resolved = self.ctx.resolve(expr)
            return [f"g:{resolved}"] if resolved else []
        return []

    def _shadowed(self, name: str) -> bool:
        return bool(self.stack) and name in self.stack[-1].params

    # -- scopes -------------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.def_names.add(id(node.name))
        qual = self._q(self.ctx.qualname)
        bases = [t for arg in node.bases if arg.keyword is None for t in self._targets(arg.value)]
        self.classes[qual] = {"bases": [b[2:] for b in bases if b.startswith("g:")], "attrs": {}}
        if any(self._is_ray_remote(d.decorator) for d in node.decorators):
            self.starts.append(self._start("ray", [f"g:{qual}"], node.name))

    def _is_ray_remote(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Call):
            expr = expr.func
        return any(t == "g:ray.remote" for t in self._targets(expr))

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.def_names.add(id(node.name))
        scope = self.ctx.scope
        qual = self._q(scope.qualname)
        p = node.params
        params = {x.name.value for x in (*p.posonly_params, *p.params, *p.kwonly_params)}
        for star in (p.star_arg, p.star_kwarg):
            if isinstance(star, cst.Param):
                params.add(star.name.value)
        # Defaults are evaluated in the enclosing scope: resolve them before entering.
        defaults: dict[str, list[str]] = {}
        for x in (*p.posonly_params, *p.params, *p.kwonly_params):
            if x.default is not None and isinstance(x.default, (cst.Name, cst.Attribute)):
                found = self._targets(x.default)
                if found:
                    defaults[x.name.value] = found
        if self.stack:
            self.stack[-1].nested[node.name.value] = qual
        cls = self._q(scope.class_qualname) if scope.class_qualname else None
        records = self.ctx.records
        takes_record = any(
            x.name.value == RECORD_PARAM
            or (
                x.annotation is not None
                and records is not None
                and records.is_record_annotation(x.annotation.annotation)
            )
            for x in (*p.posonly_params, *p.params, *p.kwonly_params)
        )
        fn = _Func(qual, cls, scope.self_name, params, defaults, takes_record)
        self.stack.append(fn)
        self.funcs[qual] = fn
        if any(self._is_ray_remote(d.decorator) for d in node.decorators):
            self.starts.append(self._start("ray", [f"g:{qual}"], node.name))

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.stack.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.lambdas += 1

    def leave_Lambda(self, node: cst.Lambda) -> None:
        self.lambdas -= 1

    # -- bindings -----------------------------------------------------------
    def _bind(self, target: cst.BaseExpression, value: cst.BaseExpression) -> None:
        if not self.stack:
            return
        fn = self.stack[-1]
        pool = isinstance(value, cst.Call) and self._is_pool(value)
        if isinstance(target, cst.Name):
            name = target.value
            if pool:
                fn.pools.add(name)
            elif isinstance(value, cst.Call) and self._makes_own_instance(fn, value):
                fn.self_aliases.add(name)
            elif isinstance(value, cst.Call):
                found = [t for t in self._targets(value.func) if t.startswith("g:")]
                if found:
                    fn.instances[name] = found
            elif isinstance(value, (cst.Name, cst.Attribute)):
                found = self._targets(value)
                if found:
                    fn.aliases.setdefault(name, [])
                    fn.aliases[name] += [t for t in found if t not in fn.aliases[name]]
            return
        # self.attr = ...: a callable or an instance parked on the object
        if (
            isinstance(target, cst.Attribute)
            and isinstance(target.value, cst.Name)
            and target.value.value == fn.self_name
            and fn.cls in self.classes
        ):
            attr = target.attr.value
            if pool:
                self.pool_attrs.add((fn.cls, attr))
                return
            attrs = self.classes[fn.cls]["attrs"]
            if isinstance(value, cst.Call):
                found = [t for t in self._targets(value.func) if t.startswith("g:")]
                if found:
                    attrs.setdefault(f"inst:{attr}", [])
                    attrs[f"inst:{attr}"] += [t[2:] for t in found]
            elif isinstance(value, (cst.Name, cst.Attribute)):
                found = self._targets(value)
                if found:
                    attrs.setdefault(attr, [])
                    attrs[attr] += [t for t in found if t not in attrs[attr]]

    @staticmethod
    def _makes_own_instance(fn: _Func, call: cst.Call) -> bool:
        """`cls.__new__(cls)` or `cls(...)` in a classmethod: an instance of the class."""
        name = dotted(call.func)
        return fn.self_name is not None and name in (fn.self_name, f"{fn.self_name}.__new__")

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._bind(t.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._bind(node.target, node.value)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None and isinstance(node.item, cst.Call):
            self._bind(node.asname.name, node.item)

    def _is_pool(self, call: cst.Call) -> bool:
        name = dotted(call.func)
        return bool(name) and name.rpartition(".")[2] == PROCESS_POOL  # type: ignore[union-attr]

    # -- references ---------------------------------------------------------
    # A class handed around by name (a registry, a factory's `return Cls`) is
    # constructed where the graph cannot see; references make the constructor
    # check's reachability liberal instead of reporting every such class.
    def _ref(self, expr: cst.BaseExpression) -> None:
        if self.lambdas:
            return
        for t in self._targets(expr):
            if t.startswith("g:") and t[2:].partition(".")[0] == self.package:
                (self.stack[-1].refs if self.stack else self.module_refs).add(t[2:])

    def visit_Name(self, node: cst.Name) -> None:
        if self.in_import or id(node) in self.def_names:
            return
        name = node.value
        if (
            name in self.ctx.imports
            or name in self.module_names
            or any(name in sc.imports for sc in self.ctx.scopes[1:])  # `from x import C` in a def
        ):
            self._ref(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if self.in_import:
            return
        if isinstance(node.value, cst.Name) and node.value.value in self.ctx.imports:
            self._ref(node)

    def visit_Import(self, node: cst.Import) -> None:
        self.in_import = True

    def leave_Import(self, node: cst.Import) -> None:
        self.in_import = False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.in_import = True

    def leave_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.in_import = False

    # -- calls --------------------------------------------------------------
    def _start(self, kind: str, targets: list[str], node: cst.CSTNode) -> dict[str, Any]:
        return {
            "kind": kind,
            "targets": targets,
            "scope": self.ctx.qualname,
            "fn": self.stack[-1].qual if self.stack else None,
            "cls": self.stack[-1].cls if self.stack else None,
            "snippet": self.ctx.snippet(node)[:160],
            "span": self.ctx.anchor(node),
        }

    def _process_start(self, node: cst.Call, name: str | None) -> None:
        func = node.func
        if name is not None and name.rpartition(".")[2] == "Process":
            for arg in node.args:
                if arg.keyword is not None and arg.keyword.value == "target":
                    self.starts.append(self._start("process", self._targets(arg.value), node))
            return
        # ray.remote(Cls) and ray.remote(num_gpus=1)(Cls); ray.remote(num_gpus=1)
        # alone is a decorator factory, and the decorator is seen on the def
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if name is not None and name.rpartition(".")[2] == "remote":
            if positional and "g:ray.remote" in self._targets(func):
                self.starts.append(self._start("ray", self._targets(positional[0]), node))
            return
        if isinstance(func, cst.Call) and positional and self._is_ray_remote(func.func):
            self.starts.append(self._start("ray", self._targets(positional[0]), node))
            return
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in ("submit", "map")
            and node.args
            and self._is_pool_expr(func.value)
        ):
            self.starts.append(self._start("submit", self._targets(node.args[0].value), node))

    def _is_pool_expr(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Call):
            return self._is_pool(expr)
        if not self.stack:
            return False
        fn = self.stack[-1]
        if isinstance(expr, cst.Name):
            return expr.value in fn.pools
        # `self.pool` is decided in finish(), once every method was seen
        return (
            isinstance(expr, cst.Attribute)
            and isinstance(expr.value, cst.Name)
            and expr.value.value == fn.self_name
            and fn.cls is not None
            and (fn.cls, expr.attr.value) in self.pool_attrs
        )

    def leave_Call(self, node: cst.Call) -> None:
        if self.lambdas:
            return
        name = dotted(node.func)
        self._process_start(node, name)
        if not self.stack:
            return
        targets = self._targets(node.func)
        if not targets:
            return
        fn = self.stack[-1]
        first = targets[0]
        if len(targets) == 1 and first.startswith("g:"):
            special = self.special.get(first[2:])
            if special:
                fn.events.append([special, None, node])
                return
            accessor = self.accessors.get(first[2:])
            if accessor:
                fn.events.append(["r", accessor, node])
                return
        fn.events.append(["c", targets, node])

    # -- output -------------------------------------------------------------
    def finish(self) -> Any:
        funcs = self.funcs
        module = self.ctx.module
        local = {q for q in funcs}

        def callees(fn: _Func) -> Iterator[str]:
            for kind, payload, _ in fn.events:
                if kind == "c":
                    for t in payload:
                        yield from self._local_targets(fn, t, local)

        # What the file alone knows: functions that publish (directly or through
        # a same-module helper) and functions that reach a read in this module.
        publishes = _closure(
            {q for q, f in funcs.items() if any(e[0] == "p" for e in f.events)}, funcs, callees
        )
        reads = _closure(
            {q for q, f in funcs.items() if any(e[0] == "r" for e in f.events)}, funcs, callees
        )
        local_targets: set[str] = set()
        for s in self.starts:
            for t in s["targets"]:
                if t.startswith("g:"):
                    local_targets.add(t[2:])
                elif t.startswith("s:") and s["cls"]:
                    local_targets.add(f"{s['cls']}.{t[2:]}")
        out_funcs: dict[str, Any] = {}
        for q, fn in funcs.items():
            # entry bodies anchor every read and call; a constructor that is not
            # one anchors what leads to a read in this module (CTX301's ctor check).
            # A function reaching a read here may publish through another module's
            # helper (only the whole program can tell), so it anchors its body too.
            full = (
                q in publishes
                or q in reads
                or q in local_targets
                or (fn.cls in local_targets and q.endswith(".__init__"))
            )
            ctor = q.endswith(".__init__") and q in reads and fn.takes_record
            events: list[list[Any]] = []
            for kind, payload, node in fn.events:
                ev: list[Any] = [kind, payload]
                if kind == "c":
                    site = full or (
                        ctor
                        and any(
                            t in reads for x in payload for t in self._local_targets(fn, x, local)
                        )
                    )
                else:
                    site = kind in ("p", "a") or full or ctor
                if site:
                    ev += [self.ctx.snippet(node)[:160], self.ctx.anchor(node)]
                events.append(ev)
            out_funcs[q] = {"cls": fn.cls, "events": events}
            if fn.takes_record:
                out_funcs[q]["record"] = True
            if fn.refs:
                out_funcs[q]["refs"] = sorted(fn.refs)
        return {
            "module": module,
            "funcs": out_funcs,
            "classes": self.classes,
            "starts": self.starts,
            "imports": dict(self.ctx.imports),
            "module_refs": sorted(self.module_refs),
        }

    def _local_targets(self, fn: _Func, target: str, local: set[str]) -> Iterator[str]:
        """Same-module functions a target string can name (for the file's own view)."""
        if target.startswith("g:"):
            name = target[2:]
            if name in local:
                yield name
            elif f"{name}.__init__" in local:
                yield f"{name}.__init__"
        elif target.startswith("s:") and fn.cls is not None:
            q = f"{fn.cls}.{target[2:]}"
            if q in local:
                yield q


def _closure(seed: set[str], funcs: dict[str, _Func], callees: Any) -> set[str]:
    """Functions that reach `seed` through same-module calls."""
    out = set(seed)
    changed = True
    while changed:
        changed = False
        for q, fn in funcs.items():
            if q not in out and any(c in out for c in callees(fn)):
                out.add(q)
                changed = True
    return out


# -- the whole-program graph --------------------------------------------------------------
@dataclass
class Func:
    qual: str
    path: str
    module: str
    cls: str | None
    events: list[list[Any]]
    takes_record: bool = False
    refs: tuple[str, ...] = ()


class CallGraph:
    """Functions, classes and call edges of every file with facts for `rule_id`."""

    def __init__(self, program: Program, rule_id: str) -> None:
        self.funcs: dict[str, Func] = {}
        self.classes: dict[str, dict[str, Any]] = {}
        self.class_path: dict[str, str] = {}
        self.modules: dict[str, dict[str, str]] = {}  # module -> import table
        self.module_refs: dict[str, list[str]] = {}  # module -> names import-time code uses
        self.starts: list[tuple[str, dict[str, Any]]] = []
        for path, module, facts in program.facts(rule_id):
            self.modules[module] = facts["imports"]
            for q, f in facts["funcs"].items():
                self.funcs[q] = Func(
                    q,
                    path,
                    module,
                    f["cls"],
                    f["events"],
                    bool(f.get("record")),
                    tuple(f.get("refs", ())),
                )
            self.module_refs[module] = facts.get("module_refs", [])
            for q, c in facts["classes"].items():
                self.classes[q] = c
                self.class_path[q] = path
            self.starts += [(path, s) for s in facts["starts"]]
        self._global: dict[str, list[str]] = {}
        self.index = class_index(program)
        self.edges: dict[str, list[list[str]]] = {
            q: [self.targets(f, e[1]) if e[0] == "c" else [] for e in f.events]
            for q, f in self.funcs.items()
        }

    # -- resolution -----------------------------------------------------------
    def resolve_global(self, name: str, depth: int = 0) -> list[str]:
        """Functions a qualified name runs when called (a class runs its __init__)."""
        if name in self._global:
            return self._global[name]
        self._global[name] = []  # cycles in re-exports
        out: list[str] = []
        if name in self.funcs:
            out = [name]
        elif name in self.classes:
            out = self.method(name, "__init__")
        elif depth < 8:
            prefix, _, attr = name.rpartition(".")
            cls = self.resolve_class(prefix, depth + 1) if prefix else None
            if cls is not None:
                out = self.method(cls, attr)
            else:
                out = self._reexport(name, depth)
        self._global[name] = out
        return out

    def reexported(self, name: str) -> str | None:
        """What `pkg.name` stands for when the nearest module on its path that has
        been seen imports `name` from elsewhere; None when it does not (or the
        import is the name itself)."""
        parts = name.split(".")
        for i in range(len(parts) - 1, 0, -1):
            imports = self.modules.get(".".join(parts[:i]))
            if imports is None:
                continue
            if parts[i] in imports:
                target = ".".join([imports[parts[i]], *parts[i + 1 :]])
                return target if target != name else None
            return None
        return None

    def _reexport(self, name: str, depth: int) -> list[str]:
        target = self.reexported(name)
        return self.resolve_global(target, depth + 1) if target else []

    # The class questions are the class index's (program.classes: C3, re-exports).
    def resolve_class(self, name: str, depth: int = 0) -> str | None:
        return self.index.resolve(name)

    def mro(self, cls: str) -> list[str]:
        return self.index.mro(cls) or [cls]

    def method(self, cls: str, name: str, skip_first: bool = False) -> list[str]:
        found = self.index.definer(cls, name, skip_self=skip_first)
        return [f"{found}.{name}"] if found is not None else []

    def overrides(self, cls: str, name: str) -> list[str]:
        return [
            f"{sub}.{name}" for sub in self.index.subclasses(cls) if f"{sub}.{name}" in self.funcs
        ]

    def targets(self, fn: Func, payload: Iterable[str], depth: int = 0) -> list[str]:
        out: list[str] = []
        for t in payload:
            kind, _, rest = t.partition(":")
            found: list[str] = []
            if kind == "g":
                found = self.resolve_global(rest)
            elif fn.cls is not None and kind == "s":
                # the class's own method, else a subclass's (a hook the base calls)
                found = self.method(fn.cls, rest) or self.overrides(fn.cls, rest)
                if not found and depth < 3:  # a callable parked on self
                    for c in self.mro(fn.cls):
                        parked = self.classes.get(c, {}).get("attrs", {}).get(rest)
                        if parked:
                            found = self.targets(fn, parked, depth + 1)
                            break
            elif fn.cls is not None and kind == "S":
                found = self.method(fn.cls, rest, skip_first=True)
            elif fn.cls is not None and kind == "i":
                attr, _, meth = rest.partition(".")
                for c in self.mro(fn.cls):
                    held = self.classes.get(c, {}).get("attrs", {}).get(f"inst:{attr}")
                    if held:
                        for h in held:
                            # `Cls.from_string(...)`: an alternate constructor's class
                            real = self.resolve_class(h) or self.resolve_class(h.rpartition(".")[0])
                            if real is not None:
                                found += self.method(real, meth)
                        break
            out += [f for f in found if f not in out]
        return out

    def start_targets(self, path: str, start: dict[str, Any]) -> list[str]:
        """Entry functions of one process start (a class starts at its __init__)."""
        fn = self.funcs.get(start["fn"] or "") or Func("", path, "", start["cls"], [])
        return self.targets(fn, start["targets"])


def short(qual: str, module: str) -> str:
    """`Cls.method` for `pkg.mod.Cls.method`."""
    return qual[len(module) + 1 :] if qual.startswith(module + ".") else qual
