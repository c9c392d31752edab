"""CTX502 readback-surfaces: the sibling surfaces of a readback report the same keys.

Derived (rules/CTX502.md says how): the readback primitives (the record's
whole-object readback, the context's name-driven leaf read, and what returns
their results, matched by called name), the surfaces (functions returning a dict
that spreads a readback or holds a primitive's result), and their groups by
readback name. A surface lacking a key its siblings report is a finding; each
group's surfaces and keys are pinned in the baseline, as CTX501 pins hooks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, dotted, string_value
from ctxlint.facts.visitor import FileVisitor
from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.binding_values import Bound
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.core import Program
from ctxlint.program.rule import PinSite, RawFinding, Rule, pin_findings

ID = "CTX502"
WHOLE = "**whole readback"
_DICT_HEADS = ("dict", "Dict", "Mapping", "MutableMapping")
# Methods that read a dict without adding to it (`d.get("k")` is no readback).
_NOT_CALLS = frozenset(("get", "items", "keys", "values", "copy", "pop", "setdefault"))


def _called(expr: cst.BaseExpression) -> str | None:
    """The called name of a call (`a.b.resolved_dict()` -> `resolved_dict`)."""
    if not isinstance(expr, cst.Call):
        return None
    if isinstance(expr.func, cst.Attribute):
        return expr.func.attr.value
    return expr.func.value if isinstance(expr.func, cst.Name) else None


def _strip(expr: cst.BaseExpression) -> cst.BaseExpression:
    while isinstance(expr, cst.Await):
        expr = expr.expression
    return expr


class ReadbackVisitor(FileVisitor):
    """Per function: what its return value is built from.

    `ret` lists the called names whose results the return value is (or wraps);
    `dict` is the returned dict's shape: literal keys with the names called in
    each value, and spreads (a call's name and resolved target, or opaque)."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        vocab = ctx.vocab
        assert vocab is not None
        self.record_classes = set(vocab.record_classes)
        self.in_runtime = ctx.module == vocab.runtime_module
        self.functions: dict[str, dict[str, Any]] = {}
        self.seeds: list[list[str]] = []  # [kind, name]
        self.stack: list[dict[str, Any]] = []
        # a function's local -> the shape of the dict or readback value it holds,
        # asked of the binding model
        self.locals = ctx.parts[BINDINGS].track(self._holds_shape)

    # -- functions ----------------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        ps = node.params
        params = [p.name.value for p in (*ps.posonly_params, *ps.params)]
        if ps.kwonly_params or isinstance(ps.star_arg, cst.Param) or ps.star_kwarg is not None:
            params.append("*")  # not a plain `(self, name)` lookup
        self.stack.append(
            {
                "node": node,
                "params": params,
                "scope": self.ctx.qualname,  # where the model keeps its locals
                "ret": set(),
                "dict": None,
                "getattr_param": False,
            }
        )
        cls = self.ctx.enclosing_class()
        outer = self.ctx.scopes[-2]
        if outer.kind == "class" and cls and f"{self.ctx.module}.{cls}" in self.record_classes:
            returns = node.returns.annotation if node.returns else None
            head = (
                dotted(returns.value if isinstance(returns, cst.Subscript) else returns)
                if returns
                else None
            )
            if params == params[:1] and head and head.rpartition(".")[2] in _DICT_HEADS:
                self.seeds.append(["whole", node.name.value])

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        fn = self.stack.pop()
        if not (fn["ret"] or fn["dict"] or fn["getattr_param"]):
            return
        if fn["getattr_param"] and self.in_runtime and self.ctx.enclosing_class():
            self.seeds.append(["leaf", node.name.value])
        entry: dict[str, Any] = {"name": node.name.value, "ret": sorted(fn["ret"])}
        if fn["dict"] is not None:  # a surface or a part: where it is, for findings
            entry |= {"dict": fn["dict"], "span": self.ctx.anchor(node.name)}
        self.functions[self.ctx.qualname] = entry

    # -- expressions ---------------------------------------------------------------
    def _calls_in(self, expr: cst.BaseExpression) -> set[str]:
        """Names of the calls whose result `expr` is, through wrappers (a call's
        first argument), conditionals and `await`, plus what a local it names was
        bound to. Not through a subscript: `info["internal_states"]` reads one
        field out of a readback, it does not report it. Shallow on purpose: it
        runs on every return and assignment of every parsed file."""
        out: set[str] = set()
        todo: list[cst.BaseExpression] = [expr]
        scope = self.stack[-1]["scope"]
        while todo:
            node = todo.pop()
            if isinstance(node, cst.Call):
                name = _called(node)
                if name and name not in _NOT_CALLS:
                    out.add(name)
                if node.args and node.args[0].keyword is None:
                    todo.append(node.args[0].value)
            elif isinstance(node, cst.Name):
                known = self.locals.get(scope, node.value)
                if known is not None:
                    out.update(known.get("calls", ()))
            elif isinstance(node, cst.IfExp):
                todo += [node.body, node.orelse]
            elif isinstance(node, cst.BooleanOperation):
                todo += [node.left, node.right]
            elif isinstance(node, cst.Await):
                todo.append(node.expression)
        return out

    def _shape(self, expr: cst.BaseExpression, depth: int = 0) -> dict[str, Any] | None:
        """The dict `expr` builds: {"keys": {key: [called names]}, "spreads": [...]}."""
        expr = _strip(expr)
        fn = self.stack[-1]
        if depth > 4:
            return None
        if isinstance(expr, cst.Dict):
            keys: dict[str, list[str]] = {}
            spreads: list[dict[str, Any]] = []
            for el in expr.elements:
                if isinstance(el, cst.StarredDictElement):
                    spreads.append(self._spread(el.value))
                else:
                    key = string_value(el.key)
                    if key is None:
                        spreads.append({"opaque": self.ctx.snippet(el.key)[:60]})
                    else:
                        keys[key] = sorted(self._calls_in(el.value))
            return {"keys": keys, "spreads": spreads}
        if isinstance(expr, cst.DictComp):
            comp = expr.for_in
            iterable = comp.iter
            if (
                isinstance(expr.key, cst.Name)
                and isinstance(comp.target, cst.Name)
                and comp.target.value == expr.key.value
                and isinstance(iterable, (cst.Tuple, cst.List))
            ):
                names = [string_value(e.value) for e in iterable.elements]
                if all(n is not None for n in names):
                    calls = sorted(self._calls_in(expr.value))
                    return {"keys": {n: calls for n in names}, "spreads": []}  # type: ignore[misc]
            return None
        if isinstance(expr, cst.Name):
            known = self.locals.get(fn["scope"], expr.value)
            if known is not None and "keys" in known:
                return known
            return None
        if isinstance(expr, cst.Call):
            args = [a.value for a in expr.args if a.keyword is None and not a.star]
            if args:  # a wrapper: `json.dumps({...})`, `redact(d)` -> look inside
                inner = self._shape(args[0], depth + 1)
                if inner is not None:
                    return inner
            if _called(expr) not in (None, *_NOT_CALLS):
                return {"keys": {}, "spreads": [self._spread(expr)]}
        return None

    def _builds_dict(self, expr: cst.BaseExpression, depth: int = 0) -> bool:
        """`expr` is a dict display or comprehension, a local dict, or a wrapper
        of one (not just any call: that is `ret`'s business)."""
        expr = _strip(expr)
        if isinstance(expr, (cst.Dict, cst.DictComp)):
            return True
        if isinstance(expr, cst.Name):
            return "keys" in (self.locals.get(self.stack[-1]["scope"], expr.value) or {})
        if isinstance(expr, cst.Call) and expr.args and expr.args[0].keyword is None and depth < 4:
            return self._builds_dict(expr.args[0].value, depth + 1)
        return False

    def _spread(self, expr: cst.BaseExpression) -> dict[str, Any]:
        """A `**spread` or `update(...)` argument: the calls its value comes from
        (through wrappers such as `redact(build_server_info(...))`), with the
        resolved targets of plain-name calls, or opaque text."""
        calls = sorted(self._calls_in(expr))
        if not calls:
            return {"opaque": self.ctx.snippet(_strip(expr))[:60]}
        targets: list[str] = []
        node = _strip(expr)
        while isinstance(node, cst.Call):
            if isinstance(node.func, cst.Name):
                target = self.ctx.resolve(node.func)
                if target:
                    targets.append(target)
            if not node.args or node.args[0].keyword is not None:
                break
            node = _strip(node.args[0].value)
        return {"calls": calls, "targets": targets, "text": self.ctx.snippet(_strip(expr))[:60]}

    # -- statements --------------------------------------------------------------------
    def visit_Return(self, node: cst.Return) -> None:
        if not self.stack or node.value is None:
            return
        fn = self.stack[-1]
        value = _strip(node.value)
        fn["ret"] |= self._calls_in(value)
        shape = self._shape(value) if self._builds_dict(value) else None
        if shape is not None and (shape["keys"] or len(shape["spreads"]) > 1):
            if fn["dict"] is None:
                fn["dict"] = shape
            else:  # several returns: the union of what they report
                fn["dict"]["keys"].update(shape["keys"])
                fn["dict"]["spreads"] += [
                    s for s in shape["spreads"] if s not in fn["dict"]["spreads"]
                ]
        # the name-driven read: a method of one name parameter returning a lookup
        # by it (`getattr(bag, name)`, `bag._leaf(name)`)
        if isinstance(value, cst.Call) and len(fn["params"]) == 2:
            if any(
                isinstance(a.value, cst.Name) and a.value.value == fn["params"][1]
                for a in value.args
            ):
                fn["getattr_param"] = True

    def visit_Assign(self, node: cst.Assign) -> None:
        if not self.stack:
            return
        scope = self.stack[-1]["scope"]
        for t in node.targets:
            target = t.target
            if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name):
                local = self.locals.get(scope, target.value.value)
                key = target.slice[0].slice
                if local is not None and "keys" in local and isinstance(key, cst.Index):
                    name = string_value(key.value)
                    if name is not None:
                        local["keys"][name] = sorted(self._calls_in(node.value))

    def _holds_shape(self, bound: Bound, before: Any) -> dict[str, Any] | None:
        """{"calls": [...], "keys"?, "spreads"?} for a local assigned a call's
        result or a dict, in a function; None for any other binding."""
        value = bound.value
        if not self.stack or bound.kind != "assignment" or value is None:
            return None
        calls = self._calls_in(value)
        shape = self._shape(value) if self._builds_dict(value) or calls else None
        if not calls and shape is None:
            return None
        entry: dict[str, Any] = {"calls": sorted(calls)}
        if shape is not None:
            entry |= {"keys": dict(shape["keys"]), "spreads": list(shape["spreads"])}
        return entry

    def visit_Call(self, node: cst.Call) -> None:
        if not self.stack or not isinstance(node.func, cst.Attribute):
            return
        recv = node.func.value
        if node.func.attr.value != "update" or not isinstance(recv, cst.Name):
            return
        local = self.locals.get(self.stack[-1]["scope"], recv.value)
        if local is None or "keys" not in local:
            return
        for arg in node.args:
            if arg.keyword is not None:
                local["keys"][arg.keyword.value] = sorted(self._calls_in(arg.value))
            else:
                shape = self._shape(arg.value)
                if shape is not None and (shape["keys"] or not shape["spreads"]):
                    local["keys"].update(shape["keys"])
                    local["spreads"] += shape["spreads"]
                else:
                    local["spreads"].append(self._spread(arg.value))

    def finish(self) -> Any:
        if not (self.functions or self.seeds):
            return None
        return {"functions": self.functions, "seeds": self.seeds}


