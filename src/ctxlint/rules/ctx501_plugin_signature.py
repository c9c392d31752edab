"""CTX501 plugin-signature: plugin hooks, their dispatch sites and implementations agree.

Plugin bases are derived, not listed: a class in the tree that defines abstract
methods (`@abstractmethod`) or methods whose body only raises
`NotImplementedError` (unless that method overrides one of an ancestor: then it
is an implementation declining a hook, not a new one), plus the classes named
in `plugin-bases`. Their hooks are those methods (every public method, for a
configured base). Each hook's signature is pinned in the baseline; every call
of a hook on an object of a base is checked against the base signature, and
every in-tree implementation (transitively, across modules) must accept what
the base and its dispatch sites pass.

Facts are per file and resolution-free beyond the file's import table: class
definitions (resolved base names, method signatures, attribute types) and
method calls on receivers whose class can be told (`self`, `super()`,
annotated parameters/locals/attributes, objects constructed in the scope);
derive() joins them into the class graph.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, dotted, string_value
from ctxlint.facts.visitor import FileVisitor
from ctxlint.facts.vocab import Vocabulary
from ctxlint.program.core import Program
from ctxlint.program.rule import PinSite, RawFinding, Rule, pin_findings

ID = "CTX501"
PLUGIN_BASES = "plugin-bases"
_UNION_HEADS = ("Optional", "Union", "Annotated", "ClassVar", "Final")
_TYPE_HEADS = ("type", "Type")
_NOT_METHODS = frozenset(
    ("property", "cached_property", "setter", "deleter", "getter", "overload", "register")
)
_MAPPING_HEADS = ("dict", "Dict", "Mapping", "MutableMapping", "OrderedDict", "defaultdict")

# Param kinds: po (positional-only), pk (positional-or-keyword), va (*args),
# ko (keyword-only), vk (**kwargs). A param is [name, kind, default-source|None].
Param = list[Any]


# -- per-file extraction ---------------------------------------------------------
def _raises_not_implemented(body: cst.BaseSuite) -> bool:
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


class PluginVisitor(FileVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.classes: dict[str, dict[str, Any]] = {}
        self.calls: list[dict[str, Any]] = []
        # function qualname -> instance types its return annotation names
        self.returns: dict[str, list[str]] = {}
        # `if isinstance(x, T):` bodies: [receiver text, types, active, id(orelse)] or None
        self.narrow: list[list[Any] | None] = []
        # scope qualname -> name -> (instance types, factory types), statement order
        self.env: dict[str, dict[str, tuple[list[str], list[str]]]] = {}

    # -- types ------------------------------------------------------------------
    def _ann(self, ann: cst.BaseExpression, depth: int = 0) -> tuple[list[str], list[str]]:
        """(instance types, factory types) an annotation names, as resolved names."""
        if depth > 4:
            return [], []
        text = string_value(ann)
        if text is not None:
            try:
                ann = cst.parse_expression(text)
            except (cst.ParserSyntaxError, ValueError):
                return [], []
        if isinstance(ann, cst.BinaryOperation) and isinstance(ann.operator, cst.BitOr):
            a, b = self._ann(ann.left, depth + 1), self._ann(ann.right, depth + 1)
            return a[0] + b[0], a[1] + b[1]
        if isinstance(ann, cst.Subscript):
            head = (dotted(ann.value) or "").rpartition(".")[2]
            elems = [e.slice.value for e in ann.slice if isinstance(e.slice, cst.Index)]
            if head in _UNION_HEADS:
                inst: list[str] = []
                fact: list[str] = []
                for e in elems[:1] if head in ("Annotated", "ClassVar", "Final") else elems:
                    i, f = self._ann(e, depth + 1)
                    inst += i
                    fact += f
                return inst, fact
            if head in _TYPE_HEADS and elems:
                return [], self._ann(elems[0], depth + 1)[0]
            if head in _MAPPING_HEADS and len(elems) == 2:
                return [], self._ann(elems[1], depth + 1)[1]  # a registry of classes
            return [], []
        if isinstance(ann, (cst.Name, cst.Attribute)):
            name = self.ctx.resolve(ann)
            if name and name.rpartition(".")[2] not in ("None", "Any", "object"):
                return [name], []
        return [], []

    def _lookup(self, name: str) -> tuple[list[str], list[str]] | None:
        for s in reversed(self.ctx.scopes):
            if s.kind == "class":
                continue
            found = self.env.get(s.qualname, {}).get(name)
            if found is not None:
                return found
        return None

    def _value_types(self, value: cst.BaseExpression) -> tuple[list[str], list[str]]:
        """What an assigned value is: constructed, a registry pick, a typed name."""
        if isinstance(value, cst.Call):
            func = value.func
            if isinstance(func, cst.Name):
                known = self._lookup(func.value)
                if known is not None:
                    return list(known[1]), []  # `spec_class(...)` with spec_class: type[T]
            holder = func
            if isinstance(holder, cst.Subscript):
                holder = holder.value  # REGISTRY[name]()
            elif isinstance(holder, cst.Call) and isinstance(holder.func, cst.Attribute):
                if holder.func.attr.value == "get":
                    holder = holder.func.value  # REGISTRY.get(name)()
            if holder is not func and isinstance(holder, cst.Name):
                known = self._lookup(holder.value)
                return (list(known[1]), []) if known else ([], [])
            if isinstance(func, (cst.Name, cst.Attribute)):
                name = self.ctx.resolve(func)
                return ([name], []) if name else ([], [])
        if isinstance(value, cst.Name):
            known = self._lookup(value.value)
            if known is not None:
                return list(known[0]), list(known[1])
        return [], []

    def _bind(self, name: str, types: tuple[list[str], list[str]]) -> None:
        env = self.env.setdefault(self.ctx.qualname, {})
        if types[0] or types[1]:
            env[name] = types
        else:
            env.pop(name, None)
            if self.ctx.in_function():
                env[name] = ([], [])  # a local rebinding hides an outer typed name

    def _attr_types(self, attr: str, types: list[str]) -> None:
        cls = self.ctx.enclosing_class()
        if cls in self.classes and types:
            known = self.classes[cls]["attrs"].setdefault(attr, [])
            known.extend(t for t in types if t not in known)

    # -- classes and methods ----------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        bases = []
        for arg in node.bases:
            if arg.keyword is None:
                name = self.ctx.resolve(arg.value)
                if name:
                    bases.append(name)
        self.classes[self.ctx.qualname] = {"bases": bases, "methods": {}, "attrs": {}}

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        scopes = self.ctx.scopes
        outer = scopes[-2]
        env = self.env.setdefault(self.ctx.qualname, {})
        p = node.params
        for param in (*p.posonly_params, *p.params, *p.kwonly_params):
            if param.annotation is not None:
                types = self._ann(param.annotation.annotation)
                if types[0] or types[1]:
                    env[param.name.value] = types
        returns = self._ann(node.returns.annotation)[0] if node.returns is not None else []
        if returns and outer.kind != "function":
            self.returns[self.ctx.qualname] = returns  # `x = make()` / `X.from_string()`
        if outer.kind != "class" or outer.qualname not in self.classes:
            return
        decorators = {(dotted(d.decorator) or "").rpartition(".")[2] for d in node.decorators}
        if decorators & {"property", "cached_property"} and returns:
            attrs = self.classes[outer.qualname]["attrs"].setdefault(node.name.value, [])
            attrs.extend(t for t in returns if t not in attrs)  # `self.algo.hook()`
        if decorators & _NOT_METHODS:
            return  # properties, overload stubs, dispatch registrations: never called as hooks
        flavor = (
            "static"
            if "staticmethod" in decorators
            else "class"
            if "classmethod" in decorators
            else "inst"
        )
        abstract = "abstractmethod" in decorators or (
            "abstractproperty" not in decorators and _raises_not_implemented(node.body)
        )
        self.classes[outer.qualname]["methods"][node.name.value] = {
            "params": self._params(node.params),
            "flavor": flavor,
            "abstract": "decorator"
            if "abstractmethod" in decorators
            else "raise"
            if abstract
            else None,
            "span": self.ctx.anchor(node.name),
        }

    def _params(self, p: cst.Parameters) -> list[Param]:
        code = self.ctx.module_node.code_for_node

        def one(param: cst.Param, kind: str) -> Param:
            default = code(param.default) if param.default is not None else None
            return [param.name.value, kind, default]

        out = [one(x, "po") for x in p.posonly_params]
        out += [one(x, "pk") for x in p.params]
        if isinstance(p.star_arg, cst.Param):
            out.append(one(p.star_arg, "va"))
        out += [one(x, "ko") for x in p.kwonly_params]
        if p.star_kwarg is not None:
            out.append(one(p.star_kwarg, "vk"))
        return out

    # -- bindings ---------------------------------------------------------------
    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        types = self._ann(node.annotation.annotation)
        target = node.target
        if isinstance(target, cst.Name):
            if self.ctx.scope.kind == "class":
                self._attr_types(target.value, types[0])
            else:
                self._bind(target.value, types)
        elif self.ctx.records.self_attr(target) is not None:
            self._attr_types(target.attr.value, types[0])  # type: ignore[attr-defined]

    def leave_Assign(self, node: cst.Assign) -> None:
        types = self._value_types(node.value)
        for t in node.targets:
            target = t.target
            if isinstance(target, cst.Name):
                if self.ctx.scope.kind != "class":
                    self._bind(target.value, types)
            elif self.ctx.records.self_attr(target) is not None:
                self._attr_types(target.attr.value, types[0])  # type: ignore[attr-defined]

    # -- calls ------------------------------------------------------------------
    def _receiver(self, recv: cst.BaseExpression) -> dict[str, Any] | None:
        scope = self.ctx.scope
        cls = self.ctx.enclosing_class()
        if isinstance(recv, cst.Name):
            if scope.self_name is not None and recv.value == scope.self_name and cls:
                flavor = self._flavor()
                return {"k": "self", "cls": cls} if flavor == "inst" else None
            known = self._lookup(recv.value)
            if known is not None and known[0]:
                return {"k": "types", "t": known[0]}
            return None
        if (
            isinstance(recv, cst.Call)
            and isinstance(recv.func, cst.Name)
            and recv.func.value == "super"
            and cls
        ):
            return {"k": "super", "cls": cls}
        attr = self.ctx.records.self_attr(recv)
        if attr is not None and cls and self._flavor() == "inst":
            return {"k": "attr", "cls": cls, "n": attr}
        return None

    def _flavor(self) -> str:
        """Whether the method we are in (not a closure) takes an instance."""
        for s in reversed(self.ctx.scopes):
            if s.kind == "function" and s.self_name is not None and s.node is not None:
                decorators = {
                    (dotted(d.decorator) or "").rpartition(".")[2]
                    for d in s.node.decorators  # type: ignore[attr-defined]
                }
                if "classmethod" in decorators:
                    return "class"
                if "staticmethod" in decorators:
                    return "static"
                return "inst"
        return "inst"

    # -- isinstance narrowing --------------------------------------------------
    def _leave_branch(self, node: cst.CSTNode) -> None:
        for n in self.narrow:
            if n is not None and n[3] == id(node):
                n[2] = False  # the else/elif of a narrowing `if` is not narrowed

    def visit_If(self, node: cst.If) -> None:
        self._leave_branch(node)
        test = node.test
        while isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
            test = test.left
        entry = None
        if (
            isinstance(test, cst.Call)
            and isinstance(test.func, cst.Name)
            and test.func.value == "isinstance"
            and len(test.args) == 2
        ):
            target = dotted(test.args[0].value)
            spec = test.args[1].value
            elems = [e.value for e in spec.elements] if isinstance(spec, cst.Tuple) else [spec]
            types = [
                r
                for e in elems
                if isinstance(e, (cst.Name, cst.Attribute)) and (r := self.ctx.resolve(e))
            ]
            if target and types:
                entry = [target, types, True, id(node.orelse) if node.orelse else None]
        self.narrow.append(entry)

    def visit_Else(self, node: cst.Else) -> None:
        self._leave_branch(node)

    def leave_If(self, node: cst.If) -> None:
        self.narrow.pop()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if not isinstance(func, cst.Attribute):
            return
        method = func.attr.value
        if method.startswith("__") and method.endswith("__"):
            return
        recv = None
        if self.narrow:
            text = dotted(func.value)
            for n in reversed(self.narrow):
                if n is not None and n[2] and n[0] == text:
                    recv = {"k": "types", "t": n[1]}
                    break
        recv = recv or self._receiver(func.value)
        if recv is None:
            return
        self.calls.append(
            {
                "m": method,
                "r": recv,
                "npos": sum(1 for a in node.args if a.keyword is None and not a.star),
                "star": any(a.star == "*" for a in node.args),
                "kws": [a.keyword.value for a in node.args if a.keyword is not None],
                "dstar": any(a.star == "**" for a in node.args),
                "scope": self.ctx.qualname,
                "snippet": self.ctx.snippet(node),
                "span": self.ctx.anchor(node),
            }
        )

    def finish(self) -> Any:
        out: dict[str, Any] = {"imports": self.ctx.imports}
        for key, value in (
            ("classes", self.classes),
            ("calls", self.calls),
            ("returns", self.returns),
        ):
            if value:
                out[key] = value
        return out


# -- signatures ------------------------------------------------------------------
def sig_text(params: list[Param]) -> str:
    """`(self, batch, /, k=1, *args, flag=False, **kw)`, from the param list."""
    parts: list[str] = []
    star_done = False
    for i, (name, kind, default) in enumerate(params):
        if kind == "va":
            parts.append(f"*{name}")
            star_done = True
            continue
        if kind == "vk":
            parts.append(f"**{name}")
            continue
        if kind == "ko" and not star_done:
            parts.append("*")
            star_done = True
        parts.append(f"{name}={default}" if default is not None else name)
        if kind == "po" and (i + 1 == len(params) or params[i + 1][1] != "po"):
            parts.append("/")
    return f"({', '.join(parts)})"


def bound(method: dict[str, Any]) -> list[Param]:
    """The params a caller of an instance's method supplies (self/cls dropped)."""
    params = method["params"]
    if method["flavor"] != "static" and params and params[0][1] in ("po", "pk"):
        return params[1:]
    return params


