"""CTX704 moe-communicator-width: a configured parallel size used where the live
communicator's width is meant, and a size test where the enabled leaf is meant.

Everything is derived from the code:

- the **aliased groups**: a module-global process group that a function (with
  `global`) assigns from another module global (`_MOE_DP = _ATTN_CP` in
  `initialize_model_parallel`), or a group table's entry assigned another's
  (ctxrt's `joined["moe_dp"] = joined["attn_cp"]`): its live width can differ
  from the configured size leaf of the same name (`moe_dp` -> `moe_dp_size`,
  when the parallel bag has that leaf). An alias made in the body of
  `if a == b:` (`_ATTN_CP = _TP` when `attn_cp_size == tp_size`) joins two
  groups of equal width and is no hazard;
- the **group handles**: `<parallel>.<key>_group` (`<parallel>` is a call of the
  parallel bag's accessor, or a local bound to one), a module global of the
  aliased group, and the functions returning either (`get_moe_cp_group`,
  `get_moe_dp_group`), closed over calls;
- the **width functions**: functions of no parameters returning a handle's
  `.world_size` (`get_moe_cp_size`);
- the **collectives**: a method call on a handle (`all_gather_into_tensor`,
  `all_reduce`, ...), and the functions making one (`moe_cp_all_gather_into_tensor`),
  closed over calls.

A read of `<parallel>.<key>_size` in a function that runs a collective on that
group is reported: the width of the communicator is the width function's
answer. Separately, `<parallel>.<size> > 1` where the runtime module defines a
leaf as exactly that test (`dcp_enabled=cfg.dcp_size > 1`, or a property named
so whose body makes it) is reported with the leaf to read instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, dotted, string_value
from ctxlint.facts.if_branches import IfBranches
from ctxlint.facts.property_answers import PropertyAnswers
from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.core import Program
from ctxlint.program.rule import RawFinding, Rule

ID = "CTX704"
WIDTH_ATTR = "world_size"
NOTE_GROUPS = "no aliased process group derived (no `_G = _OTHER` in a function with `global _G`)"
NOTE_WIDTH = "no width function derived (a function of no parameters returning a group's "


def _key(global_name: str) -> str:
    """`_MOE_DP` -> `moe_dp`: a group global's name as the parallel leaves spell it."""
    return global_name.strip("_").lower()


def _entry(expr: cst.BaseExpression) -> tuple[str, str] | None:
    """`d["key"]` as (d, key)."""
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name):
        if len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
            key = string_value(expr.slice[0].slice.value)
            if key is not None:
                return expr.value.value, key
    return None


def _is_one(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Integer) and expr.value == "1"


def _size_test(expr: cst.BaseExpression) -> str | None:
    """`x.dcp_size > 1` (or `1 < x.dcp_size`) as "dcp_size"."""
    if not isinstance(expr, cst.Comparison) or len(expr.comparisons) != 1:
        return None
    comp = expr.comparisons[0]
    left, right, op = expr.left, comp.comparator, comp.operator
    if isinstance(op, cst.LessThan) and _is_one(left):
        left, right, op = right, left, cst.GreaterThan()
    if isinstance(op, cst.GreaterThan) and _is_one(right) and isinstance(left, cst.Attribute):
        return left.attr.value
    return None


