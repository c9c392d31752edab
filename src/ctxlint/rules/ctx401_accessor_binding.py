"""CTX401 accessor-binding: an accessor name means the process-wide bag.

Every bag accessor (and the seed accessor) is a module function of the runtime
module, takes no arguments, and a module binds the name once, to that function.
A same-named import from elsewhere, a def, a class, an assignment, a parameter,
a loop/with/except/comprehension target or a walrus all import fine and fail
only when that path runs; a function-local binding makes every use in the
function the local (and one before it an UnboundLocalError). Member shapes
(`manager.get_disagg()`, `self.get_disagg = get_disagg`) are an AttributeError
at call time, unless the receiver is the runtime module or an instance of a
class that really defines the method (derived from the class facts, through
inheritance). ruff's F811 on accessor names is merged in, with its origin named.
The runtime module is exempt from the binding checks: it defines the names.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterable, Iterator
from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, dotted, import_bindings, string_value
from ctxlint.facts.visitor import FileVisitor
from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.core import Program
from ctxlint.program.rule import RawFinding, Rule

ID = "CTX401"
_MISSING: Any = object()
_TYPE_WRAPPERS = ("Optional", "Annotated", "Final", "ClassVar")
_RUFF_NAME = re.compile(r"`([^`]+)`")
_RUFF_TIMEOUT_S = 120


def accessor_names(vocab: Vocabulary) -> set[str]:
    """The runtime module's accessors. A seed accessor found in the record's module
    (a legacy `get_global_server_args`) is not a name the runtime module owns: a
    rival record's function of that name, or an import of the legacy one, is fine."""
    return {
        *vocab.bag_accessors,
        *(s for s in vocab.seed_accessors if s not in vocab.accessor_modules),
    }


def _target_names(target: cst.BaseExpression) -> Iterator[cst.Name]:
    if isinstance(target, cst.Name):
        yield target
    elif isinstance(target, (cst.Tuple, cst.List)):
        for e in target.elements:
            yield from _target_names(e.value)
    elif isinstance(target, cst.StarredElement):
        yield from _target_names(target.value)


def _attribute_targets(target: cst.BaseExpression) -> Iterator[cst.Attribute]:
    if isinstance(target, cst.Attribute):
        yield target
    elif isinstance(target, (cst.Tuple, cst.List)):
        for e in target.elements:
            yield from _attribute_targets(e.value)
    elif isinstance(target, cst.StarredElement):
        yield from _attribute_targets(target.value)


def _dynamic_base(call: cst.Call) -> cst.BaseExpression | None:
    """The first base of a class made by `type(name, (Base, ...), namespace)`."""
    args = [a.value for a in call.args if a.keyword is None and not a.star]
    if dotted(call.func) != "type" or len(args) != 3 or not isinstance(args[1], cst.Tuple):
        return None
    bases = args[1].elements
    if bases and isinstance(bases[0].value, (cst.Name, cst.Attribute)):
        return bases[0].value
    return None


def _class_expr(ann: cst.BaseExpression) -> cst.BaseExpression | None:
    """The class an annotation names: unwraps strings, Optional[...], `X | None`,
    type[X]; None for containers and anything else."""
    text = string_value(ann)
    if text is not None:
        try:
            ann = cst.parse_expression(text)
        except cst.ParserSyntaxError:
            return None
    if isinstance(ann, cst.Subscript):
        head = (dotted(ann.value) or "").rpartition(".")[2]
        first = ann.slice[0].slice
        if head in (*_TYPE_WRAPPERS, "type", "Type") and isinstance(first, cst.Index):
            return _class_expr(first.value)
        return None
    if isinstance(ann, cst.BinaryOperation) and isinstance(ann.operator, cst.BitOr):
        for side in (ann.left, ann.right):
            if not (isinstance(side, cst.Name) and side.value == "None"):
                return _class_expr(side)
        return None
    return ann if isinstance(ann, (cst.Name, cst.Attribute)) else None


