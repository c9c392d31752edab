"""The class index: every class of the parsed tree, one model for every rule.

Per file, the "classes" part records each class (qualified name, positional
bases resolved through the file's imports, methods with their signatures and
decorators, attribute types from annotations, `self.x = Cls(...)`, typed
values and property return types), module functions' return types, the
module's import table (what it re-exports) and its module-level instances
(`X = Cls(...)`, `X: Cls`). `ClassIndex` joins them once per run: names are
resolved through re-exports, the MRO is Python's C3 linearisation, and it
answers lookup, subclasses and "what does calling this name make".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, dotted, string_value
from ctxlint.facts.typed import Span
from ctxlint.facts.visitor import FileVisitor
from ctxlint.program.binding_syntax import decorator_names
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.bindings import Bindings
from ctxlint.program.core import Program

KEY = "classes"
_MAX_HOPS = 8  # re-export chains longer than this are not followed (cycles end sooner)
PROPERTIES = frozenset(("property", "cached_property"))

# A param is [name, kind, default source | None]; kinds: po (positional-only),
# pk (positional-or-keyword), va (*args), ko (keyword-only), vk (**kwargs).
Param = list[str | None]


def raises_not_implemented(body: cst.BaseSuite) -> bool:
    """The body is (a docstring and) only `raise NotImplementedError[(...)]`."""
    if not isinstance(body, cst.IndentedBlock):
        stmts: list[cst.BaseSmallStatement] = list(body.body)
    else:
        stmts = []
        for s in body.body:
            if not isinstance(s, cst.SimpleStatementLine):
                return False
            stmts.extend(s.body)
    if stmts and isinstance(stmts[0], cst.Expr) and string_value(stmts[0].value) is not None:
        stmts = stmts[1:]
    if len(stmts) != 1 or not isinstance(stmts[0], cst.Raise) or stmts[0].exc is None:
        return False
    exc = stmts[0].exc
    if isinstance(exc, cst.Call):
        exc = exc.func
    return (dotted(exc) or "").rpartition(".")[2] == "NotImplementedError"


def _returned_name(fn: cst.FunctionDef) -> str | None:
    """`X` when the body is (a docstring and) only `return X`, a bare name."""
    body = fn.body
    if not isinstance(body, cst.IndentedBlock):
        return None
    stmts = list(body.body)
    if stmts and isinstance(stmts[0], cst.SimpleStatementLine):
        first = stmts[0].body[0]
        if isinstance(first, cst.Expr) and string_value(first.value) is not None:
            stmts = stmts[1:]
    if len(stmts) != 1 or not isinstance(stmts[0], cst.SimpleStatementLine):
        return None
    small = stmts[0].body
    if (
        len(small) == 1
        and isinstance(small[0], cst.Return)
        and isinstance(small[0].value, cst.Name)
    ):
        return small[0].value.value
    return None


def signature(p: cst.Parameters, code: Callable[[cst.CSTNode], str]) -> list[Param]:
    def one(param: cst.Param, kind: str) -> Param:
        return [param.name.value, kind, code(param.default) if param.default is not None else None]

    out = [one(x, "po") for x in p.posonly_params]
    out += [one(x, "pk") for x in p.params]
    if isinstance(p.star_arg, cst.Param):
        out.append(one(p.star_arg, "va"))
    out += [one(x, "ko") for x in p.kwonly_params]
    if p.star_kwarg is not None:
        out.append(one(p.star_kwarg, "vk"))
    return out


def _name(cls: ClassInfo, name: str) -> None:
    if name not in cls.names:
        cls.names.append(name)


def _add(types: dict[str, list[str]], attr: str, found: list[str]) -> None:
    if found:
        known = types.setdefault(attr, [])
        known.extend(t for t in found if t not in known)


@dataclass(frozen=True, slots=True)
class MethodFacts:
    params: list[Param]
    flavor: str  # inst, class or static
    decorators: list[str]
    abstract: str | None  # decorator (@abstractmethod), raise (NotImplementedError) or None
    returns: list[str]  # the classes its return annotation names instances of
    span: Span  # its name


@dataclass(frozen=True, slots=True)
class ClassInfo:
    bases: list[str]
    methods: dict[str, MethodFacts] = field(default_factory=dict)
    attrs: dict[str, list[str]] = field(default_factory=dict)  # attribute -> its classes
    # names an instance has from the class besides its methods: class-body
    # assignments, nested classes, `self.x = ...` in its methods (typed or not)
    names: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ClassFileFacts:
    exports: dict[str, str]  # the module's import table
    classes: dict[str, ClassInfo] = field(default_factory=dict)  # by qualname in the module
    functions: dict[str, list[str]] = field(default_factory=dict)  # function -> return types
    instances: dict[str, str] = field(default_factory=dict)  # module-level name -> its class
    # module function -> the module-level name it returns
    hands_out: dict[str, str] = field(default_factory=dict)


class ClassFacts(FileVisitor):
    """The per-file side: classes, function return types, exports, instances."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.classes: dict[str, ClassInfo] = {}
        self.functions: dict[str, list[str]] = {}  # module function -> return types
        self.instances: dict[str, str] = {}  # module-level name -> its class
        self.hands_out: dict[str, str] = {}  # module function -> the module name it returns

    @property
    def bindings(self) -> Bindings:
        return self.ctx.parts[BINDINGS]

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        # the dispatcher has pushed the class scope already
        # (LibCST keeps `metaclass=...` in node.keywords: bases are positional)
        bases = [b for a in node.bases if (b := self.ctx.resolve(a.value))]
        outer = self.ctx.scopes[-2]
        if outer.kind == "class" and outer.qualname in self.classes:
            _name(self.classes[outer.qualname], node.name.value)  # a nested class
        self.classes[self.ctx.qualname] = ClassInfo(bases)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        outer = self.ctx.scopes[-2]
        returns = (
            self.bindings.annotation(node.returns.annotation)[0] if node.returns is not None else []
        )
        if outer.kind == "module" and returns:
            self.functions[self.ctx.qualname] = returns  # `x = make()`
        if outer.kind == "module" and (name := _returned_name(node)) is not None:
            self.hands_out[self.ctx.qualname] = name  # `def get_parallel(): return _PARALLEL`
        cls = self.classes.get(outer.qualname) if outer.kind == "class" else None
        if cls is None:
            return
        decorators = decorator_names(node)
        if decorators & PROPERTIES:
            _add(cls.attrs, node.name.value, returns)  # `self.algo.hook()`
        flavor = (
            "static"
            if "staticmethod" in decorators
            else "class"
            if "classmethod" in decorators
            else "inst"
        )
        abstract = (
            "decorator"
            if "abstractmethod" in decorators
            else "raise"
            if "abstractproperty" not in decorators and raises_not_implemented(node.body)
            else None
        )
        cls.methods[node.name.value] = MethodFacts(
            signature(node.params, self.ctx.module_node.code_for_node),
            flavor,
            sorted(d for d in decorators if d),
            abstract,
            returns,
            self.ctx.anchor(node.name),  # type: ignore[arg-type]
        )

    def _attr(self, target: cst.BaseExpression, types: list[str], class_body: bool) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):  # `a, self.b = ...`: each, untyped
            for e in target.elements:
                self._attr(e.value, [], class_body)
            return
        if isinstance(target, cst.StarredElement):
            self._attr(target.value, [], class_body)
            return
        if class_body and isinstance(target, cst.Name):
            attr: str | None = target.value
            cls = self.ctx.qualname
        else:
            attr = self.bindings.self_attr(target)
            cls = self.ctx.enclosing_class() or ""
        if attr is not None and cls in self.classes:
            _add(self.classes[cls].attrs, attr, types)
            _name(self.classes[cls], attr)

    def _module_instance(self, target: cst.BaseExpression, cls: str | None) -> None:
        if self.ctx.scope.kind != "module" or not isinstance(target, cst.Name):
            return
        if cls is not None:
            self.instances[target.value] = cls
        else:
            self.instances.pop(target.value, None)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        inst, fact = self.bindings.annotation(node.annotation.annotation)
        self._attr(node.target, inst, self.ctx.scope.kind == "class")
        named = inst + fact
        self._module_instance(node.target, named[0] if named else None)

    def leave_Assign(self, node: cst.Assign) -> None:
        inst, _ = self.bindings.value_types(node.value)
        built = None  # only a construction (`X = Cls(...)`) makes a module-level instance
        if isinstance(node.value, cst.Call) and inst and inst[0].rpartition(".")[2][:1].isupper():
            built = inst[0]
        class_body = self.ctx.scope.kind == "class"
        for t in node.targets:
            # a class-body name is typed only by annotation; it is still defined
            self._attr(t.target, [] if class_body else inst, class_body)
            self._module_instance(t.target, built)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._attr(node.target, [], self.ctx.scope.kind == "class")

    def finish(self) -> ClassFileFacts:
        return ClassFileFacts(
            self.ctx.imports, self.classes, self.functions, self.instances, self.hands_out
        )


