"""CTX401's per-file facts: every binding of an accessor name (through the
program's binding model), each member call or binding of one, the imports of
the runtime module, and whether ruff's F811 may have something to say."""

from __future__ import annotations

from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts import ruff
from ctxlint.facts.context import FileContext
from ctxlint.facts.visitor import FileVisitor
from ctxlint.facts.vocab import Vocabulary
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.bindings import Bindings, Site


def accessor_names(vocab: Vocabulary) -> set[str]:
    """The runtime module's accessors. A seed accessor found in the record's module
    (a legacy `get_global_server_args`) is not a name the runtime module owns: a
    rival record's function of that name, or an import of the legacy one, is fine."""
    return {
        *vocab.bag_accessors,
        *(s for s in vocab.seed_accessors if s not in vocab.accessor_modules),
    }


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
        self.imports: dict[str, str] = {}  # module-level accessor-named import -> target
        self.class_attrs: dict[str, list[str]] = {}  # class -> accessor-named attributes
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
        fact = self._fact(site, site.kind, scope_kind)
        if site.target is not None:
            fact["target"] = site.target
        self.bindings.append(fact)

    def _fact(self, site: Site, kind: str, scope_kind: str, quote: bool = True) -> dict[str, Any]:
        node = site.node if quote else None
        return {
            "n": site.name.value,
            "kind": kind,
            "scope": site.scope,
            "sk": scope_kind,
            "snippet": self.ctx.snippet(node) if node is not None else f"{kind} {site.name.value}",
            "span": self.ctx.anchor(site.name),
        }

    def _member_binding(
        self, name: cst.Name, node: cst.CSTNode, kind: str, receiver: cst.BaseExpression | None
    ) -> None:
        runtime = receiver is not None and self.ctx.resolve(receiver) == self.runtime
        self._member(name, node, "monkeypatch" if runtime else kind, {"k": "binding"})

    def _member(self, name: cst.Name, node: cst.CSTNode, kind: str, recv: dict[str, Any]) -> None:
        self.members.append(
            {
                "n": name.value,
                "kind": kind,
                "recv": recv,
                "scope": self.ctx.qualname,
                "snippet": self.ctx.snippet(node),
                "span": self.ctx.anchor(name),
            }
        )

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
        chain = self.model.function_chain()
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
        if node.attr.value not in self.names or id(node) in self._skip or self.model.importing:
            return
        recv = self._receiver(node.value)
        if recv is not None:
            self._member(node.attr, node, "member", recv)

    def _receiver(self, expr: cst.BaseExpression) -> dict[str, Any] | None:
        """How the receiver of `recv.get_x` is known; None when it is the runtime
        module. Names bound at module level are resolved by qualified name (a
        module-level instance's class is the class index's)."""
        r = self.model.receiver(expr, module=False)
        if r.kind in ("self", "super"):
            return {"k": "class" if r.kind == "self" else "super", "q": r.cls, "via": r.via}
        if r.kind == "local" and r.binding is not None:
            types = [*r.binding.instances, *r.binding.factories]
            return {"k": "types", "t": types, "via": r.via} if types else _unknown(r.via)
        if r.kind == "selfattr":
            return {"k": "selfattr", "cls": r.cls, "attr": r.attr, "via": r.via}
        if r.kind == "name" and r.name is not None:
            return None if r.name == self.runtime else {"k": "ref", "q": r.name, "via": r.via}
        return _unknown(r.via or self.ctx.snippet(expr))

    # -- output ---------------------------------------------------------------
    def finish(self) -> Any:
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
            "imports": self.imports,
            "legit": legit,
            "ruff": ruff_candidate,
        }
        if ruff_candidate and (read := ruff.directives(self.ctx.text)):
            out["noqa"] = read  # ruff reads them: an edit of one alone runs it again
        if not any(out.values()):
            return None
        # the names this module binds to the runtime's own accessor (anywhere in
        # it): a binding of another name is a collision only where they meet
        out["runtime_bound"] = sorted({n for _, n, _ in self._legit})
        out["class_attrs"] = self.class_attrs  # class -> accessor-named attributes
        return out


def _unknown(via: str) -> dict[str, Any]:
    return {"k": "unknown", "via": via}