class AccessorBindingVisitor(FileVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        vocab = ctx.vocab
        assert vocab is not None
        self.names = accessor_names(vocab)
        self.runtime = vocab.runtime_module
        self.is_runtime = ctx.module == vocab.runtime_module
        self.bindings: list[dict[str, Any]] = []
        self.calls: list[dict[str, Any]] = []  # accessor-named calls with arguments
        self.members: list[dict[str, Any]] = []  # `recv.get_x` references and bindings
        self.classes: list[dict[str, Any]] = []
        self.globals: dict[str, str] = {}  # module-level name -> class it is typed/built as
        self.imports: dict[str, str] = {}  # module-level accessor-named import -> target
        self._open: list[dict[str, Any]] = []
        self._skip: set[int] = set()  # attribute nodes that are binding targets / in imports
        self._in_import = 0
        # function scope -> local name -> ("ann", expr) | ("call", func) | ("other",)
        self._locals: dict[str, dict[str, tuple[Any, ...]]] = {}
        self._globals_decl: dict[str, set[str]] = {}
        self._attr_types: dict[str, dict[str, tuple[Any, ...]]] = {}  # class -> attr -> type
        self._pending: list[tuple[str, str, dict[str, Any]]] = []  # (class, attr, member)
        self._legit: list[tuple[cst.CSTNode, str, str]] = []  # runtime imports: node, name, scope
        self._counts: dict[str, int] = {}  # accessor name -> bindings of it (for F811)
        # function scope -> accessor names called before any local binding of them
        self._called: dict[str, set[str]] = {}
        self._bound_so_far: dict[str, set[str]] = {}  # function scope -> names bound so far

    # -- helpers ------------------------------------------------------------
    def _qual(self, local: str) -> str:
        return f"{self.ctx.module}.{local}"

    def _function_chain(self) -> list[str]:
        """Qualnames of the enclosing function scopes, innermost first."""
        out = []
        for s in reversed(self.ctx.scopes):
            if s.kind == "function":
                out.append(s.qualname)
            elif s.kind == "class":
                continue
            else:
                break
        return out

    def _bind(
        self,
        name_node: cst.Name,
        kind: str,
        *,
        scope: str | None = None,
        scope_kind: str | None = None,
        target: str | None = None,
        node: cst.CSTNode | None = None,
    ) -> None:
        """A binding of a name in the current scope (or the given one)."""
        name = name_node.value
        scope = scope if scope is not None else self.ctx.qualname
        scope_kind = scope_kind or self.ctx.scope.kind
        if scope_kind == "function" and name in self._globals_decl.get(scope, ()):
            scope, scope_kind = "<module>", "module"
        if name not in self.names:
            return
        self._counts[name] = self._counts.get(name, 0) + 1
        if scope_kind == "function":
            self._bound_so_far.setdefault(scope, set()).add(name)
        if scope_kind == "module":  # the last module-level binding is what others import
            if target is not None:
                self.imports[name] = target
            else:
                self.imports.pop(name, None)
        if self.is_runtime:
            return
        if target == f"{self.runtime}.{name}":
            self._legit.append((node or name_node, name, scope))
            if scope_kind == "function" and name in self._called.get(scope, ()):
                # called above the function's first binding of the name (this
                # import): UnboundLocalError on that path
                self.bindings.append(self._fact(name_node, name, "late import", scope, "function"))
            return
        fact = self._fact(name_node, name, kind, scope, scope_kind, node)
        if target is not None:
            fact["target"] = target
        self.bindings.append(fact)

    def _fact(
        self,
        name_node: cst.Name,
        name: str,
        kind: str,
        scope: str,
        scope_kind: str,
        node: cst.CSTNode | None = None,
    ) -> dict[str, Any]:
        snippet = self.ctx.snippet(node) if node is not None else f"{kind} {name}"
        return {
            "n": name,
            "kind": kind,
            "scope": scope,
            "sk": scope_kind,
            "snippet": snippet,
            "span": self.ctx.anchor(name_node),
        }

    def _local(self, name: str, value: tuple[Any, ...]) -> None:
        if self.ctx.scope.kind == "function":
            self._locals.setdefault(self.ctx.qualname, {})[name] = value

    def _value_type(self, value: cst.BaseExpression | None) -> tuple[Any, ...]:
        if isinstance(value, cst.Call) and isinstance(value.func, (cst.Name, cst.Attribute)):
            return ("call", value.func)
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Call):
            base = _dynamic_base(value.func)
            if base is not None:  # `type("Oot", (Platform,), {...})()`: a Platform
                return ("call", base)
        if isinstance(value, cst.Name):  # `self.loader = loader`: the parameter's type
            local = self._local_type(value.value)
            if local is not _MISSING:
                return local
        return ("other",)

    def _target(self, target: cst.BaseExpression, kind: str, value: tuple[Any, ...]) -> None:
        simple = isinstance(target, cst.Name)
        for n in _target_names(target):
            self._local(n.value, value if simple else ("other",))
            if self.ctx.scope.kind == "class":
                if n.value in self.names and not self.is_runtime:
                    self._member_binding(n, n, "class attribute", None)
            else:
                self._bind(n, kind)
        for a in _attribute_targets(target):
            self._skip.add(id(a))
            if a.attr.value in self.names:
                self._member_binding(a.attr, a, f"{kind} to an attribute", a.value)

    def _member_binding(
        self,
        name_node: cst.Name,
        node: cst.CSTNode,
        kind: str,
        receiver: cst.BaseExpression | None,
    ) -> None:
        runtime = receiver is not None and self.ctx.resolve(receiver) == self.runtime
        self.members.append(
            {
                "n": name_node.value,
                "kind": "monkeypatch" if runtime else kind,
                "recv": {"k": "binding"},
                "scope": self.ctx.qualname,
                "snippet": self.ctx.snippet(node),
                "span": self.ctx.anchor(name_node),
            }
        )

    # -- imports ------------------------------------------------------------
    def visit_Import(self, node: cst.Import) -> None:
        self._in_import += 1
        for alias in node.names:
            full = dotted(alias.name) or ""
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self._import_binding(alias.asname.name, full, node)
            elif isinstance(alias.name, cst.Name):
                self._import_binding(alias.name, full, node)

    def leave_Import(self, node: cst.Import) -> None:
        self._in_import -= 1

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._in_import += 1
        if isinstance(node.names, cst.ImportStar):
            return
        targets = import_bindings(node, self.ctx.module, self.ctx.is_package)
        for alias in node.names:
            local = alias.asname.name if alias.asname is not None else alias.name
            if isinstance(local, cst.Name) and local.value in self.names:
                self._import_binding(local, targets.get(local.value, ""), node)

    def leave_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._in_import -= 1

    def _import_binding(self, name: cst.Name, target: str, node: cst.CSTNode) -> None:
        self._local(name.value, ("other",))
        if name.value in self.names:
            self._bind(name, "import", target=target, node=node)

    # -- definitions ----------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        # the dispatcher has pushed the class scope already
        outer = self.ctx.scopes[-2]
        self._open.append(
            {
                "q": self._qual(self.ctx.qualname),
                "bases": [b for a in node.bases if (b := self.ctx.resolve(a.value))],
                "methods": [],
            }
        )
        if outer.kind == "class":
            if node.name.value in self.names and not self.is_runtime:
                self._member_binding(node.name, node.name, "nested class", None)
        else:
            self._bind(node.name, "class", scope=outer.qualname, scope_kind=outer.kind)
            if outer.kind == "function":
                self._locals.setdefault(outer.qualname, {})[node.name.value] = ("other",)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        entry = self._open.pop()
        if entry["bases"] or entry["methods"]:
            self.classes.append(entry)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        outer = self.ctx.scopes[-2]
        name = node.name.value
        if outer.kind == "class":
            if name in self.names and self._open:
                self._open[-1]["methods"].append(name)
        else:
            kind = "nested def" if outer.kind == "function" else "def"
            self._bind(node.name, kind, scope=outer.qualname, scope_kind=outer.kind)
            if outer.kind == "function":
                self._locals.setdefault(outer.qualname, {})[name] = ("other",)
        self._params(node.params, "parameter", self.ctx.qualname, True)

    def _params(self, params: cst.Parameters, kind: str, scope: str, typed: bool) -> None:
        everything = [
            *params.posonly_params,
            *params.params,
            *params.kwonly_params,
            *(p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)),
        ]
        for p in everything:
            if typed:
                ann = p.annotation.annotation if p.annotation is not None else None
                value: tuple[Any, ...] = ("ann", ann) if ann is not None else ("other",)
                self._locals.setdefault(scope, {})[p.name.value] = value
            self._bind(p.name, kind, scope=scope, scope_kind="function", node=p)

    def visit_Lambda(self, node: cst.Lambda) -> None:
        # a lambda is its own scope: its parameters shadow nothing around it
        self._params(node.params, "lambda parameter", f"{self.ctx.qualname}.<lambda>", False)

    def visit_Global(self, node: cst.Global) -> None:
        if self.ctx.scope.kind == "function":
            self._globals_decl.setdefault(self.ctx.qualname, set()).update(
                n.name.value for n in node.names
            )

    # -- other bindings -------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        value = self._value_type(node.value)
        for t in node.targets:
            self._target(t.target, "assignment", value)
            self._attr_type(t.target, value)
            self._global_type(t.target, value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        ann = ("ann", node.annotation.annotation)
        self._target(node.target, "annotated assignment", ann)
        self._attr_type(node.target, ann)
        self._global_type(node.target, ann)
        if self.ctx.scope.kind == "class" and isinstance(node.target, cst.Name):
            self._attr_types.setdefault(self.ctx.qualname, {})[node.target.value] = ann

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target, "augmented assignment", ("other",))

    def visit_For(self, node: cst.For) -> None:
        self._target(node.target, "for target", ("other",))

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._target(node.asname.name, "with target", ("other",))

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None and isinstance(node.name.name, cst.Name):
            self._target(node.name.name, "except target", ("other",))

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._target(node.target, "walrus", self._value_type(node.value))

    def visit_CompFor(self, node: cst.CompFor) -> None:
        # comprehension targets live in the comprehension's own scope
        for n in _target_names(node.target):
            self._bind(
                n,
                "comprehension target",
                scope=f"{self.ctx.qualname}.<comprehension>",
                scope_kind="comprehension",
            )

    def _attr_type(self, target: cst.BaseExpression, value: tuple[Any, ...]) -> None:
        attr = self.ctx.records.self_attr(target)
        cls = self.ctx.enclosing_class()
        if attr is not None and cls is not None and value[0] != "other":
            self._attr_types.setdefault(cls, {})[attr] = value

    def _global_type(self, target: cst.BaseExpression, value: tuple[Any, ...]) -> None:
        if self.ctx.scope.kind != "module" or not isinstance(target, cst.Name):
            return
        q = self._class_of(value)
        if q is not None and value[0] == "call" and not q.rpartition(".")[2][:1].isupper():
            q = None  # only a construction (`X = Cls(...)`) types a global
        if q is not None:
            self.globals[target.value] = q
        else:
            self.globals.pop(target.value, None)

    def _class_of(self, value: tuple[Any, ...]) -> str | None:
        """Qualified class (or callee, for a construction) a typed value names."""
        if value[0] == "ann":
            expr = _class_expr(value[1])
            return self.ctx.resolve(expr) if expr is not None else None
        if value[0] == "call":
            return self.ctx.resolve(value[1])
        return None

    # -- uses -----------------------------------------------------------------
    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name):
            name = func.value
        elif isinstance(func, cst.Attribute):
            name = func.attr.value
        else:
            return
        if name not in self.names:
            return
        chain = self._function_chain()
        if (
            chain
            and isinstance(func, cst.Name)
            and name not in self._bound_so_far.get(chain[0], ())
        ):
            self._called.setdefault(chain[0], set()).add(name)
        if node.args:
            self.calls.append(
                {
                    "n": name,
                    "target": self.ctx.resolve(func),
                    "local": isinstance(func, cst.Name),
                    "chain": chain,
                    "scope": self.ctx.qualname,
                    "snippet": self.ctx.snippet(node),
                    "span": self.ctx.anchor(node),
                }
            )

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if node.attr.value not in self.names or id(node) in self._skip or self._in_import:
            return
        recv = self._receiver(node.value)
        if recv is None:
            return
        member = {
            "n": node.attr.value,
            "kind": "member",
            "recv": recv,
            "scope": self.ctx.qualname,
            "snippet": self.ctx.snippet(node),
            "span": self.ctx.anchor(node.attr),
        }
        if recv["k"] == "selfattr":
            self._pending.append((recv["cls"], recv["attr"], member))
        self.members.append(member)

    def _local_type(self, name: str) -> tuple[Any, ...] | Any:
        for s in reversed(self.ctx.scopes):
            if s.kind == "class":
                continue
            if s.kind != "function":
                break
            found = self._locals.get(s.qualname, {}).get(name)
            if found is not None:
                return found
        return _MISSING

    def _receiver(self, expr: cst.BaseExpression) -> dict[str, Any] | None:
        """How the receiver of `recv.get_x` is known; None when it is the runtime module."""
        scope = self.ctx.scope
        if isinstance(expr, cst.Name):
            if expr.value == scope.self_name and scope.class_qualname is not None:
                return {"k": "class", "q": self._qual(scope.class_qualname), "via": expr.value}
            local = _MISSING if self._locally_imported(expr.value) else self._local_type(expr.value)
            if local is not _MISSING:
                q = self._class_of(local)
                if q is None:
                    return {"k": "unknown", "via": expr.value}
                return {"k": "class", "q": q, "via": expr.value}
        if isinstance(expr, cst.Call) and dotted(expr.func) == "super":
            cls = self.ctx.enclosing_class()
            if cls is not None:
                return {"k": "super", "q": self._qual(cls), "via": "super()"}
        attr = self.ctx.records.self_attr(expr)
        if attr is not None:
            cls = self.ctx.enclosing_class()
            return {"k": "selfattr", "cls": cls, "attr": attr, "via": f"self.{attr}"}
        name = dotted(expr)
        if name is None:
            return {"k": "unknown", "via": self.ctx.snippet(expr)}
        head = name.partition(".")[0]
        if (
            isinstance(expr, cst.Attribute)
            and not self._locally_imported(head)
            and self._local_type(head) is not _MISSING
        ):
            return {"k": "unknown", "via": name}
        q = self.ctx.resolve(expr)
        if q == self.runtime:
            return None
        return {"k": "ref", "q": q, "via": name}

    def _locally_imported(self, name: str) -> bool:
        """A function-local import binds `name` (resolution goes through it)."""
        return any(name in s.imports for s in self.ctx.scopes[1:])

    # -- output ---------------------------------------------------------------
    def finish(self) -> Any:
        for cls, attr, member in self._pending:
            value = self._attr_types.get(cls or "", {}).get(attr)
            q = self._class_of(value) if value is not None else None
            member["recv"] = (
                {"k": "class", "q": q, "via": member["recv"]["via"]}
                if q is not None
                else {"k": "unknown", "via": member["recv"]["via"]}
            )
        ruff_candidate = any(n >= 2 for n in self._counts.values())
        legit: list[dict[str, Any]] = []
        if ruff_candidate:  # spans only where ruff can report (positions cost a pass)
            legit = [
                {
                    "n": n,
                    "scope": s,
                    "snippet": self.ctx.snippet(node),
                    "span": self.ctx.anchor(node),
                }
                for node, n, s in self._legit
            ]
        out = {
            "bindings": self.bindings,
            "calls": self.calls,
            "members": self.members,
            "classes": self.classes,
            "globals": self.globals,
            "imports": self.imports,
            "legit": legit,
            "ruff": ruff_candidate,
        }
        if not any(out.values()):
            return None
        return out