# -- the program ------------------------------------------------------------------------
def group_name(name: str) -> str:
    """The readback a surface serves, from its name: `GetServerInfo`,
    `get_server_info` and `server_info` are one."""
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower().strip("_")
    return re.sub(r"^(get|read|fetch)_", "", snake)


class Model:
    def __init__(self, program: Program) -> None:
        self.fns: dict[str, tuple[str, dict[str, Any]]] = {}  # qual -> (path, facts)
        whole: set[str] = set()
        leaf: set[str] = set()
        bag_lookups: set[str] = set()  # what the bag accessors call: a bag, not a leaf
        accessors = set(program.vocab.bag_accessors)
        for path, module, facts in program.facts(ID):
            for qual, f in facts["functions"].items():
                self.fns[f"{module}.{qual}"] = (path, f)
                if module == program.vocab.runtime_module and qual in accessors:
                    bag_lookups.update(f["ret"])
            for kind, name in facts["seeds"]:
                (whole if kind == "whole" else leaf).add(name)
        # a public method: `__getattr__` and private helpers are the bags' own
        # machinery, not the read a readback endpoint calls
        leaf = {n for n in leaf - bag_lookups if not n.startswith("_")}
        self.seeds = {"whole": sorted(whole), "leaf": sorted(leaf)}
        # fixed point: a function whose return value is (or holds) a primitive's result
        self.whole, self.leaf = set(whole), set(leaf)
        changed = True
        while changed:
            changed = False
            for _, f in self.fns.values():
                name = f["name"]
                if name in self.whole or name.startswith("__"):
                    continue  # a dunder is every class's protocol, not a readback
                spreads = (f.get("dict") or {}).get("spreads", [])
                if any(self._is_whole(s) for s in spreads) or set(f["ret"]) & self.whole:
                    self.whole.add(name)
                    self.leaf.discard(name)
                    changed = True
                elif name not in self.leaf and set(f["ret"]) & self.leaf and not f.get("dict"):
                    self.leaf.add(name)
                    changed = True
        self.primitives = self.whole | self.leaf
        candidates: dict[str, dict[str, Any]] = {}
        for qual, (_, f) in sorted(self.fns.items()):
            shape = f.get("dict")
            if shape is None:
                continue
            served = any(set(v) & self.primitives for v in shape["keys"].values())
            if served or any(self._is_whole(s) for s in shape["spreads"]):
                candidates[qual] = shape
        # parts: a candidate another one spreads (`**build_server_info(...)`): its
        # keys count in the surface that spreads it
        by_name: dict[str, list[str]] = {}
        for q in candidates:
            by_name.setdefault(self.fns[q][1]["name"], []).append(q)
        self._spread_of: dict[int, str] = {}  # id(spread) -> the part it is
        for shape in candidates.values():
            for s in shape["spreads"]:
                part = self._find_part(s, candidates, by_name)
                if part is not None:
                    self._spread_of[id(s)] = part
        spread = set(self._spread_of.values())
        self.parts = {q: shape for q, shape in candidates.items() if q in spread}
        self.surfaces = {q: shape for q, shape in candidates.items() if q not in spread}
        self.keys = {q: self._keys(s) for q, s in self.surfaces.items()}
        self.groups: dict[str, list[str]] = {}
        for qual in sorted(self.surfaces):
            self.groups.setdefault(group_name(self.fns[qual][1]["name"]), []).append(qual)

    def _is_whole(self, spread: dict[str, Any]) -> bool:
        return bool(set(spread.get("calls", ())) & self.whole)

    def _keys(self, shape: dict[str, Any], depth: int = 0) -> list[str]:
        keys = set(shape["keys"])
        for s in shape["spreads"]:
            part = self._part(s)
            if part is not None and depth < 4:
                keys |= set(self._keys(part, depth + 1))
            elif self._is_whole(s):
                keys.add(WHOLE)
            else:
                keys.add(f"**{s.get('opaque') or s.get('text')}")
        return sorted(keys)

    @staticmethod
    def _find_part(
        spread: dict[str, Any], candidates: dict[str, Any], by_name: dict[str, list[str]]
    ) -> str | None:
        """The candidate a spread's value comes from: by a resolved target, else by
        a called name only one candidate has (a re-export the import table hides)."""
        for target in spread.get("targets", ()):
            if target in candidates:
                return target
        for name in spread.get("calls", ()):
            if len(by_name.get(name, ())) == 1:
                return by_name[name][0]
        return None

    def _part(self, spread: dict[str, Any]) -> dict[str, Any] | None:
        part = self._spread_of.get(id(spread))
        return self.parts.get(part) if part else None


