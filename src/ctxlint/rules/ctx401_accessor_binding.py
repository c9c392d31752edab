"""CTX401 accessor-binding: an accessor name means the process-wide bag.

Every bag accessor (and the seed accessor) is a module function of the runtime
module, takes no arguments, and a module binds the name once, to that function.
A same-named import from elsewhere, a def, a class, an assignment, a parameter,
a loop/with/except/comprehension target or a walrus all import fine and fail
only when that path runs; a function-local binding makes every use in the
function the local (and one before it an UnboundLocalError). Member shapes
(`manager.get_disagg()`, `self.get_disagg = get_disagg`) are an AttributeError
at call time, unless the receiver is the runtime module or an instance of a
class that really defines the method (the class index: C3 MRO, re-exports,
inheritance). ruff's F811 on accessor names is merged in, with its origin named.
The runtime module is exempt from the binding checks: it defines the names.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts import ruff
from ctxlint.facts.context import FileContext
from ctxlint.facts.visitor import FileVisitor
from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.bindings import Bindings, Site
from ctxlint.program.classes import KEY as CLASSES
from ctxlint.program.classes import ClassIndex, class_index
from ctxlint.program.core import Program
from ctxlint.program.rule import RawFinding, Rule

ID = "CTX401"


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
        return out


def _unknown(via: str) -> dict[str, Any]:
    return {"k": "unknown", "via": via}


# -- ruff's F811 ----------------------------------------------------------------
_ruff_command = ruff.command  # module attributes: tests replace them


def run_ruff_f811(root: Any, paths: list[str], names: set[str]) -> tuple[str, list[ruff.F811]]:
    return ruff.f811(root, paths, names, _ruff_command())


def _ruff(program: Program) -> tuple[str, list[ruff.F811]]:
    """ruff's F811 on the files that bind an accessor name twice, once a run:
    only `check` asks, so a run that does not select CTX401 never starts ruff."""

    def run() -> tuple[str, list[ruff.F811]]:
        candidates = sorted(p for p, _, f in program.facts(ID) if f["ruff"])
        return run_ruff_f811(program.config.root, candidates, accessor_names(program.vocab))

    return program.memo(f"{ID} ruff", run)


# -- the class index's answers ------------------------------------------------------
def _verdict(index: ClassIndex, types: list[str], name: str) -> str:
    """ "yes"/"maybe"/"no": does an object of one of `types` (classes, or
    callees: a function's return class) have method `name`."""
    verdicts = []
    for t in types:
        classes = index.instances(t)
        if classes:
            verdicts += [index.defines(c, name) for c in classes]
        else:
            verdicts.append("maybe" if index.external(t) else "no")
    return "yes" if "yes" in verdicts else "maybe" if "maybe" in verdicts else "no"


def _accessor_target(index: ClassIndex, target: str, runtime: str) -> bool:
    """Whether an import target is the runtime's accessor (possibly re-exported)."""
    return index.follow(target, lambda n: n.rpartition(".")[0] == runtime) is not None


def _defining(index: ClassIndex, names: set[str]) -> dict[str, list[str]]:
    """Accessor name -> classes of the tree defining a method of that name."""
    out: dict[str, list[str]] = {}
    for q, c in sorted(index.classes.items()):
        for m in sorted(set(c["methods"]) & names):
            out.setdefault(m, []).append(q)
    return out


class AccessorBinding(Rule):
    id = ID
    name = "accessor-binding"
    summary = (
        "An accessor name is bound once per module, to the runtime's no-argument accessor; "
        "no shadowing, no arguments, no member shapes"
    )
    visitor = AccessorBindingVisitor
    needs = (BAGS,)
    requires = (BINDINGS, CLASSES)
    fixes = ("safe", "unsafe")  # ctxlint fix (docs/fix.md)

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return accessor_names(vocab)

    def more_tokens(self, program: Program) -> set[str]:
        # subclasses of a class defining an accessor-named method live in files
        # that name it: parse them so the inheritance chain is complete
        index = class_index(program)
        definers = {
            q for qs in _defining(index, accessor_names(program.vocab)).values() for q in qs
        }
        definers |= {s for q in list(definers) for s in index.subclasses(q)}
        return {q.rpartition(".")[2] for q in definers}

    def environment(self) -> str:
        # F811 comes from ruff: an outcome stored without it (or with another
        # ruff) must not be replayed once that changes
        return ruff.identity(_ruff_command())

    def partial(self, sets: dict[str, Any]) -> str | None:
        status = str(sets.get("ruff", ""))
        if status.startswith("unavailable"):
            return f"ruff F811 on accessor names was not merged ({status})"
        return None

    def derive(self, program: Program) -> dict[str, Any]:
        names = accessor_names(program.vocab)
        index = class_index(program)
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
                and _accessor_target(index, b["target"], runtime)
            }
        )
        return {
            "accessor names": sorted(names),
            "classes defining accessor-named methods": _defining(index, names),
            "accessor re-exports imported from": reexports,
        }

    def check(self, program: Program) -> Iterable[RawFinding]:
        vocab = program.vocab
        runtime = vocab.runtime_module
        index = class_index(program)
        ns = {**dict(vocab.bag_accessors), **{s: "seed record" for s in vocab.seed_accessors}}
        mine: list[RawFinding] = []
        legit_sites: dict[tuple[str, int], dict[str, Any]] = {}
        for path, _, facts in program.facts(ID):
            accessor_imported = {
                n for n, t in facts["imports"].items() if _accessor_target(index, t, runtime)
            }
            for b in facts["bindings"]:
                target = b.get("target", "")
                if b["kind"] == "import" and _accessor_target(index, target, runtime):
                    if b["n"] == target.rpartition(".")[2]:
                        continue  # a re-export of the runtime's own accessor
                why = _binding_message(b, runtime, ns, b["n"] in accessor_imported)
                mine.append(RawFinding(ID, path, b["scope"], b["snippet"], b["span"], why))
            shadowed = {
                (b["n"], b["scope"])
                for b in facts["bindings"]
                if b["sk"] == "function" and b["kind"] != "late import"
            }
            for c in facts["calls"]:
                if c["local"] and any((c["n"], s) in shadowed for s in c["chain"]):
                    continue  # a local of that name, reported as its binding
                if not _accessor_target(index, c["target"], runtime) or not c["target"].endswith(
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
                why = _member_problem(m, index, runtime)
                if why is not None:
                    mine.append(RawFinding(ID, path, m["scope"], m["snippet"], m["span"], why))
            for lg in facts["legit"]:
                legit_sites.setdefault((path, lg["span"][0]), lg)
        yield from mine
        status, hits = _ruff(program)
        program.sets.setdefault(ID, {}).update(
            {"ruff": status, "ruff F811 on accessor names": [str(h) for h in hits]}
        )
        taken = {(f.path, f.span[0]) for f in mine}
        by_path = {p: f for p, _, f in program.facts(ID)}
        for hit in hits:
            if (hit.path, hit.row) in taken:
                continue
            taken.add((hit.path, hit.row))
            site = legit_sites.get((hit.path, hit.row)) or _binding_at(
                by_path.get(hit.path), hit.row
            )
            yield RawFinding(
                ID,
                hit.path,
                site["scope"] if site else "<module>",
                site["snippet"] if site else f"ruff F811 {hit.name}",
                site["span"] if site else [hit.row, hit.col, hit.row, hit.col],
                f"ruff F811: {hit.message[0].lower()}{hit.message[1:]}: a module binds "
                f"`{hit.name}` once; drop the redefinition",
            )


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


def _member_problem(m: dict[str, Any], index: ClassIndex, runtime: str) -> str | None:
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
    k = recv["k"]
    types: list[str] = []
    if k == "super":
        cls = recv["q"]
        if index.definer(cls, name, skip_self=True) is not None:
            return None
        if index.defines(cls, name) == "maybe":  # an ancestor outside the tree
            return None
        types = [cls]
    elif k == "class":
        types = [recv["q"]]
    elif k == "types":
        types = recv["t"]
    elif k == "selfattr" and recv["cls"] is not None:
        types = index.attr_types(recv["cls"], recv["attr"])
    if types:
        if k != "super" and _verdict(index, types, name) != "no":
            return None  # a class defining it, or a library type (`tensor.get_device()`)
        return (
            f"`{via}.{name}` member shape: `{types[0].rpartition('.')[2]}` defines no method "
            f"`{name}`; {tail}"
        )
    if k == "ref":
        q = recv["q"]
        cls = index.resolve(q)
        if cls is not None:
            if index.defines(cls, name) != "no":
                return None
            return f"`{via}.{name}`: class `{cls}` defines no method `{name}`; {tail}"
        typed = index.instance(q)
        if typed is not None:
            if _verdict(index, [typed], name) != "no":
                return None
            return (
                f"`{via}.{name}` member shape: `{via}` is a `{typed.rpartition('.')[2]}`, which "
                f"defines no method `{name}`; {tail}"
            )
        if index.external(q):
            return None  # a library's own API (`torch.get_device`)
        if q in index.modules:
            return (
                f"`{via}.{name}` reaches a same-named function of `{q}`, not the runtime "
                f"module's accessor; {tail}"
            )
    return (
        f"`{via}.{name}` member shape on a receiver of unknown class: the accessor is a module "
        f"function of `{runtime}`; {tail}"
    )


RULE = AccessorBinding()