def call_problems(params: list[Param], call: dict[str, Any]) -> list[str]:
    """Why `call` cannot bind to `params`; nothing when it can or cannot be told."""
    positional = [p for p in params if p[1] in ("po", "pk")]
    has_va = any(p[1] == "va" for p in params)
    has_vk = any(p[1] == "vk" for p in params)
    out: list[str] = []
    npos = call["npos"]
    if npos > len(positional) and not has_va:  # unpacking can only add more
        out.append(f"{npos} positional arguments, the hook takes {len(positional)}")
    by_keyword = {p[0] for p in params if p[1] in ("pk", "ko")}
    for kw in call["kws"]:
        if kw not in by_keyword and not has_vk:
            out.append(f"unknown keyword `{kw}`")
    given = set(call["kws"])
    if not (call["star"] or call["dstar"]):  # unpacked arguments may fill any positional
        for i, (name, _kind, default) in enumerate(positional):
            if default is None and i >= npos and name not in given:
                out.append(f"missing required `{name}`")
    if not call["dstar"]:
        for name, kind, default in params:
            if kind == "ko" and default is None and name not in given:
                out.append(f"missing required keyword `{name}`")
    return out


def accept_problems(impl: list[Param], base: list[Param], *, dispatched: bool) -> list[str]:
    """Where an override breaks the base hook's contract.

    Always: nothing newly required (a parameter the base lacks, or makes
    optional) and the base's required keyword-only parameters accepted. The
    base's required positional count matters only while no dispatch site is
    known: once one is, what the dispatch passes is checked call by call (a
    dispatch passing the base's parameters by keyword needs no positional
    slot for them). A base catch-all (`*args`, `**kwargs`) declares no
    contract for what it absorbs.
    """
    b_pos = [p for p in base if p[1] in ("po", "pk")]
    i_pos = [p for p in impl if p[1] in ("po", "pk")]
    b_va = any(p[1] == "va" for p in base)
    b_vk = any(p[1] == "vk" for p in base)
    i_va = any(p[1] == "va" for p in impl)
    i_vk = any(p[1] == "vk" for p in impl)
    out: list[str] = []
    required = sum(1 for p in b_pos if p[2] is None)
    if not dispatched and not i_va and len(i_pos) < required:
        out.append(f"takes {len(i_pos)} positional arguments where the base passes {required}")
    for j, (name, kind, default) in enumerate(i_pos):
        if default is not None:
            continue
        if j >= len(b_pos) and not b_va and not (b_vk and kind == "pk"):
            # (a base `**kwargs` may carry it by keyword)
            out.append(f"requires `{name}`, which the base does not pass")
        elif j < len(b_pos) and b_pos[j][2] is not None:
            out.append(f"requires `{name}`, which the base makes optional")
    i_names = {p[0] for p in impl if p[1] in ("pk", "ko")}
    b_ko = {p[0]: p for p in base if p[1] == "ko"}
    for name, kind, default in impl:
        if kind == "ko" and default is None and name not in b_ko and not b_vk:
            out.append(f"requires keyword `{name}`, which the base does not pass")
    for name, (_, _, default) in sorted(b_ko.items()):
        if default is None and name not in i_names and not i_vk:
            out.append(f"does not accept keyword `{name}`")
        elif default is not None and any(
            p[0] == name and p[2] is None and p[1] in ("pk", "ko") for p in impl
        ):
            out.append(f"requires `{name}`, which the base makes optional")
    return list(dict.fromkeys(out))


