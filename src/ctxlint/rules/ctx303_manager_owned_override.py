"""CTX303 manager-owned-override: a config override of a field the manager answers
for itself, made in the manager's process, records a process-wide change that no
other process sees.

Everything is derived from the code:

- the **manager-owned fields**: a module constant of string literals that a
  method answers off its own instance, `for name in C: ... getattr(self, name)`
  or `if name in C: return getattr(self, name)` (SGLang's
  `_MANAGER_OWNED_FIELDS` in `TokenizerManager.config_value` and
  `resolved_config_dict`), restricted to record fields; the class doing it is
  the **manager**;
- the **overrides**: `get_context().override(source, **fields)` (or a local
  bound to `get_context()`), and a **wrapper**: a function taking `**fields`
  that hands them to such a call (`record_config_updates`), called on `self`
  or by name;
- the **manager's process**: a method of the manager or of a class in its MRO
  (its mixins), or a function reached from the process entries of a role that
  reaches a manager method and from no other role (program.process_roles).

An override naming a manager-owned field in the manager's process is reported.
Elsewhere (the scheduler's `ModelRunner.update_model_fields`, which rewrites its
own process's copy) it is not.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, string_value
from ctxlint.facts.visitor import FileVisitor
from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.calls import call_graph
from ctxlint.program.core import Program
from ctxlint.program.process_roles import role_reach
from ctxlint.program.rule import RawFinding, Rule, field_data

ID = "CTX303"
CONTEXT = "get_context"
NOTE = (
    "no manager-owned fields derived (no constant of field names that a method answers "
    "with getattr(self, name)): nothing is checked"
)


def _strings(expr: cst.BaseExpression) -> list[str] | None:
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name) and len(expr.args) == 1:
        if expr.func.value not in ("frozenset", "set", "tuple"):
            return None
        expr = expr.args[0].value
    if not isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        return None
    out = [string_value(e.value) for e in expr.elements if isinstance(e, cst.Element)]
    return [s for s in out if s is not None] if all(s is not None for s in out) else None


class OwnedVisitor(FileVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        assert ctx.vocab is not None
        self.fields = set(ctx.vocab.fields)
        self.consts: dict[str, list[str]] = {}
        self.answers: list[dict[str, str]] = []
        self.tests: list[tuple[str, str]] = []  # (loop or test name, qualified constant)
        self.ctx_locals: dict[str, set[str]] = {}  # function -> locals bound to get_context()
        self.calls: list[dict[str, Any]] = []
        self.wrappers: list[dict[str, Any]] = []
        self.star: dict[str, str] = {}  # function -> its `**name`

    def _fn(self) -> str:
        scope = self.ctx.scope
        return f"{self.ctx.module}.{scope.qualname}" if scope.kind == "function" else ""

    def _cls(self) -> str | None:
        cls = self.ctx.enclosing_class()
        return f"{self.ctx.module}.{cls}" if cls else None

    def _is_context(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Call) and not expr.args:
            return (self.ctx.resolve(expr.func) or "").rpartition(".")[2] == CONTEXT
        return isinstance(expr, cst.Name) and expr.value in self.ctx_locals.get(self._fn(), ())

    # -- the constants and the answers off the instance ---------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        fn = self._fn()
        for t in node.targets:
            if not isinstance(t.target, cst.Name):
                continue
            name = t.target.value
            if not fn:
                values = _strings(node.value)
                if values is not None and name.lstrip("_").isupper():
                    self.consts[name] = values
            elif self._is_context(node.value):
                self.ctx_locals.setdefault(fn, set()).add(name)
            else:
                self.ctx_locals.get(fn, set()).discard(name)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        """`FIELDS: tuple[str, ...] = ("model_path", ...)`, the annotated constant."""
        if self._fn() or node.value is None or not isinstance(node.target, cst.Name):
            return
        name, values = node.target.value, _strings(node.value)
        if values is not None and name.lstrip("_").isupper():
            self.consts[name] = values

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        star = node.params.star_kwarg
        if star is not None:
            self.star[self._fn()] = star.name.value

    def visit_For(self, node: cst.For) -> None:
        if isinstance(node.target, cst.Name) and isinstance(node.iter, (cst.Name, cst.Attribute)):
            self.tests.append((node.target.value, self.ctx.resolve(node.iter) or ""))
        else:
            self.tests.append(("", ""))

    def leave_For(self, node: cst.For) -> None:
        self.tests.pop()

    def visit_If(self, node: cst.If) -> None:
        test = node.test
        if (
            isinstance(test, cst.Comparison)
            and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.In)
            and isinstance(test.left, cst.Name)
            and isinstance(test.comparisons[0].comparator, (cst.Name, cst.Attribute))
        ):
            const = self.ctx.resolve(test.comparisons[0].comparator) or ""
            self.tests.append((test.left.value, const))
        else:
            self.tests.append(("", ""))

    def leave_If(self, node: cst.If) -> None:
        self.tests.pop()

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        fn = self._fn()
        if isinstance(func, cst.Name) and func.value == "getattr" and len(node.args) >= 2:
            obj, name = node.args[0].value, node.args[1].value
            me = self.ctx.scope.self_name
            if me and isinstance(obj, cst.Name) and obj.value == me and isinstance(name, cst.Name):
                for var, const in reversed(self.tests):
                    if var == name.value and const:
                        cls = self._cls()
                        if cls:
                            self.answers.append({"cls": cls, "const": const, "fn": fn})
                        break
            return
        if not isinstance(func, cst.Attribute) and not isinstance(func, cst.Name):
            return
        keywords = [a.keyword.value for a in node.args if a.keyword is not None]
        starred = [a.value for a in node.args if a.star == "**"]
        name = func.attr.value if isinstance(func, cst.Attribute) else func.value
        receiver = func.value if isinstance(func, cst.Attribute) else None
        to_context = name == "override" and receiver is not None and self._is_context(receiver)
        # a wrapper: hands its own **fields to the context's override
        if to_context and fn in self.star:
            if any(isinstance(s, cst.Name) and s.value == self.star[fn] for s in starred):
                self.wrappers.append({"fn": fn, "cls": self._cls()})
        fields = sorted(set(keywords) & self.fields)
        if not fields or not fn:
            return
        me = self.ctx.scope.self_name
        kind = (
            "context"
            if to_context
            else "self"
            if isinstance(receiver, cst.Name) and receiver.value == me
            else "name"
            if receiver is None
            else "other"
        )
        if kind == "other":
            return
        self.calls.append(
            self.ctx.site(
                node,
                fn=fn,
                cls=self._cls(),
                kind=kind,
                name=name,
                resolved=self.ctx.resolve(func) if kind == "name" else None,
                fields=fields,
            )
        )

    def finish(self) -> Any:
        consts = {f"{self.ctx.module}.{k}": v for k, v in self.consts.items()}
        facts = {
            "consts": consts,
            "answers": self.answers,
            "calls": self.calls,
            "wrappers": self.wrappers,
        }
        return facts if self.answers or self.calls or self.wrappers or consts else None


class Model:
    def __init__(self, program: Program) -> None:
        vocab = program.vocab
        self.files = list(program.facts(ID))
        consts = {q: v for _, _, f in self.files for q, v in f["consts"].items()}
        self.owned: dict[str, list[str]] = {}  # field -> "Class (CONSTANT)" answering it
        self.managers: set[str] = set()
        for _, _, f in self.files:
            for a in f["answers"]:
                for name in consts.get(a["const"], ()):
                    if name in vocab.fields:
                        self.owned.setdefault(name, []).append(
                            f"{a['cls']} ({a['const'].rpartition('.')[2]})"
                        )
                        self.managers.add(a["cls"])
        self.wrappers = {w["fn"] for _, _, f in self.files for w in f["wrappers"]}
        self.wanted = {
            c.rpartition(".")[0]
            for _, _, f in self.files
            for a in f["answers"]
            for c in [a["const"]]
            if c not in consts
        }


class ManagerOwnedOverride(Rule):
    id = ID
    name = "manager-owned-override"
    summary = (
        "A config override of a field the manager answers off itself, made in the "
        "manager's process: it records a change other processes never see"
    )
    visitor = OwnedVisitor
    needs = (BAGS,)
    requires = ("calls", "classes", "records")  # the call graph, for the process

    def tokens(self, vocab: Vocabulary) -> set[str]:
        # `.override(`: an override call or a wrapper's body (a docstring naming
        # `override(**kw)` is no reason to parse a file); wrappers' callers follow
        return {".override(", "getattr(self,"}

    def more_tokens(self, program: Program) -> set[str]:
        m = Model(program)  # not memoised: the facts grow each round
        # a wrapper's callers, and the module of a constant an answer names
        return {w.rpartition(".")[2] for w in m.wrappers} | {f"module:{x}" for x in m.wanted}

    def _model(self, program: Program) -> Model:
        return program.memo(f"{ID}:model", lambda: Model(program))

    def _process(self, program: Program, m: Model) -> tuple[set[str], set[str], set[str]]:
        """(the manager classes and their MROs, the roles that reach a manager
        method, the functions only those roles reach)."""
        g = call_graph(program)
        classes = {c for cls in m.managers for c in g.mro(cls)}
        reach = role_reach(program)
        methods = {q for q, fn in g.funcs.items() if fn.cls in m.managers}
        roles = {r for r, fns in reach.items() if fns & methods}
        mine = set().union(*(reach[r] for r in roles)) if roles else set()
        others = set().union(*(fns for r, fns in reach.items() if r not in roles))
        return classes, roles, mine - others

    def derive(self, program: Program) -> dict[str, Any]:
        m = self._model(program)
        _, roles, _ = self._process(program, m) if m.owned else (None, set(), None)
        out: dict[str, Any] = {
            "manager-owned fields": {k: sorted(set(v)) for k, v in sorted(m.owned.items())},
            "override wrappers": sorted(m.wrappers),
            "manager roles": sorted(roles),
        }
        if not m.owned:  # a runtime with no manager: said here, not on every run
            out["note"] = NOTE
        return out

    def check(self, program: Program) -> Iterable[RawFinding]:
        m = self._model(program)
        if not m.owned:
            return
        g = call_graph(program)
        classes, roles, only_mine = self._process(program, m)
        short_wrappers = {w.rpartition(".")[2] for w in m.wrappers}
        for path, _, f in m.files:
            for c in f["calls"]:
                owned = [x for x in c["fields"] if x in m.owned]
                if not owned:
                    continue
                if c["kind"] == "context":
                    via = "get_context().override"
                elif c["kind"] == "self" and c["name"] in short_wrappers and c["cls"]:
                    # on the class, or (a mixin's `self`) on the manager it is mixed into
                    owners = [c["cls"], *(x for x in m.managers if c["cls"] in g.mro(x))]
                    if not {q for o in owners for q in g.method(o, c["name"])} & m.wrappers:
                        continue
                    via = c["name"]
                elif c["kind"] == "name" and c["resolved"] in m.wrappers:
                    via = c["name"]
                else:
                    continue
                in_manager = c["cls"] in classes
                if not in_manager and c["fn"] not in only_mine:
                    continue
                where = (
                    f"a method of {c['cls'].rpartition('.')[2]}"
                    if in_manager
                    else f"reached only under role {', '.join(sorted(roles))}"
                )
                owner = m.owned[owned[0]][0]
                yield RawFinding(
                    ID,
                    path,
                    c["scope"],
                    c["snippet"],
                    c["span"],
                    f"`{via}({', '.join(f'{x}=...' for x in owned)})` in the manager's "
                    f"process records a process-wide change no other process sees: "
                    f"{', '.join(owned)} is answered off the manager ({owner}); set it on "
                    "the manager, and let each process that reloads record its own",
                    f"where: {where}\nmanager-owned fields: "
                    + ", ".join(
                        f"{k}: {', '.join(sorted(set(v)))}" for k, v in sorted(m.owned.items())
                    ),
                    data=field_data(program.vocab, owned[0]),
                )


RULE = ManagerOwnedOverride()