# -- whole program ------------------------------------------------------------
def _ruff_command() -> list[str] | None:
    exe = shutil.which("ruff")
    if exe:
        return [exe]
    if importlib.util.find_spec("ruff") is not None:
        return [sys.executable, "-m", "ruff"]
    return None


def run_ruff_f811(root: Any, paths: list[str], names: set[str]) -> tuple[str, list[str]]:
    """(status, ["path:line:col: message"]) of F811 on accessor names in `paths`."""
    if not paths:
        return "not run: no file binds an accessor name twice", []
    cmd = _ruff_command()
    if cmd is None:
        return "unavailable: ruff is not installed (it is a dependency: `pip install ruff`)", []
    args = [
        *cmd,
        "check",
        "--select",
        "F811",
        "--output-format",
        "json",
        "--no-cache",
        "--isolated",
        "--exit-zero",
        "--",
        *paths,
    ]
    try:
        done = subprocess.run(
            args, cwd=root, capture_output=True, text=True, timeout=_RUFF_TIMEOUT_S, check=False
        )
        items = json.loads(done.stdout or "[]")
    except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError) as exc:
        return f"unavailable: ruff failed ({type(exc).__name__})", []
    if done.returncode != 0:
        return f"unavailable: ruff exited {done.returncode}", []
    found: set[tuple[str, int, int, str]] = set()
    for item in items:
        m = _RUFF_NAME.search(item.get("message", ""))
        if item.get("code") != "F811" or m is None or m.group(1) not in names:
            continue
        path = _relative(root, item["filename"])
        loc = item["location"]
        found.add((path, loc["row"], loc["column"], item["message"].split(":")[0]))
    lines = [f"{p}:{r}:{c}: {msg}" for p, r, c, msg in sorted(found)]
    return f"ran on {len(paths)} file(s)", lines