# -- the whole program -------------------------------------------------------------
class Graph:
    """Classes of every file, their resolved bases, and the plugin bases."""

    def __init__(self, program: Program) -> None:
        self.program = program
        self.classes: dict[str, dict[str, Any]] = {}  # qualified -> class facts
        self.where: dict[str, tuple[str, str]] = {}  # qualified -> (path, class qualname)
        self.imports: dict[str, dict[str, str]] = {}  # module -> import table
        self.returns: dict[str, list[str]] = {}  # qualified function -> return types
        for path, module, facts in program.facts(ID):
            self.imports[module] = facts.get("imports", {})
            for qual, cls in facts.get("classes", {}).items():
                self.classes[f"{module}.{qual}"] = cls
                self.where[f"{module}.{qual}"] = (path, qual)
            for qual, types in facts.get("returns", {}).items():
                self.returns[f"{module}.{qual}"] = types
        self._resolved: dict[str, str | None] = {}
        self._mro: dict[str, list[str]] = {}
        configured = program.config.options.get(PLUGIN_BASES, [])
        self.configured = [str(c) for c in configured]
        self.bases = self._bases()

    def resolve(self, name: str, depth: int = 0) -> str | None:
        """The class (or annotated function) a qualified name denotes, through re-exports."""
        if name in self.classes or name in self.returns:
            return name
        if depth > 8:
            return None
        if name in self._resolved:
            return self._resolved[name]
        self._resolved[name] = None  # cycles
        module, _, attr = name.rpartition(".")
        target = self.imports.get(module, {}).get(attr)
        found = self.resolve(target, depth + 1) if target and target != name else None
        self._resolved[name] = found
        return found

    def instances(self, name: str) -> list[str]:
        """Classes of the object a name yields when called: the class itself, or
        what a function's (or a class's method's) return annotation names."""
        real = self.resolve(name)
        if real is None:
            owner, _, method = name.rpartition(".")
            cls = self.resolve(owner) if owner else None
            if cls is None or cls not in self.classes:
                return []
            real = next(
                (f"{a}.{method}" for a in self.mro(cls) if f"{a}.{method}" in self.returns), None
            )
            if real is None:
                return []
        if real in self.classes:
            return [real]
        return [c for t in self.returns.get(real, ()) if (c := self.resolve(t)) in self.classes]

    def mro(self, cls: str) -> list[str]:
        """The class and its in-tree ancestors, nearest first (a linear walk)."""
        if cls in self._mro:
            return self._mro[cls]
        self._mro[cls] = [cls]
        out = [cls]
        for b in self.classes[cls]["bases"]:
            real = self.resolve(b)
            if real not in self.classes:
                continue
            for a in self.mro(real):
                if a not in out:
                    out.append(a)
        self._mro[cls] = out
        return out

    def _bases(self) -> dict[str, dict[str, dict[str, Any]]]:
        """Plugin base -> hook -> method facts."""
        out: dict[str, dict[str, dict[str, Any]]] = {}
        for qual, cls in self.classes.items():
            ancestors = self.mro(qual)[1:]
            hooks = {}
            for name, m in cls["methods"].items():
                if name.startswith("__") or m["abstract"] is None:
                    continue
                if m["abstract"] == "raise" and any(
                    name in self.classes[a]["methods"] for a in ancestors
                ):
                    continue  # an implementation declining a hook, not a new hook
                hooks[name] = m
            if hooks:
                out[qual] = hooks
        for name in self.configured:
            real = self.resolve(name)
            if real not in self.classes:
                continue
            hooks = out.setdefault(real, {})
            for mname, m in self.classes[real]["methods"].items():
                if not mname.startswith("_"):
                    hooks.setdefault(mname, m)
        return out

    def hook_base(self, cls: str, hook: str) -> str | None:
        """The nearest plugin base in `cls`'s ancestry (itself included) declaring `hook`."""
        if cls not in self.classes:
            return None
        for a in self.mro(cls):
            if hook in self.bases.get(a, ()):
                return a
        return None

    def implementations(self) -> dict[str, list[str]]:
        """In-tree subclass -> the plugin bases it derives from."""
        out: dict[str, list[str]] = {}
        for qual in self.classes:
            bases = [a for a in self.mro(qual)[1:] if a in self.bases]
            if bases:
                out[qual] = bases
        return out

    def receiver_types(self, module: str, recv: dict[str, Any]) -> list[str]:
        k = recv["k"]
        if k == "self":
            return [f"{module}.{recv['cls']}"]
        if k == "super":
            cls = f"{module}.{recv['cls']}"
            return self.mro(cls)[1:2] if cls in self.classes else []
        if k == "attr":
            cls = f"{module}.{recv['cls']}"
            if cls not in self.classes:
                return []
            for a in self.mro(cls):
                types = self.classes[a]["attrs"].get(recv["n"])
                if types:
                    return [c for t in types for c in self.instances(t)]
            return []
        return [c for t in recv["t"] for c in self.instances(t)]

    def dispatches(self) -> Iterator[tuple[str, dict[str, Any], str, str, int]]:
        """(path, call, base, definer) for every call of a hook on a plugin object.

        `definer` is the nearest class defining the method for the receiver's
        type: the base itself, or an override between (whose own signature
        binds the call, and which is checked against the base separately)."""
        for path, module, facts in self.program.facts(ID):
            for call in facts.get("calls", ()):
                seen: set[str] = set()
                types = self.receiver_types(module, call["r"])
                for t in types:
                    base = self.hook_base(t, call["m"])
                    if base is None or base in seen:
                        continue
                    seen.add(base)
                    definer = next(
                        a for a in self.mro(t) if call["m"] in self.classes[a]["methods"]
                    )
                    yield path, call, base, definer, len(set(types))