# -- the whole program ------------------------------------------------------------
def c3_merge(seqs: list[list[str]]) -> list[str] | None:
    """Python's C3 merge; None when the orders are inconsistent."""
    seqs = [list(s) for s in seqs if s]
    out: list[str] = []
    while seqs:
        for seq in seqs:
            head = seq[0]
            if not any(head in s[1:] for s in seqs):
                break
        else:
            return None
        out.append(head)
        seqs = [s[1:] if s[0] == head else s for s in seqs]
        seqs = [s for s in seqs if s]
    return out


class ClassIndex:
    """Every class of the parsed tree, by qualified name."""

    def __init__(self, program: Program) -> None:
        self.classes: dict[str, ClassInfo] = {}  # qualified -> class facts
        self.where: dict[str, tuple[str, str]] = {}  # qualified -> (path, class qualname)
        self.exports: dict[str, dict[str, str]] = {}  # module -> its import table
        self.functions: dict[str, list[str]] = {}  # qualified function -> return types
        self.globals: dict[str, str] = {}  # qualified module-level instance -> class
        self.hands_out: dict[str, str] = {}  # qualified function -> module name it returns
        self.modules = {entry["module"] for entry in program.files.values()}
        self.tops = {m.partition(".")[0] for m in self.modules}
        for path, module, facts in program.typed_facts(KEY, ClassFileFacts):
            self.exports[module] = facts.exports
            for qual, cls in facts.classes.items():
                self.classes.setdefault(f"{module}.{qual}", cls)
                self.where.setdefault(f"{module}.{qual}", (path, qual))
            for qual, types in facts.functions.items():
                self.functions[f"{module}.{qual}"] = types
            for name, cls in facts.instances.items():
                self.globals[f"{module}.{name}"] = cls
            for qual, name in facts.hands_out.items():
                self.hands_out[f"{module}.{qual}"] = f"{module}.{name}"
        for qual, cls in self.classes.items():  # methods' return types, as functions'
            for name, m in cls.methods.items():
                if m.returns:
                    self.functions[f"{qual}.{name}"] = m.returns
        self._resolved: dict[str, str | None] = {}
        self._linear: dict[str, list[str]] = {}
        self._mro: dict[str, tuple[str, ...]] = {}
        self._subclasses: dict[str, list[str]] | None = None

    # -- names ------------------------------------------------------------------
    def external(self, name: str) -> bool:
        """The name lies outside the parsed tree's top-level packages."""
        return name.partition(".")[0] not in self.tops

    def reexported(self, name: str) -> str | None:
        """What `pkg.name` stands for when the nearest module on its path that
        has been parsed imports `name` from elsewhere; None when it does not
        (or the import is the name itself)."""
        parts = name.split(".")
        for i in range(len(parts) - 1, 0, -1):
            exports = self.exports.get(".".join(parts[:i]))
            if exports is None:
                continue
            if parts[i] in exports:
                target = ".".join([exports[parts[i]], *parts[i + 1 :]])
                return target if target != name else None
            return None
        return None

    def follow(self, name: str, found: Callable[[str], bool]) -> str | None:
        """The first name on `name`'s re-export chain for which `found` holds."""
        seen = {name}
        for _ in range(_MAX_HOPS + 1):
            if found(name):
                return name
            nxt = self.reexported(name)
            if nxt is None or nxt in seen:
                return None
            seen.add(nxt)
            name = nxt
        return None

    def resolve(self, name: str) -> str | None:
        """The class a qualified name denotes, through re-exports; None when
        it is no class of the parsed tree."""
        if name in self.classes:
            return name
        if name not in self._resolved:
            self._resolved[name] = self.follow(name, self.classes.__contains__)
        return self._resolved[name]

    def instance(self, name: str) -> str | None:
        """The class of a module-level instance (`X = Cls(...)`), through re-exports."""
        real = self.follow(name, self.globals.__contains__)
        return self.globals[real] if real is not None else None

    def built_at_import(self, func: str) -> str | None:
        """The class of the module-level instance (`_X = Cls()`) that function
        `func` hands out (`return _X`, its whole body): an object that exists
        before anything runs, whatever the function's callers have done."""
        returned = self.hands_out.get(func)
        return self.globals.get(returned) if returned is not None else None

    def instances(self, name: str) -> list[str]:
        """Classes of the object calling `name` makes: the class itself, or
        what a function's (or a class's method's) return annotation names."""
        real = self.follow(name, lambda n: n in self.classes or n in self.functions)
        if real is None:
            owner, _, method = name.rpartition(".")
            cls = self.resolve(owner) if owner else None
            if cls is None:
                return []
            real = next(
                (f"{a}.{method}" for a in self.mro(cls) if f"{a}.{method}" in self.functions), None
            )
            if real is None:
                return []
        if real in self.classes:
            return [real]
        return [c for t in self.functions.get(real, ()) if (c := self.resolve(t)) is not None]

    # -- inheritance --------------------------------------------------------------
    def linearization(self, cls: str) -> list[str]:
        """Python's C3 MRO of `cls`, with bases outside the parsed tree as
        leaves (their own bases unknown); a cycle or an order Python would
        reject falls back to the left-first walk."""
        if cls in self._linear:
            return self._linear[cls]
        self._linear[cls] = [cls]  # cycles
        facts = self.classes.get(cls)
        if facts is None:
            return [cls]
        bases = [self.resolve(b) or b for b in facts.bases]
        bases = list(dict.fromkeys(b for b in bases if b != cls))
        lines = [self.linearization(b) for b in bases]
        merged = c3_merge([*lines, bases])
        if merged is None:  # inconsistent (Python raises TypeError): the left-first walk
            merged = list(dict.fromkeys(a for line in lines for a in line))
        out = [cls, *(a for a in merged if a != cls)]
        self._linear[cls] = out
        return out

    def mro(self, cls: str) -> tuple[str, ...]:
        """The class and its ancestors the parsed tree defines, in C3 order
        (worked out once per class: CTX501 asks ~150,000 times on sglang)."""
        found = self._mro.get(cls)
        if found is None:
            found = self._mro[cls] = tuple(c for c in self.linearization(cls) if c in self.classes)
        return found

    def definer(self, cls: str, name: str, *, skip_self: bool = False) -> str | None:
        """The first class in `cls`'s MRO defining method `name`."""
        for c in self.mro(cls)[1 if skip_self else 0 :]:
            if name in self.classes[c].methods:
                return c
        return None

    def defines(self, cls: str, name: str) -> str:
        """ "yes" when the class (or an ancestor) defines method `name`, "maybe"
        when an ancestor lies outside the tree, else "no"."""
        if self.definer(cls, name) is not None:
            return "yes"
        return "maybe" if any(self.external(a) for a in self.linearization(cls)) else "no"

    def has_attribute(self, cls: str, name: str) -> bool | None:
        """Whether an instance of `cls` has attribute `name` from its class: a
        method or property, a class-body name, a `self.name = ...` in a method
        of it or an ancestor. None where that cannot be told: an ancestor the
        parsed tree lacks (a standard-library one is asked directly), or a
        `__getattr__` that answers any name."""
        unknown = False
        for a in self.linearization(cls):
            facts = self.classes.get(a)
            if facts is None:
                found = _stdlib_attribute(a, name)
                if found:
                    return True
                unknown = unknown or found is None
            elif name in facts.methods or name in facts.names:
                return True
            elif "__getattr__" in facts.methods or "__getattribute__" in facts.methods:
                unknown = True
        return None if unknown else False

    def subclasses(self, cls: str) -> list[str]:
        """Every class of the tree deriving from `cls` (transitively), in the
        index's order (by path, then as the file defines them)."""
        if self._subclasses is None:
            self._subclasses = {}
            for c in self.classes:
                for base in self.mro(c)[1:]:
                    self._subclasses.setdefault(base, []).append(c)
        return self._subclasses.get(cls, [])

    def attr_types(self, cls: str, attr: str) -> list[str]:
        """What the nearest class in the MRO that types `self.<attr>` says it holds."""
        for a in self.mro(cls):
            types = self.classes[a].attrs.get(attr)
            if types:
                return list(types)
        return []


# Ancestors outside the tree whose instances get no attribute from them but
# `object`'s dunders: a fixed answer, the same in every process and on every
# Python (asking the running interpreter's modules would depend on what this
# process imported, and on its version).
_EMPTY_ANCESTORS = frozenset(
    ("object", "builtins.object", "abc.ABC", "typing.Generic", "typing.Protocol")
)


def _stdlib_attribute(qual: str, name: str) -> bool | None:
    """Whether the ancestor `qual`, outside the tree, gives its instances
    `name`: told only for the empty ancestors above; None for any other."""
    if qual not in _EMPTY_ANCESTORS:
        return None
    dunder = name.startswith("__") and name.endswith("__")
    return dunder or (qual == "abc.ABC" and name == "_abc_impl")


def class_index(program: Program) -> ClassIndex:
    """The run's class index. The prefilter's rounds add files to the program,
    so the memo is keyed by how many files it holds."""
    return program.memo(f"{KEY}:{len(program.files)}", lambda: ClassIndex(program), (KEY,))
