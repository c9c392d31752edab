"""The scope/binding model: "what is this name here", asked during the walk.

The one place the program model follows name bindings. One part visitor
("bindings"), first in the walk, keeps, per function scope and for the
module, the names bound so far in statement order (parameters, imports, defs
and classes, assignment/for/with/except/walrus targets) with the classes their
annotation or value names. Visitors ask it, as `ctx.parts["bindings"]`, what a
name is here (local or global, what it holds) and what kind of receiver an
expression is (`self`, `super()`, `self.attr`, a typed local, a global name);
a rule that judges bindings themselves watches names and is told every Site
binding one (Bindings.watch).

A question about what a name or a `self` attribute holds (the seed, a thread
pool, a copy of a record, a path below the flags) is a Tracked value
(program.binding_values): its owner gives a classifier, and the model asks it
at every binding it makes, in this one place and at one time (after the
value, as Python binds), so aliases, rebinding, parameters, imports and
`self.X = ...` are followed the same way for every question (Bindings.track).

Class bodies bind class attributes, not names a method sees: the class index
(program.classes) records those, and Tracked values keep them under the
class. Comprehension variables live in their own scope and are not tracked
(no rule types them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.annotations import unwrap
from ctxlint.facts.context import MODULE_SCOPE, FileContext, dotted, import_bindings
from ctxlint.facts.visitor import FileVisitor
from ctxlint.program.binding_syntax import (
    all_params,
    attribute_targets,
    decorator_names,
    dynamic_base,
    target_names,
)
from ctxlint.program.binding_values import IMPORTED, PARAMETER, Bound, Classify, Tracked

KEY = "bindings"
# Binding kinds whose name stands for a definition, not a value of a type.
DEFINITIONS = frozenset(("import", "def", "class"))


@dataclass(frozen=True, slots=True)
class Binding:
    kind: str  # parameter, import, def, class, assignment, annotation, target
    instances: tuple[str, ...] = ()  # classes (or callees) of the value, qualified
    factories: tuple[str, ...] = ()  # classes calling the value makes (type[X], registries)
    scope: str = MODULE_SCOPE  # qualname of the scope holding it


UNTYPED = Binding("target")


@dataclass(frozen=True, slots=True)
class Receiver:
    """What the `x` of `x.m` is, as far as this file tells.

    kind: "self" (the method's first parameter; `flavor` says instance, class
    or static method), "super" (`super()`), "selfattr" (`self.attr`), "local"
    (a name a function binds), "global" (a name the module binds with a
    type), "name" (a qualified name through the import table: a module, a
    class, a global), "other" (anything else; its `via` is empty when the
    expression has no name: quoting it costs, and most callers never do)."""

    kind: str
    via: str
    cls: str | None = None  # module-qualified class of self/super/selfattr
    attr: str | None = None  # selfattr
    flavor: str = "inst"  # self: "inst" | "class" | "static"
    binding: Binding | None = None  # local/global
    name: str | None = None  # name: the qualified name


@dataclass(frozen=True, slots=True)
class Site:
    """One place the code binds a name, told to the watchers of that name.

    kind: import, def, nested def, class, parameter, lambda parameter,
    assignment, annotated assignment, augmented assignment, for target, with
    target, except target, walrus, comprehension target; an attribute target
    (`obj.name = ...`) is "<kind> to an attribute". scope_kind: module,
    function, class (a class attribute, a nested class), comprehension, or
    attribute. A function's `global x` makes its bindings of x the module's."""

    name: cst.Name
    kind: str
    scope: str
    scope_kind: str
    node: cst.CSTNode | None = None  # the statement/parameter to quote, when not the name
    target: str | None = None  # an import's qualified target
    receiver: cst.BaseExpression | None = None  # an attribute target's object


Watcher = Callable[[Site], None]


class Bindings(FileVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.scopes: dict[str, dict[str, Binding]] = {}  # scope qualname -> name -> binding
        self.globals_decl: dict[str, set[str]] = {}  # function -> names declared global
        # function qualname -> its parameters by name (a method's receiver left out)
        self.params: dict[str, dict[str, cst.Param]] = {}
        self._watchers: list[tuple[set[str], Watcher]] = []
        self._tracked: list[Tracked] = []
        self._by_name: list[Tracked] = []  # those that classify names
        self._by_attr: list[Tracked] = []  # those that classify `self` attributes
        self._locals: dict[int, Any] = {}  # function node -> names it binds anywhere
        self.importing = 0  # inside an import statement (its names are no uses)

    def track(self, names: Classify | None = None, attrs: Classify | None = None) -> Tracked:
        """A new question about what names (`names`) and `self` attributes
        (`attrs`) hold: each classifier is asked at every binding the model
        makes from then on (register in the visitor's constructor)."""
        tracked = Tracked(self, names, attrs)
        self._tracked.append(tracked)
        if names is not None:
            self._by_name.append(tracked)
        if attrs is not None:
            self._by_attr.append(tracked)
        return tracked

    def watch(self, names: set[str], watcher: Watcher) -> None:
        """Tell `watcher` every Site that binds one of `names`, as the walk
        reaches it (statement order: an assignment before its value's calls)."""
        self._watchers.append((names, watcher))

    def finish(self) -> Any:
        """The walk is over (this part finishes first): drop the classifiers.
        Each holds its visitor, which holds its Tracked value: a reference
        cycle that would keep the file's tree alive until the cyclic GC ran.
        The answers stay readable for the other visitors' finish()."""
        for t in self._tracked:
            t.classify = t.classify_attr = None
        for found in (self._tracked, self._by_name, self._by_attr):
            found.clear()
        return None

    # -- queries --------------------------------------------------------------
    def scope_for(self, name: str) -> str:
        """The qualname of the scope a binding of `name` here lands in: the
        current one, or the module's for a function's `global` name."""
        qual = self.ctx.qualname
        if self.ctx.scope.kind == "function" and name in self.globals_decl.get(qual, ()):
            return MODULE_SCOPE
        return qual

    def declared_global(self, name: str) -> bool:
        """The function we are in declared `global name` (so far)."""
        return name in self.globals_decl.get(self.ctx.qualname, ())

    def local_here(self, name: str) -> bool:
        """Python's rule: the function we are in binds `name` somewhere in its
        body (not declared global or nonlocal), so the module's `name` is not
        the one it sees. False outside functions."""
        scope = self.ctx.scope
        if scope.kind != "function" or scope.node is None:
            return False
        key = id(scope.node)
        found = self._locals.get(key)
        if found is None:  # (its module subclasses LibCST's visitor: loaded when asked)
            from ctxlint.program.function_locals import function_locals

            found = self._locals[key] = function_locals(scope.node)
        return name in found.bound and name not in found.globals

    def lookup(self, name: str, *, module: bool = True) -> Binding | None:
        """The binding `name` has here: the nearest function binding it (class
        bodies are not visible from their methods), else the module's (unless
        `module` is False)."""
        for s in reversed(self.ctx.scopes):
            if s.kind == "class":
                continue
            if s.kind == "module" and not module:
                return None
            found = self.scopes.get(s.qualname, {}).get(name)
            if found is not None:
                return found
        return None

    def parameter(self, name: str) -> cst.Param | None:
        """The parameter `name` is in the nearest enclosing function declaring
        it (closures see through class bodies), even where the function later
        binds the name again: what was handed to it. A method's receiver
        (`self`, `cls`) is no parameter here."""
        for s in reversed(self.ctx.scopes):
            if s.kind == "function":
                found = self.params.get(s.qualname, {}).get(name)
                if found is not None:
                    return found
        return None

    def nested_def(self, name: str) -> bool:
        """`name` is, so far, a def nested in the function we are in."""
        found = self.scopes.get(self.ctx.qualname, {}).get(name)
        return self.ctx.in_function() and found is not None and found.kind == "def"

    def function_chain(self) -> list[str]:
        """Qualnames of the enclosing function scopes, innermost first (the
        scopes a bare name is looked up in before the module's)."""
        out = []
        for s in reversed(self.ctx.scopes):
            if s.kind == "module":
                break
            if s.kind == "function":
                out.append(s.qualname)
        return out

    def annotation(self, ann: cst.BaseExpression) -> tuple[list[str], list[str]]:
        """(instance classes, factory classes) an annotation names, qualified."""
        named = unwrap(ann)
        resolve = self.ctx.resolve
        return (
            [q for e in named.instances if (q := resolve(e))],
            [q for e in (*named.factories, *named.registries) if (q := resolve(e))],
        )

    def value_types(self, value: cst.BaseExpression | None) -> tuple[list[str], list[str]]:
        """(instances, factories) of an assigned value: a construction (the
        callee's qualified name: a class, or a function whose return type the
        class index knows), a factory or registry pick of a typed name, a copy
        of a typed name."""
        if isinstance(value, cst.Call):
            func = value.func
            if isinstance(func, cst.Name):
                known = self._value_binding(func.value)
                if known is not None:
                    return list(known.factories), []  # `spec_class(...)`, spec_class: type[T]
            holder = func
            if isinstance(holder, cst.Subscript):
                holder = holder.value  # REGISTRY[name]()
            elif isinstance(holder, cst.Call) and isinstance(holder.func, cst.Attribute):
                if holder.func.attr.value == "get":
                    holder = holder.func.value  # REGISTRY.get(name)()
            if holder is not func and isinstance(holder, cst.Name):
                known = self._value_binding(holder.value)
                return (list(known.factories), []) if known else ([], [])
            if isinstance(func, cst.Call):
                base = dynamic_base(func)
                if base is not None:  # `type("Oot", (Platform,), {...})()`: a Platform
                    q = self.ctx.resolve(base)
                    return ([q], []) if q else ([], [])
            if isinstance(func, (cst.Name, cst.Attribute)):
                name = self.ctx.resolve(func)
                return ([name], []) if name else ([], [])
        if isinstance(value, cst.Name):
            known = self._value_binding(value.value)
            if known is not None:
                return list(known.instances), list(known.factories)
        return [], []

    def _value_binding(self, name: str) -> Binding | None:
        """A value binding of `name` (not a def, class or import: those stand
        for what they define, resolved by name)."""
        found = self.lookup(name)
        return None if found is None or found.kind in DEFINITIONS else found

    def flavor(self) -> str:
        """Whether the method we are in (a closure inherits it) is an instance,
        class or static method."""
        for s in reversed(self.ctx.scopes):
            if s.kind == "function" and s.self_name is not None and s.node is not None:
                decorators = decorator_names(s.node)  # type: ignore[arg-type]
                if "classmethod" in decorators:
                    return "class"
                if "staticmethod" in decorators:
                    return "static"
                return "inst"
        return "inst"

    def self_attr(self, expr: cst.BaseExpression) -> str | None:
        """`X` for `self.X` inside a method (the first parameter's name)."""
        name = self.ctx.scope.self_name
        if (
            isinstance(expr, cst.Attribute)
            and isinstance(expr.value, cst.Name)
            and name is not None
            and expr.value.value == name
        ):
            return expr.attr.value
        return None

    def receiver(self, expr: cst.BaseExpression, *, module: bool = True) -> Receiver:
        """What kind of receiver `expr` is (see Receiver); with `module` False
        module-level names are reported as "name", not "global"."""
        ctx = self.ctx
        scope = ctx.scope
        if isinstance(expr, cst.Name):
            if expr.value == scope.self_name and scope.class_qualname is not None:
                cls = f"{ctx.module}.{scope.class_qualname}"
                return Receiver("self", expr.value, cls=cls, flavor=self.flavor())
            found = self.lookup(expr.value, module=module)
            if found is not None and found.kind != "import":
                kind = "local" if found.scope != MODULE_SCOPE else "global"
                return Receiver(kind, expr.value, binding=found)
        if isinstance(expr, cst.Call) and dotted(expr.func) == "super":
            cls = ctx.enclosing_class()
            if cls is not None:
                return Receiver("super", "super()", cls=f"{ctx.module}.{cls}")
        attr = self.self_attr(expr)
        if attr is not None:
            cls = ctx.enclosing_class()
            return Receiver(
                "selfattr",
                f"self.{attr}",
                cls=f"{ctx.module}.{cls}" if cls else None,
                attr=attr,
                flavor=self.flavor(),
            )
        name = dotted(expr)
        if name is None:
            return Receiver("other", "")  # no name: the caller quotes it if it must
        head = name.partition(".")[0]
        if isinstance(expr, cst.Attribute):
            found = self.lookup(head, module=module)
            if found is not None and found.kind != "import":
                # an attribute of a local value: its class is not known here
                return Receiver("other", name, binding=found)
        return Receiver("name", name, name=ctx.resolve(expr))

    # -- recording --------------------------------------------------------------
    def _announce(
        self,
        name: cst.Name,
        kind: str,
        node: cst.CSTNode | None = None,
        *,
        where: tuple[str, str] | None = None,
        target: str | None = None,
        receiver: cst.BaseExpression | None = None,
    ) -> None:
        watchers = [w for names, w in self._watchers if name.value in names]
        if not watchers:
            return
        scope, scope_kind = where or (self.ctx.qualname, self.ctx.scope.kind)
        if scope_kind == "function" and name.value in self.globals_decl.get(scope, ()):
            scope, scope_kind = MODULE_SCOPE, "module"
        site = Site(name, kind, scope, scope_kind, node, target, receiver)
        for w in watchers:
            w(site)

    def _announce_target(self, target: cst.BaseExpression, kind: str) -> None:
        if not self._watchers:
            return
        for n in target_names(target):
            self._announce(n, kind)
        for a in attribute_targets(target):
            where = (self.ctx.qualname, "attribute")
            self._announce(a.attr, f"{kind} to an attribute", a, where=where, receiver=a.value)

    def _bind(self, name: str, binding: Binding, bound: Bound | None, scope: Any = None) -> None:
        """Record a binding of `name`: typed in its function or the module
        (class bodies are the class index's), and, with `bound`, classified by
        every Tracked value (class bodies included)."""
        s = scope or self.ctx.scope
        qual = s.qualname
        if s.kind == "function" and name in self.globals_decl.get(qual, ()):
            qual = MODULE_SCOPE
        if bound is not None:
            self._classify(qual, name, bound)
        if s.kind == "class":
            return  # a class attribute (program.classes)
        self.scopes.setdefault(qual, {})[name] = Binding(
            binding.kind, binding.instances, binding.factories, qual
        )

    def _classify(self, qual: str, name: str, bound: Bound) -> None:
        for t in self._by_name:
            table = t.names.get(qual)
            if table is None:
                table = t.names[qual] = {}
            table[name] = t.classify(bound, table.get(name))  # type: ignore[misc]

    def _bind_target(self, target: cst.BaseExpression, binding: Binding, bound: Bound) -> None:
        """Bind the names of an assignment target: a plain name to the value,
        the names a target unpacks to nothing known; and `self.X` to the value."""
        kind = type(target)  # (exact types: an isinstance against LibCST's ABCs costs)
        if kind is cst.Name:
            self._bind(target.value, binding, Bound(bound.kind, bound.value, target))  # type: ignore[attr-defined]
            return
        if kind is not cst.Attribute:
            unpacked = Bound(bound.kind)
            for n in target_names(target):
                self._bind(n.value, UNTYPED, unpacked)
            return
        if bound.value is not None:
            attr = self.self_attr(target)
            cls = self.ctx.enclosing_class() if attr is not None else None
            if attr is not None and cls is not None:
                for t in self._by_attr:
                    table = t.attrs.setdefault(cls, {})
                    fact = t.classify_attr(bound, table.get(attr))  # type: ignore[misc]
                    if fact is not None:
                        table[attr] = fact
                    else:
                        table.pop(attr, None)

    def visit_Global(self, node: cst.Global) -> None:
        if self.ctx.scope.kind == "function":
            self.globals_decl.setdefault(self.ctx.qualname, set()).update(
                n.name.value for n in node.names
            )

    def leave_Import(self, node: cst.Import) -> None:
        self.importing -= 1

    def leave_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.importing -= 1

    def visit_Import(self, node: cst.Import) -> None:
        self.importing += 1
        for alias in node.names:
            full = dotted(alias.name) or ""
            local = alias.asname.name if alias.asname is not None else alias.name
            if isinstance(local, cst.Name):
                self._announce(local, "import", node, target=full)
            self._bind(
                local.value if isinstance(local, cst.Name) else full.partition(".")[0],
                Binding("import"),
                IMPORTED,
            )

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self.importing += 1
        if isinstance(node.names, cst.ImportStar):
            return
        targets = import_bindings(node, self.ctx.module, self.ctx.is_package)
        for alias in node.names:
            local = alias.asname.name if alias.asname is not None else alias.name
            if isinstance(local, cst.Name):
                self._announce(local, "import", node, target=targets.get(local.value, ""))
                self._bind(local.value, Binding("import"), IMPORTED)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        # the dispatcher has pushed the class scope: the name binds outside it
        outer = self.ctx.scopes[-2]
        self._announce(node.name, "class", where=(outer.qualname, outer.kind))
        self._bind(node.name.value, Binding("class"), Bound("class"), outer)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        outer = self.ctx.scopes[-2]
        bound = None
        if outer.kind != "class":  # a method is no name binding
            kind = "nested def" if outer.kind == "function" else "def"
            self._announce(node.name, kind, where=(outer.qualname, outer.kind))
            bound = Bound(kind)
        self._bind(node.name.value, Binding("def"), bound, outer)
        params = self.params.setdefault(self.ctx.qualname, {})
        receiver = self.ctx.scope.self_name if outer.kind == "class" else None
        for p in all_params(node.params):
            if p.name.value != receiver:
                params[p.name.value] = p
            self._announce(p.name, "parameter", p, where=(self.ctx.qualname, "function"))
            ann = p.annotation.annotation if p.annotation is not None else None
            inst, fact = self.annotation(ann) if ann is not None else ([], [])
            self._bind(p.name.value, Binding("parameter", tuple(inst), tuple(fact)), PARAMETER)

    def visit_Lambda(self, node: cst.Lambda) -> None:
        # a lambda is its own scope: its parameters shadow nothing around it
        where = (f"{self.ctx.qualname}.<lambda>", "function")
        for p in all_params(node.params):
            self._announce(p.name, "lambda parameter", p, where=where)

    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            self._announce_target(t.target, "assignment")

    def leave_Assign(self, node: cst.Assign) -> None:
        inst, fact = self.value_types(node.value)
        binding = Binding("assignment", tuple(inst), tuple(fact))
        bound = Bound("assignment", node.value)
        for t in node.targets:
            self._bind_target(t.target, binding, bound)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._announce_target(node.target, "annotated assignment")

    def leave_AnnAssign(self, node: cst.AnnAssign) -> None:
        inst, fact = self.annotation(node.annotation.annotation)
        binding = Binding("annotation", tuple(inst), tuple(fact))
        self._bind_target(node.target, binding, Bound("annotated assignment", node.value))

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._announce_target(node.target, "augmented assignment")

    def leave_AugAssign(self, node: cst.AugAssign) -> None:
        # the type stays; Tracked values see a new value they cannot read
        if isinstance(node.target, cst.Name):
            name = node.target.value
            self._classify(self.scope_for(name), name, Bound("augmented assignment"))

    def visit_For(self, node: cst.For) -> None:
        self._announce_target(node.target, "for target")
        self._bind_target(node.target, UNTYPED, Bound("for target"))

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._announce_target(node.asname.name, "with target")

    def leave_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind_target(node.asname.name, UNTYPED, Bound("with target", node.item))

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None and isinstance(node.name.name, cst.Name):
            self._announce_target(node.name.name, "except target")
            self._bind(node.name.name.value, UNTYPED, Bound("except target"))

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._announce_target(node.target, "walrus")

    def leave_NamedExpr(self, node: cst.NamedExpr) -> None:
        inst, fact = self.value_types(node.value)
        self._bind_target(
            node.target, Binding("target", tuple(inst), tuple(fact)), Bound("walrus", node.value)
        )

    def visit_CompFor(self, node: cst.CompFor) -> None:
        # comprehension targets live in the comprehension's own scope (untyped)
        where = (f"{self.ctx.qualname}.<comprehension>", "comprehension")
        for n in target_names(node.target):
            self._announce(n, "comprehension target", where=where)