def _relative(root: Any, filename: str) -> str:
    from pathlib import Path

    try:
        return Path(filename).resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return filename


class _Classes:
    """The class graph of the parsed tree, for `does C really define m`."""

    def __init__(self, program: Program) -> None:
        self.defs: dict[str, dict[str, Any]] = {}
        self.globals: dict[str, str] = {}
        self.modules: set[str] = set()
        self.reexports: dict[str, str] = {}
        for _, module, facts in program.facts(ID):
            for c in facts["classes"]:
                self.defs.setdefault(c["q"], c)
            for name, q in facts["globals"].items():
                self.globals[f"{module}.{name}"] = q
            for name, target in facts["imports"].items():
                self.reexports[f"{module}.{name}"] = target
        self.modules = {entry["module"] for entry in program.files.values()}
        self.tops = {m.partition(".")[0] for m in self.modules}

    def external(self, q: str) -> bool:
        return q.partition(".")[0] not in self.tops

    def lookup(self, q: str, method: str) -> str:
        """ "yes" when the class (or an ancestor) defines `method`, "maybe" when an
        ancestor lies outside the tree, else "no"."""
        seen: set[str] = set()
        todo = [q]
        maybe = False
        while todo:
            c = todo.pop()
            if c in seen:
                continue
            seen.add(c)
            facts = self.defs.get(c)
            if facts is None:
                maybe = maybe or self.external(c)
                continue
            if method in facts["methods"]:
                return "yes"
            todo.extend(facts["bases"])
        return "maybe" if maybe else "no"

    def defining(self, names: set[str]) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for q, c in sorted(self.defs.items()):
            for m in sorted(set(c["methods"]) & names):
                out.setdefault(m, []).append(q)
        return out

    def accessor_target(self, target: str, runtime: str, depth: int = 0) -> bool:
        """Whether an import target is the runtime's accessor (possibly re-exported)."""
        if target.rpartition(".")[0] == runtime:
            return True
        nxt = self.reexports.get(target)
        return nxt is not None and depth < 8 and self.accessor_target(nxt, runtime, depth + 1)


