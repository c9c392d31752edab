"""Import-time reads: where config is read at import time, cached in a module
global or a process-wide memo, read through a legacy accessor, or through the
removed `.config` hop.

Per file, over the vocabulary's config accessors (program.reads: seed and bags,
the parallel one included) and its legacy accessors: an accessor read at import
time (module level, a class body, a decorator or default value of a function
defined at import time; not in a function, a lambda or under `if __name__ ==
"__main__":`), a read assigned to a name the function declared `global`
(program.bindings), a read inside a function memoised process-wide
(MEMO_DECORATORS), a legacy accessor called outside the module defining it, and
a `.config` hop off a bag that has no `config` leaf. A read whose next name is
no config (a method, a live handle) is no read. Each `ImportTimeRead` carries
its kind and where. Asked by CTX602, whose facts these are.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, dotted
from ctxlint.facts.typed import Site, site
from ctxlint.facts.visitor import FileVisitor
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.bindings import Bindings
from ctxlint.program.classes import class_index
from ctxlint.program.core import Program
from ctxlint.program.reads import HOP, config_accessors, config_attribute, has_config_hop
from ctxlint.program.resource_leases import ACCESSOR as RESOURCES
from ctxlint.program.resource_leases import SLOT
from ctxlint.program.test_doubles import RESET

# The standard library's process-wide memos (the language's, not the codebase's).
MEMO_DECORATORS = ("functools.cache", "functools.lru_cache")


def _calls(node: cst.CSTNode, parent: cst.CSTNode | None = None) -> Iterator[tuple[cst.Call, Any]]:
    """Every call in a (small) subtree, with its parent: a default value, a
    decorator, a right-hand side."""
    if isinstance(node, cst.Call):
        yield node, parent
    for child in node.children:
        yield from _calls(child, node)


def _params(fn: cst.FunctionDef) -> set[str]:
    """The names a function's parameters bind."""
    p = fn.params
    every = [*p.posonly_params, *p.params, *p.kwonly_params]
    every += [a for a in (p.star_arg, p.star_kwarg) if isinstance(a, cst.Param)]
    return {a.name.value for a in every}


def _names(node: cst.CSTNode) -> set[str]:
    """The bare names an expression reads (not attribute names after a dot)."""
    if isinstance(node, cst.Name):
        return {node.value}
    if isinstance(node, cst.Attribute):
        return _names(node.value)
    out: set[str] = set()
    for child in node.children:
        out |= _names(child)
    return out


def global_details(read: ImportTimeRead) -> str | None:
    """CTX602's remedy for a global computed from an accessor and parameters of
    the function filling it (0.5.23's `_IS_FIRST_RANK_ON_NODE`, from
    `get_device().base_gpu_id == gpu_id` in `update_deep_gemm_config(gpu_id)`)."""
    if read.kind != "global" or not read.params:
        return None
    names = ", ".join(f"`{p}`" for p in read.params)
    return (
        f"`{read.where}` is computed from the accessor and {names}, a parameter of the function "
        f"that fills it: a use elsewhere has no {names} to recompute it from, so compute it "
        "where that is handed (the runner) and pass the result to its users as an argument, "
        "as a per-runner value travels. Cached once, it also misses later overrides and "
        "re-publishes of what the accessor answers."
    )


def effect_details(read: ImportTimeRead) -> str | None:
    """Why CTX602 does not offer to drop a memo whose function does more than
    read (0.5.23's `init_mori_op` registers a process group and builds the mori
    op): without the memo that runs again on every call."""
    if read.kind != "memo" or not read.effects:
        return None
    shown = ", ".join(f"`{e}()`" for e in read.effects[:3])
    more = len(read.effects) - 3
    shown += f" and {more} more" if more > 0 else ""
    return (
        f"Read the accessor outside `{read.where}` and pass the value in as one of its "
        f"arguments, which keys the memo. Keep the memo: `{read.where}` also calls {shown}, "
        "which would run again on every call without it."
    )


def _is_main_guard(node: cst.If) -> bool:
    test = node.test
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    left, right = test.left, test.comparisons[0].comparator
    for name, literal in ((left, right), (right, left)):
        if dotted(name) == "__name__" and isinstance(literal, cst.SimpleString):
            return literal.evaluated_value == "__main__"
    return False