def _literal(keys: list[str]) -> set[str]:
    """Keys compared across siblings: literal ones and the whole readback (an
    opaque spread's keys are unknown)."""
    return {k for k in keys if not k.startswith("**") or k == WHOLE}


class ReadbackSurfaces(Rule):
    id = ID
    name = "readback-surfaces"
    summary = (
        "Sibling surfaces of a readback (HTTP, RPC, in-process) report the same keys; "
        "each group's surfaces and keys are pinned in the baseline"
    )
    visitor = ReadbackVisitor
    requires = (BINDINGS,)  # what a function's locals hold
    needs = (BAGS,)  # a readback answers from the bags (`config_leaf`)

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return {"resolved_dict", "config_leaf", f"module:{vocab.record_module}"}

    def more_tokens(self, program: Program) -> set[str]:
        model = Model(program)  # not memoised: the facts grow each round
        return set(model.primitives)

    def _model(self, program: Program) -> Model:
        return program.memo(f"{ID}:model", lambda: Model(program))

    def derive(self, program: Program) -> dict[str, Any]:
        model = self._model(program)
        return {
            "whole-object readback": model.seeds["whole"],
            "name-driven leaf reads": model.seeds["leaf"],
            "readback primitives": sorted(model.primitives),
            "parts": sorted(model.parts),
            "groups": {
                g: {q: model.keys[q] for q in quals} for g, quals in sorted(model.groups.items())
            },
        }

    def partial(self, sets: dict[str, Any]) -> str | None:
        # a name-driven read with no whole-object readback beside it: the record's
        # readback method was not recognised (a codebase with neither has no
        # readback to guard yet)
        if sets.get("name-driven leaf reads") and not sets.get("whole-object readback"):
            return (
                "no whole-object readback: the record class has no method of no arguments "
                "annotated to return a dict"
            )
        return None

    def pins(self, program: Program) -> dict[str, Any]:
        model = self._model(program)
        return {
            f"{g}: {q}": ", ".join(model.keys[q])
            for g, quals in model.groups.items()
            for q in quals
        }

    def check(self, program: Program) -> Iterable[RawFinding]:
        model = self._model(program)
        out: list[RawFinding] = []
        for group, quals in sorted(model.groups.items()):
            if len(quals) < 2:
                continue
            for qual in quals:
                mine = _literal(model.keys[qual])
                others = [q for q in quals if q != qual]
                missing = sorted(set().union(*(_literal(model.keys[q]) for q in others)) - mine)
                if not missing:
                    continue
                path, f = model.fns[qual]
                having = {
                    k: [_short(q) for q in others if k in _literal(model.keys[q])] for k in missing
                }
                who = sorted({w for v in having.values() for w in v})
                plural, verb = ("s", "") if len(who) > 1 else ("", "s")
                shown = ", ".join(f"`{k}`" for k in missing[:4])
                more = f" and {len(missing) - 4} more" if len(missing) > 4 else ""
                out.append(
                    RawFinding(
                        ID,
                        path,
                        qual.removeprefix(f"{program.files[path]['module']}."),
                        f"readback {group}: {f['name']}",
                        f["span"],
                        f"`{_short(qual)}` does not report {shown}{more}, which its `{group}` "
                        f"sibling{plural} {', '.join(f'`{w}`' for w in who)} report{verb}: its "
                        "users lose the field; report the same keys from every surface",
                        "\n".join(
                            f"  - {k}: reported by {', '.join(v)}" for k, v in having.items()
                        ),
                    )
                )
        if ID in program.pinned:
            sites: dict[str, PinSite] = {}
            for group, quals in model.groups.items():
                for qual in quals:
                    path, f = model.fns[qual]
                    scope = qual.removeprefix(f"{program.files[path]['module']}.")
                    sites[f"{group}: {qual}"] = PinSite(path, scope, f"def {f['name']}", f["span"])
            out.extend(pin_findings(ID, program, self.pins(program), sites))
        return out


def _short(qual: str) -> str:
    return ".".join(qual.split(".")[-2:])


RULE = ReadbackSurfaces()