class WidthVisitor(IfBranches):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        assert ctx.vocab is not None
        vocab = ctx.vocab
        self.parallel = {a for a, ns in vocab.bag_accessors.items() if ns == "parallel"}
        # the runtime module and its siblings: where an enabled leaf is defined
        self.in_runtime = ctx.module.rpartition(".")[0] == vocab.runtime_module.rpartition(".")[0]
        self.module_names: set[str] = set()
        self.globals: dict[str, set[str]] = {}  # function -> names it declares global
        self.aliases: list[list[str]] = []  # [target, source, key] group assignments
        self.env: dict[str, set[str]] = {}  # function -> locals bound to the accessor
        self.group_returns: dict[str, list[list[str]]] = {}  # fn -> group refs it returns
        self.widths: dict[str, list[str]] = {}  # no-parameter fn -> group ref of .world_size
        self.collectives: dict[str, list[list[str]]] = {}  # fn -> group refs it calls on
        self.calls: dict[str, set[str]] = {}  # fn -> qualified callees
        self.sizes: list[dict[str, Any]] = []  # reads of <parallel>.X_size
        self.tests: list[dict[str, Any]] = []  # <parallel>.X > 1
        self.enabled: dict[str, str] = {}  # leaf -> the size it tests (runtime module)
        self.answers = PropertyAnswers()  # inside the runtime module: what a property answers

    # -- expressions ----------------------------------------------------------
    def _fn(self) -> str | None:
        scope = self.ctx.scope
        return scope.qualname if scope.kind == "function" else None

    def _is_parallel(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Call) and not expr.args:
            name = self.ctx.resolve(expr.func) or ""
            return name.rpartition(".")[2] in self.parallel
        if isinstance(expr, cst.Name):
            fn = self._fn()
            return fn is not None and expr.value in self.env.get(fn, set())
        return False

    def _group_ref(self, expr: cst.BaseExpression) -> list[str] | None:
        """What names a process group: ["leaf", key], ["global", qual], ["call", qual]."""
        if isinstance(expr, cst.Attribute) and expr.attr.value.endswith("_group"):
            if self._is_parallel(expr.value):
                return ["leaf", expr.attr.value[: -len("_group")]]
        if isinstance(expr, cst.Name) and expr.value.lstrip("_").isupper():
            return ["global", f"{self.ctx.module}.{expr.value}"]
        if isinstance(expr, cst.Call) and not expr.args:
            name = self.ctx.resolve(expr.func)
            if name:
                return ["call", name]
        return None

    # -- statements -------------------------------------------------------------
    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self.in_runtime:
            self.answers.enter(node)
        p = node.params
        if p.params or p.posonly_params or p.kwonly_params or isinstance(p.star_arg, cst.Param):
            return
        ref = self._width(node)
        if ref is not None:
            self.widths[self.ctx.qualname] = ref

    def _width(self, node: cst.FunctionDef) -> list[str] | None:
        """The group a function of no parameters returns the width of: its one
        statement past a docstring and imports is `return <group>.world_size` or
        `return <...>.get_world_size(<group>)`."""
        body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
        rest = [
            small
            for stmt in body
            if isinstance(stmt, cst.SimpleStatementLine)
            for small in stmt.body
            if not isinstance(small, (cst.Import, cst.ImportFrom))
            and not (isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString))
        ]
        if len(rest) != 1 or any(not isinstance(st, cst.SimpleStatementLine) for st in body):
            return None
        value = rest[0].value if isinstance(rest[0], cst.Return) else None
        if isinstance(value, cst.Attribute) and value.attr.value == WIDTH_ATTR:
            return self._group_ref(value.value)
        if isinstance(value, cst.Call) and len(value.args) == 1:
            name = dotted(value.func) or ""
            if name.rpartition(".")[2] == f"get_{WIDTH_ATTR}":
                return self._group_ref(value.args[0].value)
        return None

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        answered = self.answers.leave() if self.in_runtime else None
        if answered is not None:
            # a property binds the test only when it is all it answers (0.5.17's
            # `dcp_enabled` also answers False while the DCP group is missing)
            sizes = {_size_test(v) for v in answered[1]}
            if len(sizes) == 1 and None not in sizes:
                self.enabled.setdefault(answered[0], sizes.pop())  # type: ignore[arg-type]

    def branch_test(self, test: cst.BaseExpression) -> bool:
        return (
            isinstance(test, cst.Comparison)
            and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.Equal)
        )

    def _equal_width(self) -> bool:
        """Inside the body of `if a == b:`: an alias made when two widths are
        equal (`_ATTN_CP = _TP` when attn_cp_size == tp_size) is no width hazard."""
        return bool(self.ifs) and self.ifs[-1][0] and self.ifs[-1][1]

    def visit_Global(self, node: cst.Global) -> None:
        fn = self._fn()
        if fn is not None:
            self.globals.setdefault(fn, set()).update(n.name.value for n in node.names)

    def visit_Assign(self, node: cst.Assign) -> None:
        fn = self._fn()
        for t in node.targets:
            target = t.target
            entry, source = _entry(target), _entry(node.value)
            if self._equal_width():
                pass
            elif entry and source and entry[0] == source[0] and entry[1] != source[1]:
                # a group table's entry made another's (`joined["moe_dp"] = joined["attn_cp"]`)
                d = entry[0]
                self.aliases.append([f'{d}["{entry[1]}"]', f'{d}["{source[1]}"]', entry[1]])
            if not isinstance(target, cst.Name):
                continue
            if fn is None:
                self.module_names.add(target.value)
                continue
            if (
                target.value in self.globals.get(fn, set())
                and isinstance(node.value, cst.Name)
                and not self._equal_width()
            ):
                self.aliases.append([target.value, node.value.value, _key(target.value)])
            env = self.env.setdefault(fn, set())
            if self._is_parallel(node.value):
                env.add(target.value)
            else:
                env.discard(target.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if self._fn() is None and isinstance(node.target, cst.Name):
            self.module_names.add(node.target.value)

    def visit_Return(self, node: cst.Return) -> None:
        if self.in_runtime:
            self.answers.returned(node)
        fn = self._fn()
        if fn is not None and node.value is not None:
            ref = self._group_ref(node.value)
            if ref is not None:
                self.group_returns.setdefault(fn, []).append(ref)

    def visit_Call(self, node: cst.Call) -> None:
        fn = self._fn()
        if fn is None:
            return
        func = node.func
        if isinstance(func, cst.Attribute):
            ref = self._group_ref(func.value)
            if ref is not None:
                self.collectives.setdefault(fn, []).append(ref)
        name = self.ctx.resolve(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        if name:
            self.calls.setdefault(fn, set()).add(name)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        fn = self._fn()
        leaf = node.attr.value
        if fn is not None and leaf.endswith("_size") and self._is_parallel(node.value):
            self.sizes.append(self.ctx.site(node, fn=fn, leaf=leaf))

    def visit_Comparison(self, node: cst.Comparison) -> None:
        size = _size_test(node)
        if size is None:
            return
        if self.in_runtime and self._binding is not None and self._binding[1] == id(node):
            self.enabled.setdefault(self._binding[0], size)  # `dcp_enabled=cfg.dcp_size > 1`
        left = (
            node.left if _is_one(node.comparisons[0].comparator) else node.comparisons[0].comparator
        )
        assert isinstance(left, cst.Attribute)
        if self._fn() is not None and self._is_parallel(left.value):
            self.tests.append(
                self.ctx.site(node, fn=self._fn(), leaf=size, receiver=self.ctx.snippet(left.value))
            )

    _binding: tuple[str, int] | None = None  # (keyword or key, id of its value)

    def visit_Arg(self, node: cst.Arg) -> None:
        if self.in_runtime and node.keyword is not None:
            self._binding = (node.keyword.value, id(node.value))

    def visit_DictElement(self, node: cst.DictElement) -> None:
        key = string_value(node.key) if self.in_runtime else None
        if key is not None:
            self._binding = (key, id(node.value))

    def finish(self) -> Any:
        # a global's source must be a module global too; an entry's is the same table
        aliases = [a for a in self.aliases if a[1] in self.module_names or a[1].endswith('"]')]
        sized = {s["fn"] for s in self.sizes}
        facts = {
            "aliases": [[f"{self.ctx.module}.{t}", s, k] for t, s, k in aliases],
            "group_returns": {f"{self.ctx.module}.{q}": r for q, r in self.group_returns.items()},
            "widths": {f"{self.ctx.module}.{q}": r for q, r in self.widths.items()},
            "collectives": {f"{self.ctx.module}.{q}": r for q, r in self.collectives.items()},
            # what a function reading a size calls: a collective may be a helper's
            "calls": {
                f"{self.ctx.module}.{q}": sorted(c) for q, c in self.calls.items() if q in sized
            },
            "sizes": self.sizes,
            "tests": self.tests,
            "enabled": self.enabled,
        }
        return facts if any(facts.values()) else None


# -- the program ---------------------------------------------------------------------
class Model:
    """The aliased groups, their handles, width functions and collectives."""

    def __init__(self, program: Program) -> None:
        vocab = program.vocab
        self.files = list(program.facts(ID))
        self.aliased: dict[str, str] = {}  # key -> "target = source" (where it is aliased)
        self.group_global: dict[str, str] = {}  # qualified global -> key
        for _, _, f in self.files:
            for target, source, key in f["aliases"]:
                if vocab.fields.get(f"{key}_size", "").startswith("parallel"):
                    self.aliased.setdefault(key, f"{target} = {source}")
                    self.group_global[target] = key
        returns = {q: r for _, _, f in self.files for q, r in f["group_returns"].items()}
        self.group_fns: dict[str, str] = {}  # function -> the key of the group it returns
        changed = True
        while changed:
            changed = False
            for q, refs in sorted(returns.items()):
                key = next((k for k in map(self.group_of, refs) if k), None)
                if key and q not in self.group_fns:
                    self.group_fns[q] = key
                    changed = True
        self.widths: dict[str, list[str]] = {}
        for _, _, f in self.files:
            for q, ref in f["widths"].items():
                key = self.group_of(ref)
                if key:
                    self.widths.setdefault(key, []).append(q)
        self.wrappers: dict[str, set[str]] = {}  # key -> functions running a collective on it
        for _, _, f in self.files:
            for q, refs in f["collectives"].items():
                for key in {k for k in map(self.group_of, refs) if k}:
                    self.wrappers.setdefault(key, set()).add(q)
        # the runtime module's enabled leaves: size -> leaf (`dcp_size` -> `dcp_enabled`)
        self.enabled: dict[str, str] = {}
        for _, module, f in self.files:
            if module.rpartition(".")[0] == vocab.runtime_module.rpartition(".")[0]:
                for leaf, size in sorted(f["enabled"].items()):
                    self.enabled.setdefault(size, leaf)

    def _function(self, name: str, functions: Iterable[str]) -> str | None:
        """The function `name` calls: itself, or one a package re-exports under it."""
        module, _, short = name.rpartition(".")
        for q in sorted(functions):
            if q == name or (q.rpartition(".")[2] == short and q.startswith(module + ".")):
                return q
        return None

    def group_of(self, ref: list[str]) -> str | None:
        kind, name = ref
        if kind == "leaf":
            return name if name in self.aliased else None
        if kind == "global":
            return self.group_global.get(name)
        q = self._function(name, self.group_fns)
        return self.group_fns[q] if q else None

    def collective(self, fn: str, key: str, calls: list[str], refs: list[list[str]]) -> bool:
        if any(self.group_of(r) == key for r in refs):
            return True
        wrappers = self.wrappers.get(key, set())
        return any(self._function(c, wrappers) for c in calls)


class MoeCommunicatorWidth(Rule):
    id = ID
    name = "moe-communicator-width"
    summary = (
        "A configured parallel size read to size a collective on a group the code can "
        "alias to another (the MoE communicator), and a `size > 1` test where the runtime "
        "defines an enabled leaf"
    )
    visitor = WidthVisitor
    needs = (BAGS,)

    def tokens(self, vocab: Vocabulary) -> set[str]:
        parallel = {a for a, ns in vocab.bag_accessors.items() if ns == "parallel"}
        # a group table's entry named for a parallel size (`joined["moe_dp"]`); `_size > 1`:
        # a test, or the runtime binding a leaf to one
        keys = [
            f[: -len("_size")]
            for f, ns in vocab.fields.items()
            if ns == "parallel" and f.endswith("_size")
        ]
        entries = {f"{q}{k}{q}]" for k in keys for q in "'\""}
        return (
            parallel
            | entries
            | {WIDTH_ATTR, "global", "_size > 1", f"module:{vocab.runtime_module}"}
        )

    def _model(self, program: Program) -> Model:
        return program.memo(f"{ID}:model", lambda: Model(program))

    def derive(self, program: Program) -> dict[str, Any]:
        m = self._model(program)
        return {
            "aliased groups": dict(sorted(m.aliased.items())),
            "group functions": dict(sorted(m.group_fns.items())),
            "width functions": {k: sorted(v) for k, v in sorted(m.widths.items())},
            # an aliased group with no width function to name: its size reads are not checked
            "unchecked groups": sorted(set(m.aliased) - set(m.widths)),
            "collective functions": {k: len(v) for k, v in sorted(m.wrappers.items())},
            "enabled leaves": dict(sorted(m.enabled.items())),
        } | (
            # no group the code aliases: no hazard here (said in the sets, not on every run)
            {} if m.aliased else {"note": f"{NOTE_GROUPS}: no size read is checked"}
        )

    def partial(self, sets: dict[str, Any]) -> str | None:
        if not sets or not sets.get("aliased groups"):
            return None  # disabled (said apart), or nothing aliased (the sets' note)
        if not sets.get("width functions"):
            return f"{NOTE_WIDTH}.world_size) for an aliased group: nothing is checked"
        return None

    def check(self, program: Program) -> Iterable[RawFinding]:
        m = self._model(program)
        for path, module, f in m.files:
            for s in f["sizes"]:
                key = s["leaf"][: -len("_size")]
                if key not in m.aliased or key not in m.widths:
                    continue
                fn = f"{module}.{s['fn']}"
                refs = f["collectives"].get(fn, [])
                if not m.collective(fn, key, f["calls"].get(fn, []), refs):
                    continue
                width = sorted(m.widths[key])[0]
                wmod, _, wname = width.rpartition(".")
                yield RawFinding(
                    ID,
                    path,
                    s["scope"],
                    s["snippet"],
                    s["span"],
                    f"`{s['snippet']}` is the configured size, not the width of the "
                    f"`{key}` communicator this function runs a collective on (the group "
                    f"can be another's alias); ask `{wname}()` ({wmod})",
                    f"aliased at: {m.aliased[key]}\nwidth functions: "
                    + ", ".join(sorted(m.widths[key])),
                    data={"leaf": s["leaf"]},
                )
            for t in f["tests"]:
                leaf = m.enabled.get(t["leaf"])
                if leaf is None:
                    continue
                yield RawFinding(
                    ID,
                    path,
                    t["scope"],
                    t["snippet"],
                    t["span"],
                    f"`{t['snippet']}` spells what the leaf `{leaf}` answers: read "
                    f"`{t['receiver']}.{leaf}`",
                    f"beside {program.vocab.runtime_module}, `{leaf}` is bound to `{t['leaf']} > 1`",
                    data={"leaf": t["leaf"]},
                )


RULE = MoeCommunicatorWidth()