@dataclass(frozen=True, slots=True)
class ImportTimeRead:
    """An accessor read (`name`) of a `kind`; `where` says where (the place at
    import time, the global, the memoised function, the legacy accessor's module,
    a hop's namespace)."""

    kind: str  # "import", "global", "memo", "legacy", "hop", or "reset" (RuntimeReset)
    name: str
    where: str
    site: Site
    # a memo's: what the memoised function calls (resolved names); the classes
    # among them (`built_classes`) are the objects the memo builds and keeps
    builds: tuple[str, ...] = ()
    # a memo's: the calls in the memoised function beyond reading (neither an
    # accessor nor a builtin type's conversion), as spelled: what dropping the
    # memo would run again on every call (registering, building, logging)
    effects: tuple[str, ...] = ()
    # a global's: the parameters of the filling function the cached value is
    # computed with (`get_device().base_gpu_id == gpu_id`): a use elsewhere
    # lacks them, so "read the accessor where the value is used" does not do
    params: tuple[str, ...] = ()
    # a memo's: the callees (resolved) whose result it hands back, directly or
    # through a local (`op = mori.ops.EpDispatchCombineOp(cfg)`, `return op`)
    returns: tuple[str, ...] = ()
    # the runtime module's "reset": its `reset_context` (`name`) reinstalls the
    # slots in `where` (","-joined: `_CONTEXT.resources = Resources()`) and clears
    # the memos in `builds` (`init_op.cache_clear()`); `returns` holds
    # `get_resources` where the module defines that tier accessor