class AccessorBinding(Rule):
    id = ID
    name = "accessor-binding"
    summary = (
        "An accessor name is bound once per module, to the runtime's no-argument accessor; "
        "no shadowing, no arguments, no member shapes"
    )
    visitor = AccessorBindingVisitor
    needs = (BAGS,)

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return accessor_names(vocab)

    def more_tokens(self, program: Program) -> set[str]:
        # subclasses of a class defining an accessor-named method live in files
        # that name it: parse them so the inheritance chain is complete
        classes = _Classes(program)
        definers = {
            q for qs in classes.defining(accessor_names(program.vocab)).values() for q in qs
        }
        changed = True
        while changed:
            changed = False
            for q, c in classes.defs.items():
                if q not in definers and definers & set(c["bases"]):
                    definers.add(q)
                    changed = True
        return {q.rpartition(".")[2] for q in definers}

    def environment(self) -> str:
        # F811 comes from ruff: an outcome stored without it (or with another
        # ruff) must not be replayed once that changes. A stat is cheap; a version call is not.
        cmd = _ruff_command()
        if cmd is None:
            return "ruff: none"
        spec = importlib.util.find_spec("ruff") if len(cmd) > 1 else None
        exe = cmd[0] if len(cmd) == 1 else str(getattr(spec, "origin", "") or "")
        try:
            st = os.stat(exe)
        except OSError:
            return f"ruff: {exe}"
        return f"ruff: {exe} {st.st_size} {st.st_mtime_ns}"

    def partial(self, sets: dict[str, Any]) -> str | None:
        status = str(sets.get("ruff", ""))
        if status.startswith("unavailable"):
            return f"ruff F811 on accessor names was not merged ({status})"
        return None

    def derive(self, program: Program) -> dict[str, Any]:
        names = accessor_names(program.vocab)
        classes = _Classes(program)
        candidates = sorted(p for p, _, f in program.facts(ID) if f["ruff"])
        status, ruff = run_ruff_f811(program.config.root, candidates, names)
        runtime = program.vocab.runtime_module
        # re-exports actually imported from: `from pkg import get_exec` where pkg
        # imports the runtime's accessor
        reexports = sorted(
            {
                b["target"]
                for _, _, f in program.facts(ID)
                for b in f["bindings"]
                if b["kind"] == "import"
                and b["target"].rpartition(".")[0] != runtime
                and classes.accessor_target(b["target"], runtime)
            }
        )
        return {
            "accessor names": sorted(names),
            "classes defining accessor-named methods": classes.defining(names),
            "accessor re-exports imported from": reexports,
            "ruff": status,
            "ruff F811 on accessor names": ruff,
        }

    def check(self, program: Program) -> Iterable[RawFinding]:
        vocab = program.vocab
        runtime = vocab.runtime_module
        classes = _Classes(program)
        ns = {**dict(vocab.bag_accessors), **{s: "seed record" for s in vocab.seed_accessors}}
        mine: list[RawFinding] = []
        legit_sites: dict[tuple[str, int], dict[str, Any]] = {}
        for path, _, facts in program.facts(ID):
            accessor_imported = {
                n for n, t in facts["imports"].items() if classes.accessor_target(t, runtime)
            }
            for b in facts["bindings"]:
                if b["kind"] == "import" and classes.accessor_target(b.get("target", ""), runtime):
                    if b["n"] == b.get("target", "").rpartition(".")[2]:
                        continue  # a re-export of the runtime's own accessor
                mine.append(
                    RawFinding(
                        ID,
                        path,
                        b["scope"],
                        b["snippet"],
                        b["span"],
                        _binding_message(b, runtime, ns, b["n"] in accessor_imported),
                    )
                )
            shadowed = {
                (b["n"], b["scope"])
                for b in facts["bindings"]
                if b["sk"] == "function" and b["kind"] != "late import"
            }
            for c in facts["calls"]:
                if c["local"] and any((c["n"], s) in shadowed for s in c["chain"]):
                    continue  # a local of that name, reported as its binding
                if not classes.accessor_target(c["target"], runtime) or not c["target"].endswith(
                    f".{c['n']}"
                ):
                    continue
                mine.append(
                    RawFinding(
                        ID,
                        path,
                        c["scope"],
                        c["snippet"],
                        c["span"],
                        f"`{c['n']}` called with arguments: the accessor takes none, it answers "
                        f"the process-wide {ns.get(c['n'], 'bag')}; if this means another "
                        "callable, give that one another name",
                    )
                )
            for m in facts["members"]:
                why = _member_problem(m, classes, runtime)
                if why is None:
                    continue
                mine.append(RawFinding(ID, path, m["scope"], m["snippet"], m["span"], why))
            for lg in facts["legit"]:
                legit_sites.setdefault((path, lg["span"][0]), lg)
        yield from mine
        taken = {(f.path, f.span[0]) for f in mine}
        by_path = {p: f for p, _, f in program.facts(ID)}
        for line in program.sets.get(ID, {}).get("ruff F811 on accessor names", ()):
            path, row, col, message = _parse_ruff(line)
            if (path, row) in taken:
                continue
            taken.add((path, row))
            site = legit_sites.get((path, row)) or _binding_at(by_path.get(path), row)
            name = m.group(1) if (m := _RUFF_NAME.search(message)) else "?"
            yield RawFinding(
                ID,
                path,
                site["scope"] if site else "<module>",
                site["snippet"] if site else f"ruff F811 {name}",
                site["span"] if site else [row, col, row, col],
                f"ruff F811: {message[0].lower()}{message[1:]}: a module binds `{name}` once; "
                "drop the redefinition",
            )