class PluginSignature(Rule):
    id = ID
    name = "plugin-signature"
    summary = (
        "A plugin hook called, or implemented, with a signature the plugin base does not "
        "declare; hook signatures are pinned in the baseline"
    )
    visitor = PluginVisitor
    options: ClassVar[dict[str, Any]] = {PLUGIN_BASES: []}

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return {"NotImplementedError", "abstractmethod"}

    def more_tokens(self, program: Program) -> set[str]:
        """Names of bases and their subclasses so far: implementations and
        dispatch sites in other files mention one of them."""
        graph = Graph(program)
        names = {c.rpartition(".")[2] for c in graph.configured}
        names |= {b.rpartition(".")[2] for b in graph.bases}
        names |= {i.rpartition(".")[2] for i in graph.implementations()}
        return names

    def derive(self, program: Program) -> dict[str, Any]:
        graph = Graph(program)
        return {
            "plugin bases": {
                base: {h: sig_text(m["params"]) for h, m in sorted(hooks.items())}
                for base, hooks in sorted(graph.bases.items())
            },
            "configured plugin bases not found": sorted(
                c for c in graph.configured if graph.resolve(c) not in graph.classes
            ),
            "implementations": {
                impl: sorted(bases) for impl, bases in sorted(graph.implementations().items())
            },
            "dispatch sites": sorted(
                f"{path}:{call['span'][0]} {call['snippet'][:80]} -> {base}.{call['m']}"
                for path, call, base, _, _ in graph.dispatches()
            ),
        }

    def pins(self, program: Program) -> dict[str, Any]:
        graph = Graph(program)
        return {
            f"{base}.{hook}": sig_text(m["params"])
            for base, hooks in graph.bases.items()
            for hook, m in hooks.items()
        }

    def check(self, program: Program) -> Iterable[RawFinding]:
        graph = Graph(program)
        out: list[RawFinding] = []
        # dispatch sites against the base signature
        sites: dict[tuple[str, str], list[tuple[str, dict[str, Any]]]] = {}
        for path, call, base, definer, ntypes in graph.dispatches():
            hook = graph.classes[definer]["methods"][call["m"]]
            problems = call_problems(bound(hook), call)
            if definer == base and not problems:
                # a call the base contract allows: implementations must take it too
                sites.setdefault((base, call["m"]), []).append((path, call))
            if not problems or (definer != base and ntypes > 1):
                # an override binds the call only when it is the receiver's one class
                continue
            if definer == base:
                whose = "plugin hook"
                result = "a plugin that follows the base signature fails here with a TypeError"
            else:
                whose = f"{_short(base)} hook override"
                result = "this call raises TypeError"
            hook_name = f"{_short(definer)}.{call['m']}"
            out.append(
                RawFinding(
                    ID,
                    path,
                    call["scope"],
                    call["snippet"],
                    call["span"],
                    f"call of {whose} `{hook_name}` does not fit its signature "
                    f"({_first(problems)}): {result}",
                    _details(
                        [f"hook: {hook_name}{sig_text(hook['params'])}"],
                        problems,
                    ),
                )
            )
        # implementations against the base contract and what its dispatch passes
        for impl, _ in sorted(graph.implementations().items()):
            path, qual = graph.where[impl]
            for name, m in sorted(graph.classes[impl]["methods"].items()):
                base = next(
                    (a for a in graph.mro(impl)[1:] if name in graph.bases.get(a, ())), None
                )
                if base is None:
                    continue
                hook = graph.bases[base][name]
                if m["flavor"] != hook["flavor"]:
                    continue  # a static/class override of an instance hook: not comparable
                calls = sites.get((base, name), [])
                problems = accept_problems(bound(m), bound(hook), dispatched=bool(calls))
                for site_path, call in calls:
                    for p in call_problems(bound(m), _through(call, bound(hook))):
                        problems.append(f"{p} at the dispatch {site_path}:{call['span'][0]}")
                if problems:
                    problems = list(dict.fromkeys(problems))
                    out.append(
                        RawFinding(
                            ID,
                            path,
                            f"{qual}.{name}",
                            f"def {name}{sig_text(m['params'])}",
                            m["span"],
                            f"`{_short(impl)}.{name}` does not accept what the plugin base "
                            f"`{_short(base)}.{name}` is called with ({_first(problems)})",
                            _details(
                                [
                                    f"override: {_short(impl)}.{name}{sig_text(m['params'])}",
                                    f"base: {_short(base)}.{name}{sig_text(hook['params'])}",
                                ],
                                problems,
                            ),
                        )
                    )
        out.extend(self._pin_findings(program, graph))
        return out

    def _pin_findings(self, program: Program, graph: Graph) -> list[RawFinding]:
        """Pins are enforced once the baseline records CTX501 pins at all: a run
        with no baseline (spec examples, a first look at a tree) has nowhere to
        record them, and `baseline update` writes the section."""
        if ID not in program.pinned:
            return []
        sites: dict[str, PinSite] = {}
        for base, hooks in graph.bases.items():
            path, qual = graph.where[base]
            for hook, m in hooks.items():
                sites[f"{base}.{hook}"] = PinSite(path, f"{qual}.{hook}", f"def {hook}", m["span"])
        return pin_findings(ID, program, self.pins(program), sites)