class ImportTimeVisitor(FileVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        vocab = ctx.vocab
        assert vocab is not None
        self.vocab = vocab
        self.accessors = config_accessors(vocab)
        defining = {q.rpartition(".")[0] for q in vocab.legacy_accessors}
        self.legacy = set() if ctx.module in defining else set(vocab.legacy_accessors)
        self.active = ctx.module != vocab.runtime_module
        # the runtime module: what its `reset_context` reinstalls and clears
        self.reset: RuntimeReset | None = None if self.active else RuntimeReset()
        self.lambdas = 0
        self.main_guards = 0
        self.bindings: Bindings = ctx.parts[BINDINGS]  # which names a function declared global
        self.memo: dict[int, bool] = {}  # function node -> memoised process-wide
        self.memo_calls: dict[int, list[str]] = {}  # memoised function node -> what it calls
        # memoised function node -> its calls beyond reading; function node -> the
        # calls made where it is defined (decorators, defaults)
        self.memo_effects: dict[int, list[str]] = {}
        self.def_calls: dict[int, set[int]] = {}
        self.memo_reads: list[tuple[int, int]] = []  # (index in found, its function node)
        # memoised function node -> local name -> the callee its value came from;
        # memoised function node -> the callees whose result it returns
        self.memo_bound: dict[int, dict[str, str]] = {}
        self.memo_returns: dict[int, list[str]] = {}
        self.reported: set[int] = set()
        self.not_config: set[int] = set()  # accessor calls followed by a non-config name
        self.found: list[ImportTimeRead] = []

    # -- helpers ------------------------------------------------------------
    def _accessor(self, node: cst.CSTNode) -> str | None:
        """The qualified config accessor a zero-argument call calls, or None."""
        if not isinstance(node, cst.Call) or node.args:
            return None
        if not isinstance(node.func, (cst.Name, cst.Attribute)):
            return None
        q = self.ctx.resolve(node.func)
        return q if q in self.accessors else None

    def _read(self, call: cst.Call, parent: Any) -> str | None:
        """The accessor a call reads config through, or None: not an accessor, or
        the base of a method or a live handle rather than a config name."""
        q = self._accessor(call)
        if q is None or id(call) in self.not_config:
            return None
        if isinstance(parent, cst.Attribute) and parent.value is call:
            if not config_attribute(self.vocab, self.accessors[q], parent.attr.value):
                return None
        return q

    def _add(
        self, kind: str, node: cst.CSTNode, name: str, where: str = "", params: tuple[str, ...] = ()
    ) -> None:
        if id(node) in self.reported:
            return
        self.reported.add(id(node))
        self.found.append(ImportTimeRead(kind, name, where, site(self.ctx, node), params=params))

    def _at_import_time(self) -> bool:
        return (
            self.lambdas == 0
            and self.main_guards == 0
            and all(s.kind != "function" for s in self.ctx.scopes)
        )

    def _memoised(self, fn: cst.CSTNode | None) -> bool:
        if not isinstance(fn, cst.FunctionDef):
            return False
        key = id(fn)
        if key not in self.memo:
            self.memo[key] = any(
                self.ctx.resolve(
                    d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
                )
                in MEMO_DECORATORS
                for d in fn.decorators
                if isinstance(
                    d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator,
                    (cst.Name, cst.Attribute),
                )
            )
        return self.memo[key]

    # -- visits ---------------------------------------------------------------
    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.lambdas += 1

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self.lambdas -= 1

    def visit_If(self, node: cst.If) -> None:
        if len(self.ctx.scopes) == 1 and _is_main_guard(node):
            self.main_guards += 1

    def leave_If(self, original_node: cst.If) -> None:
        if len(self.ctx.scopes) == 1 and _is_main_guard(original_node):
            self.main_guards -= 1

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        # the def's own scope is pushed already: its decorators and defaults
        # run where the def statement runs, at import time when no function encloses it
        if self.reset is not None and self.ctx.qualname in (RESET, RESOURCES):
            self.reset.defines.add(self.ctx.qualname)
        if not self.active or self.lambdas or self.main_guards:
            return
        if any(s.kind == "function" for s in self.ctx.scopes[:-1]):
            return
        params = node.params
        defaults = [
            p.default
            for p in (*params.posonly_params, *params.params, *params.kwonly_params)
            if p.default is not None
        ]
        for where, roots in (
            ("a decorator", [d.decorator for d in node.decorators]),
            ("a default argument value", defaults),
        ):
            for root in roots:
                for call, parent in _calls(root):
                    q = self._read(call, parent)
                    if q is not None:
                        self._add("import", call, q, f"{where} of `{node.name.value}`")

    def _cached(self, targets: list[cst.BaseExpression], value: cst.BaseExpression | None) -> None:
        if value is None or not self.active or not self.ctx.in_function():
            return
        declared = self.bindings.declared_global
        names = [t.value for t in targets if isinstance(t, cst.Name) and declared(t.value)]
        if not names:
            return
        fn = self.ctx.scope.node
        params = _params(fn) if isinstance(fn, cst.FunctionDef) else set()
        used = tuple(sorted(params & _names(value)))
        for call, parent in _calls(value):
            q = self._read(call, parent)
            if q is not None:
                self._add("global", call, q, names[0], used)

    def visit_Assign(self, node: cst.Assign) -> None:
        self._cached([t.target for t in node.targets], node.value)
        if self.reset is not None:
            self.reset.assigned(self.ctx, node)
        elif len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            callee = self._built_by(node.value)
            fn = self.ctx.scope.node
            if callee is not None:
                self.memo_bound.setdefault(id(fn), {})[node.targets[0].target.value] = callee

    def visit_Return(self, node: cst.Return) -> None:
        value = node.value
        fn = self.ctx.scope.node
        if value is None or not isinstance(fn, cst.FunctionDef) or not self.active:
            return
        if isinstance(value, cst.Name):
            callee = self.memo_bound.get(id(fn), {}).get(value.value)
        else:
            callee = self._built_by(value)
        if callee is not None:
            self.memo_returns.setdefault(id(fn), []).append(callee)

    def _built_by(self, value: cst.BaseExpression) -> str | None:
        """The callee (resolved) of a call in a memoised function that is neither
        an accessor nor a builtin type's conversion: what may build an object."""
        fn = self.ctx.scope.node
        if not isinstance(value, cst.Call) or not isinstance(value.func, (cst.Name, cst.Attribute)):
            return None
        if not isinstance(fn, cst.FunctionDef) or self._at_import_time() or not self._memoised(fn):
            return None
        if self._accessor(value) is not None or self._builtin_type(value.func):
            return None
        return self.ctx.resolve(value.func)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._cached([node.target], node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._cached([node.target], node.value)

    def _builtin_type(self, func: cst.BaseExpression) -> bool:
        """`int(...)`, `str(...)`: a builtin type no import or scope rebinds."""
        if not isinstance(func, cst.Name) or func.value in self.ctx.imports:
            return False
        if any(func.value in s.imports for s in self.ctx.scopes[1:]):
            return False
        found = getattr(builtins, func.value, None)
        return isinstance(found, type) and not issubclass(found, BaseException)

    def _at_def(self, fn: cst.FunctionDef) -> set[int]:
        """The calls in `fn`'s decorators and default values (by identity): they
        run where the def runs, not on each call."""
        if id(fn) not in self.def_calls:
            roots: list[cst.CSTNode] = [d.decorator for d in fn.decorators]
            p = fn.params
            roots += [a.default for a in (*p.posonly_params, *p.params, *p.kwonly_params)]
            self.def_calls[id(fn)] = {id(c) for r in roots if r is not None for c, _ in _calls(r)}
        return self.def_calls[id(fn)]

    def _memo_effect(self, node: cst.Call) -> None:
        """Record a call in a memoised function that does more than read."""
        fn = self.ctx.scope.node
        if not isinstance(fn, cst.FunctionDef) or self._at_import_time():
            return
        if (
            not self._memoised(fn)
            or self._accessor(node) is not None
            or self._builtin_type(node.func)
        ):
            return
        if id(node) in self._at_def(fn):  # `@lru_cache(maxsize=4)`, a default: run once
            return
        text = dotted(node.func) or self.ctx.module_node.code_for_node(node.func)
        self.memo_effects.setdefault(id(fn), []).append(text)

    def visit_Call(self, node: cst.Call) -> None:
        if self.reset is not None:
            self.reset.called(self.ctx, node)
        if self.active:
            self._memo_effect(node)
        if not self.active or not isinstance(node.func, (cst.Name, cst.Attribute)):
            return
        q = self.ctx.resolve(node.func)
        if q is None:
            return
        if q in self.legacy:
            self._add("legacy", node, q, q.rpartition(".")[0])
            return
        fn = self.ctx.scope.node
        memoised = not self._at_import_time() and self._memoised(fn)
        # a decorator's or default's call runs once, where the def runs: it builds nothing kept
        at_def = self._at_def(fn) if memoised and isinstance(fn, cst.FunctionDef) else set()
        if memoised and q not in self.accessors and id(node) not in at_def:
            self.memo_calls.setdefault(id(fn), []).append(q)
        if q not in self.accessors or node.args or id(node) in self.not_config:
            return
        if self._at_import_time():
            where = "a class body" if self.ctx.scope.kind == "class" else "module level"
            self._add("import", node, q, where)
        elif memoised:
            before = len(self.found)
            self._add("memo", node, q, self.ctx.scope.name)
            if len(self.found) > before:
                self.memo_reads.append((before, id(fn)))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        # seen before the call it is taken on (pre-order): mark the accessor calls
        # whose next name is not config, so the call's own visit skips them
        if not self.active or not isinstance(node.value, cst.Call):
            return
        q = self._accessor(node.value)
        if q is None:
            return
        namespace = self.accessors[q]
        if not config_attribute(self.vocab, namespace, node.attr.value):
            self.not_config.add(id(node.value))
        if node.attr.value != HOP:
            return
        if namespace and not has_config_hop(self.vocab, namespace):
            self._add("hop", node, q, namespace)

    def finish(self) -> tuple[ImportTimeRead, ...] | None:
        for i, fn in self.memo_reads:
            calls = tuple(sorted(set(self.memo_calls.get(fn, ()))))
            effects = tuple(dict.fromkeys(self.memo_effects.get(fn, ())))
            returns = tuple(dict.fromkeys(self.memo_returns.get(fn, ())))
            self.found[i] = replace(self.found[i], builds=calls, effects=effects, returns=returns)
        if self.reset is not None and RESET in self.reset.defines and self.reset.site is not None:
            self.found.append(self.reset.fact(self.ctx.module))
        return tuple(self.found) or None


class RuntimeReset:
    """The runtime module's `reset_context`, as written: the slots it assigns a
    fresh object (`_CONTEXT.resources = Resources()`), the memos it clears
    (`x.cache_clear()`), and whether the module defines the resources tier's
    accessor. CTX602 says a memo outlives the reset only where this shows it."""

    def __init__(self) -> None:
        self.slots: list[str] = []
        self.cleared: list[str] = []
        self.defines: set[str] = set()
        self.site: Site | None = None

    def assigned(self, ctx: FileContext, node: cst.Assign) -> None:
        if ctx.qualname != RESET or not isinstance(node.value, cst.Call):
            return
        self.site = self.site or site(ctx, node)
        for t in node.targets:
            if isinstance(t.target, cst.Attribute):
                self.slots.append(t.target.attr.value)

    def called(self, ctx: FileContext, node: cst.Call) -> None:
        func = node.func
        if ctx.qualname == RESET and isinstance(func, cst.Attribute):
            if func.attr.value == "cache_clear":
                self.cleared.append(ctx.resolve(func.value) or dotted(func.value) or "?")

    def fact(self, module: str) -> ImportTimeRead:
        assert self.site is not None
        return ImportTimeRead(
            "reset",
            f"{module}.{RESET}",
            ",".join(dict.fromkeys(self.slots)),
            self.site,
            builds=tuple(dict.fromkeys(self.cleared)),
            returns=(RESOURCES,) if RESOURCES in self.defines else (),
        )


def resets_resources(program: Program, key: str) -> tuple[bool, frozenset[str]]:
    """Whether the runtime's `reset_context` installs a fresh resources tier
    (it assigns the tier's slot a new object) in a module defining the tier's
    accessor, and the memos it clears."""
    for _, _, found in program.typed_facts(key, tuple[ImportTimeRead, ...]):
        for f in found:
            if f.kind == "reset" and SLOT in f.where.split(",") and RESOURCES in f.returns:
                return True, frozenset(f.builds)
    return False, frozenset()


def handles_built(program: Program, read: ImportTimeRead) -> str:
    """What a memoised function builds and keeps: the parsed classes it
    constructs (`built_classes`), else what it hands back from a call of a name
    outside the parsed tree spelled as a class (PEP 8's CapWords: 0.5.23's
    `init_mori_op` returns `mori.ops.EpDispatchCombineOp(config)`)."""
    found = built_classes(program, read)
    if found:
        return found
    index = class_index(program)
    outside = {
        short
        for q in read.returns
        if index.external(q) and (short := q.rpartition(".")[2])[:1].isupper()
    }
    return ", ".join(sorted(outside))


def built_classes(program: Program, read: ImportTimeRead) -> str:
    """The classes a memoised function constructs (its calls that name a class
    of the parsed tree, through re-exports), short names joined: what the memo
    builds once and hands back after every override, re-publish and
    `reset_context()` (a memo is no resources-tier entry, which that clears)."""
    index = class_index(program)
    found = {c for q in read.builds if (c := index.resolve(q)) is not None}
    return ", ".join(sorted(c.rpartition(".")[2] for c in found))


def memo_modules(program: Program, key: str) -> set[str]:
    """`module:` tokens for what memos call: parsed, the class index knows their
    classes (`built_classes`)."""
    return {
        f"module:{q.rpartition('.')[0]}"
        for _, _, found in program.typed_facts(key, tuple[ImportTimeRead, ...])
        for f in found
        if f.kind == "memo"
        for q in f.builds
    }


# the remedies a message has no room for (the finding's details): a memo that
# builds an object, and one building it where the runtime's `reset_context()`
# installs a fresh resources tier (the design's home of process-level handles)
# and does not clear the memo
BUILT_REMEDY = "pass the values in as the memo's arguments"
HANDLE_REMEDY = (
    "A process-level handle belongs in the resources tier, which `reset_context()` "
    "replaces: keep `{built}` in a `get_resources()` entry, or pass the values `{where}` "
    "reads in as its arguments (the memo's key). Until then it also misses every override."
)


def kind_of(program: Program, module: str, read: ImportTimeRead, key: str) -> tuple[str, str, str]:
    """CTX602's message kind for a read, what its memo builds, and its details:
    "handle" where the memo builds an object the reset misses, "built" where it
    builds one, "paired" for a global computed with its filler's parameters,
    "effects" for a memo that does more than read, else the read's own kind."""
    built = handles_built(program, read) if read.kind == "memo" else ""
    details = global_details(read) or effect_details(read) or ""
    if built:
        resets, cleared = program.memo(f"{key}:reset", lambda: resets_resources(program, key))
        if resets and f"{module}.{read.site.scope}" not in cleared:
            return "handle", built, HANDLE_REMEDY.format(built=built, where=read.where)
        return "built", built, BUILT_REMEDY
    if read.kind == "global" and details:
        return "paired", "", details
    return ("effects" if read.kind == "memo" and read.effects else read.kind), "", details