def _parse_ruff(line: str) -> tuple[str, int, int, str]:
    head, _, message = line.partition(": ")
    path, row, col = head.rsplit(":", 2)
    return path, int(row), int(col), message


def _binding_at(facts: dict[str, Any] | None, row: int) -> dict[str, Any] | None:
    for b in (facts or {}).get("bindings", ()):
        if b["span"][0] == row:
            return b
    return None


def _binding_message(b: dict[str, Any], runtime: str, ns: dict[str, str], imported: bool) -> str:
    name, kind = b["n"], b["kind"]
    bag = ns.get(name, "bag")
    if kind == "late import":
        return (
            f"`{name}` is used above its function-local import: inside the function the name "
            "is local throughout, so that use raises UnboundLocalError; import it once at "
            "module level"
        )
    if kind == "import":
        return (
            f"`{name}` imported from `{b.get('target')}`: the accessor name means "
            f"`{runtime}.{name}` (the process-wide {bag}); import the other one under another "
            "name (ruff F811's import collision)"
        )
    if b["sk"] == "function" and imported:
        return (
            f"`{name}` bound by {kind} in `{b['scope']}` shadows the imported accessor: every "
            f"use of `{name}` in that function is the local, and one above the binding raises "
            "UnboundLocalError; rename the local"
        )
    where = "in the module" if b["sk"] == "module" else f"in `{b['scope']}`"
    return (
        f"`{name}` bound by {kind} {where}: the accessor name means `{runtime}.{name}` "
        f"(the process-wide {bag}), bound once per module; rename this"
    )