def _through(call: dict[str, Any], base: list[Param]) -> dict[str, Any]:
    """The part of a dispatch call that the base's named parameters take: what
    a base catch-all absorbs is no implementation's contract."""
    named = {p[0] for p in base if p[1] in ("pk", "ko")}
    npos = min(call["npos"], sum(1 for p in base if p[1] in ("po", "pk")))
    return {
        **call,
        "npos": npos,
        "kws": [k for k in call["kws"] if k in named],
        # what the catch-all carries is unknown: it may fill any further parameter
        "star": call["star"] or any(p[1] == "va" for p in base),
        "dstar": call["dstar"] or any(p[1] == "vk" for p in base),
    }


def _first(problems: list[str]) -> str:
    """The first problem, and how many more: a message stays one short sentence
    (SGLang's reached 1,911 characters); the rest is in the details."""
    more = len(problems) - 1
    return problems[0] + (f", and {more} more problem{'s' if more > 1 else ''}" if more else "")


def _details(signatures: list[str], problems: list[str]) -> str:
    """The signatures compared and every problem, one a line (`--show-details`)."""
    return "\n".join([*signatures, "problems:", *(f"  - {p}" for p in problems)])


def _short(qual: str) -> str:
    return qual.rpartition(".")[2]


RULE = PluginSignature()