def _member_problem(m: dict[str, Any], classes: _Classes, runtime: str) -> str | None:
    name, recv = m["n"], m["recv"]
    tail = f"call `{name}()` imported from `{runtime}`, or rename the member"
    if recv["k"] == "binding":
        if m["kind"] == "monkeypatch":
            return (
                f"`{name}` rebound on the runtime module: never patch an accessor; publish a "
                "config (get_context().override_server_args) or override the bag's leaves"
            )
        return (
            f"`{name}` bound as a member ({m['kind']}): the accessor name means the runtime's "
            f"module-level accessor, and `obj.{name}` shapes fail only when that path runs; "
            "rename the member"
        )
    via = recv.get("via", "?")
    if recv["k"] in ("class", "super"):
        q = recv["q"]
        if recv["k"] == "super":
            bases = classes.defs.get(q, {}).get("bases", [])
            verdicts = [classes.lookup(b, name) for b in bases] or ["no"]
            verdict = "yes" if "yes" in verdicts else "maybe" if "maybe" in verdicts else "no"
        elif q not in classes.defs and classes.external(q):
            return None  # a library type's own method (`tensor.get_device()`)
        else:
            verdict = classes.lookup(q, name)
        if verdict != "no":
            return None
        return (
            f"`{via}.{name}` member shape: `{q.rpartition('.')[2]}` defines no method "
            f"`{name}`; {tail}"
        )
    if recv["k"] == "ref":
        q = recv["q"]
        if q in classes.defs:
            if classes.lookup(q, name) != "no":
                return None
            return f"`{via}.{name}`: class `{q}` defines no method `{name}`; {tail}"
        typed = classes.globals.get(q)
        if typed is not None:
            if typed not in classes.defs and classes.external(typed):
                return None
            if classes.lookup(typed, name) != "no":
                return None
            return (
                f"`{via}.{name}` member shape: `{via}` is a `{typed.rpartition('.')[2]}`, which "
                f"defines no method `{name}`; {tail}"
            )
        if classes.external(q):
            return None  # a library's own API (`torch.get_device`)
        if q in classes.modules:
            return (
                f"`{via}.{name}` reaches a same-named function of `{q}`, not the runtime "
                f"module's accessor; {tail}"
            )
    return (
        f"`{via}.{name}` member shape on a receiver of unknown class: the accessor is a module "
        f"function of `{runtime}`; {tail}"
    )


RULE = AccessorBinding()
