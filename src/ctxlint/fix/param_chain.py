"""A seed-default parameter that calls hand a record, dropped across files.

SGLang 0.5.17's `get_alloc_len_per_decode(server_args=None)` falls back to the
seed (`if server_args is None: server_args = get_server_args()`), and calls
hand it a record: `get_alloc_reserve_per_decode(server_args)` its own
parameter of the same shape, `get_req_to_token_extra_context_len(server_args)`
its required one, called with `self.server_args`; `pool_configurator` hands
`sa = kvc.server_args`. Every one of those is the process's published record,
so 0.5.19 dropped the parameter and the argument along the chain. With
--unsafe the fix does the same, after planning (fix.default_param planned the
function's own file as if the parameter went, `Site.drops`):

- every call of the function, in every file that imports it from its module
  (or its own), is found, and what it hands the parameter is weighed: nothing;
  the seed accessor's value or a local bound only to it; a record attribute
  the program model knows as the published record (CTX102's question,
  program.handed_reads: `self.server_args`, `kvc.server_args`, or a local bound
  only to one); or a parameter of a module-level function whose own calls all
  hand the published record, followed up the chain. A parameter used only to
  hand it on goes too (with the argument at its calls); one with other uses
  stays, and only the argument it hands goes.
- any other mention of a function whose parameter goes (a value use, an
  attribute `x.f`, a rename on import, a string that is its name or a dotted
  path to it, `__all__` among them), a call through `*args`, a method, or a
  call whose argument is not provably the published record refuses the whole
  unit, saying which and where; the function's file is then planned again
  with that reason.

What holds is one unit: the files it edits (with no finding of their own,
some) are checked with the rest and rolled back together (fix_run). Prose
that names a function (a docstring, a comment, a message) is no mention.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import libcst as cst
from libcst.metadata import Assignment

from ctxlint.fix.plan import node_text
from ctxlint.fix.source import SourceFile
from ctxlint.fix.unused import drop_unused_imports
from ctxlint.program.core import Program
from ctxlint.program.handed_reads import handed_reads

PUBLISHED = object()  # what a call hands: the published record
# (path, module, class of the method or None, attribute) -> is that attribute the
# published record there (CTX102's handed record)
Handed = Callable[[str, str, str | None, str], bool]


class HandedRecords:
    """CTX102's answer to "is `self.<attr>` / `x.<attr>` the record the process
    published" (program.handed_reads: parked, owned, the record-parameter
    convention), kept apart from the program it was asked of."""

    def __init__(self, program: Program) -> None:
        found = handed_reads(program)
        self.convention = found.names
        self.parked = set(found.parked)
        self.owned = set(found.owned)

    def __call__(self, path: str, module: str, cls: str | None, attr: str) -> bool:
        if cls is not None:
            key = (path, cls, attr)
            if key in self.parked:
                return True
            if key in self.owned:
                return False
        return self.convention.holds(attr, module)


@dataclass(frozen=True)
class Fn:
    """A module-level function's parameter, `name(param)` defined in `path`, or
    a plain method's of the module-level class `cls`."""

    path: str
    name: str
    param: str
    cls: str | None = None

    def __str__(self) -> str:
        return f"{self.cls}.{self.name}" if self.cls else self.name


@dataclass
class Unit:
    """What dropping one parameter takes: the new texts (path -> text), what
    went beside the function's own parameter, or why nothing goes."""

    texts: dict[str, str] = field(default_factory=dict)
    also: list[str] = field(default_factory=list)
    refused: str = ""


class _Refused(Exception):
    pass


def _seed_call(expr: cst.BaseExpression, seeds: set[str]) -> bool:
    if not isinstance(expr, cst.Call) or expr.args:
        return False
    func = expr.func
    last = func.attr if isinstance(func, cst.Attribute) else func
    return isinstance(last, cst.Name) and last.value in seeds


def _def(src: SourceFile, fn: Fn) -> cst.FunctionDef | None:
    body: Any = src.tree.body
    if fn.cls is not None:
        cls = [s for s in body if isinstance(s, cst.ClassDef) and s.name.value == fn.cls]
        body = cls[0].body.body if len(cls) == 1 else ()
    found = [s for s in body if isinstance(s, cst.FunctionDef) and s.name.value == fn.name]
    return found[0] if len(found) == 1 else None


def _param(fn: cst.FunctionDef, name: str, bound: bool) -> tuple[int | None, cst.Param] | None:
    """(its position in a call, None for keyword-only; the Param) of `name`;
    `bound`: a method called through `self` (its first parameter is not passed)."""
    ps = fn.params
    for i, p in enumerate([*ps.posonly_params, *ps.params]):
        if p.name.value == name:
            return i - bound, p
    for p in ps.kwonly_params:
        if p.name.value == name:
            return None, p
    return None


class Chains:
    """The parameters to drop, over the tree's current texts."""

    def __init__(
        self,
        paths: dict[str, str],  # path -> module, the checked files
        text: Callable[[str], str],  # a file's text as the fix leaves it so far
        before: Callable[[str], str],  # a file's text as checked
        seeds: set[str],
        seed_modules: set[str],  # where the seed accessors are defined
        handed: Handed,
    ) -> None:
        self.paths, self.text, self.before = paths, text, before
        self.seeds, self.seed_modules, self.handed = seeds, seed_modules, handed
        self._parsed: dict[str, SourceFile] = {}

    def _src(self, path: str, *, original: bool = False) -> SourceFile:
        if original:
            return SourceFile(path, self.paths[path], self.before(path))
        if path not in self._parsed:
            self._parsed[path] = SourceFile(path, self.paths[path], self.text(path))
        return self._parsed[path]

    def where(self, src: SourceFile, node: cst.CSTNode) -> str:
        return f"{src.path}:{src.line(node)}"

    # -- the unit ---------------------------------------------------------------
    def drop(self, path: str, marker: str) -> Unit:
        """Drop `marker` ("function:parameter", already gone from its def in
        `path`'s planned text) and the argument at each of its calls."""
        name, _, param = marker.partition(":")
        cls, _, name = name.rpartition(".")
        self._parsed.clear()
        origin = Fn(path, name, param, cls or None)
        try:
            return self._unit(origin)
        except _Refused as exc:
            return Unit(refused=f"the parameter `{param}` stays: {exc}")
        except Exception as exc:  # a file that does not parse, or a bug: nothing goes
            why = f"the search for its calls failed ({type(exc).__name__}: {exc})"
            return Unit(refused=f"the parameter `{param}` stays: {why}")

    def _unit(self, origin: Fn) -> Unit:
        drop: list[Fn] = [origin]
        seen = {origin}
        queue = [origin]
        args: dict[str, set[int]] = {}  # path -> id(Arg) to remove
        params: dict[str, set[int]] = {}  # path -> id(Param) to remove
        also: list[str] = []
        gone: dict[str, list[cst.BaseExpression]] = {}  # path -> the arguments removed
        while queue:
            fn = queue.pop(0)
            src = self._src(fn.path, original=fn is origin)
            found = _def(src, fn)
            spec = _param(found, fn.param, fn.cls is not None) if found is not None else None
            if spec is None:
                raise _Refused(f"`{fn}({fn.param})` is not defined once in {fn.path}")
            calls = self._calls(fn)
            if fn is not origin and not calls:
                raise _Refused(
                    f"no call of `{fn}` in the project: what its `{fn.param}` holds is not known"
                )
            for csrc, call in calls:
                arg = _argument(call, spec[0], fn.param)
                if arg is None:
                    continue
                held = self._held(csrc, arg.value)
                if isinstance(held, str):
                    where = self.where(csrc, call)
                    raise _Refused(f"the call at {where} hands `{node_text(arg.value)}`, {held}")
                if held is not PUBLISHED:
                    nxt, gparam = held
                    passed = self._passes_on(csrc, gparam, fn, spec[0], calls)
                    if nxt not in seen:
                        seen.add(nxt)
                        queue.append(nxt)
                        if passed:
                            drop.append(nxt)
                            params.setdefault(nxt.path, set()).add(id(gparam.node))
                            also.append(f"`{nxt.name}`'s `{nxt.param}`")
                if fn in drop:
                    args.setdefault(csrc.path, set()).add(id(arg))
                    gone.setdefault(csrc.path, []).append(arg.value)
        n = sum(len(v) for v in args.values())
        if n:
            also.append(f"the argument at {n} call{'s' if n > 1 else ''}")
        texts = {}
        for path in sorted(set(args) | set(params)):
            src = self._src(path)
            lines = self._dead(src, gone.get(path, []))
            edit = _Edit(args.get(path, set()), params.get(path, set()), lines)
            text = src.tree.visit(edit).code  # type: ignore[attr-defined]
            if lines:  # the seed accessor's import, if nothing reads it now
                text = drop_unused_imports(
                    text, self.seeds, self.seed_modules, src.module, src.is_package
                )
            try:
                compile(text, path, "exec")
            except SyntaxError as exc:
                raise _Refused(f"{path} would not compile ({exc.msg})") from exc
            texts[path] = text
        return Unit(texts, also)

    def _dead(self, src: SourceFile, removed: list[cst.BaseExpression]) -> set[int]:
        """The `x = <seed>()` lines whose `x` only those removed arguments read."""
        ids = {id(e) for e in removed}
        out: set[int] = set()
        for expr in removed:
            scope = src.scopes.get(expr) if isinstance(expr, cst.Name) else None
            found = list(scope[expr.value]) if scope is not None else []  # type: ignore[attr-defined]
            lines = []
            for a in found:
                target = src.parent(a.node) if type(a) is Assignment else None
                assign = src.parent(target) if isinstance(target, cst.AssignTarget) else None
                line = src.parent(assign) if isinstance(assign, cst.Assign) else None
                if not (
                    isinstance(line, cst.SimpleStatementLine)
                    and len(line.body) == 1
                    and len(assign.targets) == 1  # type: ignore[union-attr]
                    and _seed_call(assign.value, self.seeds)  # type: ignore[union-attr]
                    and all(id(r.node) in ids for r in a.references)
                ):
                    break
                lines.append(id(line))
            else:
                out.update(lines)
        return out

    def _passes_on(
        self, src: SourceFile, assignment: Any, fn: Fn, index: int | None, calls: list[Any]
    ) -> bool:
        """The parameter's only uses hand it to `fn`'s parameter (it goes with it)."""
        handed = set()
        for csrc, call in calls:
            arg = _argument(call, index, fn.param) if csrc is src else None
            if arg is not None:
                handed.add(id(arg.value))
        refs = [r.node for r in assignment.references]
        return bool(refs) and all(id(r) in handed for r in refs)

    # -- the calls --------------------------------------------------------------
    def _calls(self, fn: Fn) -> list[tuple[SourceFile, cst.Call]]:
        """Every call of `fn` in the tree (a method's: `self.name(...)` in its
        own class); any other mention refuses."""
        word = re.compile(rf"\b{re.escape(fn.name)}\b")
        named = re.compile(rf"\s*(?:[\w.]+\.)?{re.escape(fn.name)}\s*")
        out: list[tuple[SourceFile, cst.Call]] = []
        for path in sorted(self.paths):
            if path != fn.path and not word.search(self.text(path)):
                continue
            src = self._src(path)
            ours = fn.cls is None and (
                path == fn.path or self._imports(src, fn.name, self.paths[fn.path])
            )
            for node in src.walk.nodes:
                if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
                    value = node.evaluated_value
                    if isinstance(value, str) and named.fullmatch(value):
                        raise _Refused(
                            f"`{fn.name}` is named in a string at {self.where(src, node)}"
                        )
                    continue
                if not (isinstance(node, cst.Name) and node.value == fn.name):
                    continue
                up = src.parent(node)
                if isinstance(up, cst.FunctionDef) and up.name is node:
                    if path == fn.path and up is _def(src, fn):
                        continue
                    raise _Refused(f"another `{fn.name}` is defined at {self.where(src, node)}")
                call: Any = up
                if isinstance(up, cst.Attribute) and up.attr is node:
                    call = src.parent(up)
                    own = (
                        fn.cls is not None
                        and path == fn.path
                        and isinstance(up.value, cst.Name)
                        and up.value.value == "self"
                        and _class_of(src, up) == fn.cls
                    )
                    if not (own and isinstance(call, cst.Call) and call.func is up):
                        raise _Refused(
                            f"`{node_text(up)}` at {self.where(src, node)} may be `{fn}` "
                            "(only its own class's `self` calls are followed)"
                            if fn.cls
                            else f"`{node_text(up)}` at {self.where(src, node)} may be `{fn}` "
                            "(an attribute's calls are not followed)"
                        )
                elif not ours:
                    continue  # another binding of the name (a method is never named bare)
                elif isinstance(up, cst.ImportAlias):
                    continue
                if not (isinstance(call, cst.Call) and (call.func is node or call.func is up)):
                    raise _Refused(
                        f"`{fn}` is named other than in a call at {self.where(src, node)}"
                    )
                if any(a.star for a in call.args):
                    raise _Refused(f"the call at {self.where(src, node)} passes `*` arguments")
                out.append((src, call))
        return out

    def _imports(self, src: SourceFile, name: str, module: str, depth: int = 1) -> bool:
        """The file imports `name` from `module` under its own name. Refused:
        under another name, by `*`, or from a checked module that re-exports it
        (its calls would be missed)."""
        found = False
        by_module = {m: p for p, m in self.paths.items()}
        for node in src.walk.nodes:
            if not isinstance(node, cst.ImportFrom):
                continue
            where = self.where(src, node)
            if isinstance(node.names, cst.ImportStar):
                if _star_source(src, node) == module:
                    raise _Refused(f"`{module}` is imported by `*` at {where}")
                continue
            for local, target in src.imported(node).items():
                source, _, last = target.rpartition(".")
                if last != name:
                    continue
                if target == f"{module}.{name}":
                    if local != name:
                        raise _Refused(f"`{name}` is imported as `{local}` at {where}")
                    found = True
                elif depth and source in by_module and source != src.module:
                    again = self._src(by_module[source])
                    if self._imports(again, name, module, depth - 1):
                        raise _Refused(
                            f"`{name}` is imported from `{source}`, which re-exports it, at {where}"
                        )
        return found

    # -- what a call hands ------------------------------------------------------
    def _held(self, src: SourceFile, expr: cst.BaseExpression) -> Any:
        """PUBLISHED; (the function, the Assignment of its parameter) for a
        parameter of a module-level function; or why it is not known."""
        if _seed_call(expr, self.seeds):
            return PUBLISHED
        if isinstance(expr, cst.Attribute):
            base, attr = expr.value, expr.attr.value
            cls = (
                _class_of(src, expr)
                if isinstance(base, cst.Name) and base.value == "self"
                else None
            )
            if cls is None and isinstance(base, cst.Name) and base.value == "self":
                return "not provably the published record (`self` outside a class)"
            if self.handed(src.path, src.module, cls, attr):
                return PUBLISHED
            return "not provably the published record (no handed record, as CTX102 knows them)"
        if not isinstance(expr, cst.Name):
            return "not provably the published record"
        scope = src.scopes.get(expr)
        found = list(scope[expr.value]) if scope is not None else []
        if not found or not all(type(a) is Assignment for a in found):
            return "not provably the published record (a name bound otherwise)"
        if any(isinstance(a.node, cst.Param) for a in found):
            param = found[0].node
            fn = src.parent(src.parent(param))
            if len(found) > 1 or not isinstance(fn, cst.FunctionDef):
                return "a parameter also bound otherwise"
            if src.parent(fn) is not src.tree:
                return f"a parameter of `{fn.name.value}`, a method (its calls are not followed)"
            if param.default is not None and not (
                isinstance(param.default, cst.Name) and param.default.value == "None"
            ):
                return f"a parameter of `{fn.name.value}` with a default other than None"
            return Fn(src.path, fn.name.value, param.name.value), found[0]
        for a in found:  # a local: each value it is bound to
            target = src.parent(a.node)
            assign = src.parent(target) if isinstance(target, cst.AssignTarget) else None
            if not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
                return "not provably the published record (a name bound otherwise)"
            if self._held(src, assign.value) is not PUBLISHED:
                return f"not provably the published record (`{expr.value} = {node_text(assign.value)}`)"
        return PUBLISHED


def _star_source(src: SourceFile, node: cst.ImportFrom) -> str:
    """The module `from M import *` names, relative ones resolved."""
    name = node_text(node.module) if node.module is not None else ""
    if not node.relative:
        return name
    package = src.module if src.is_package else src.module.rpartition(".")[0]
    for _ in range(len(node.relative) - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{name}" if name else package


def _argument(call: cst.Call, index: int | None, name: str) -> cst.Arg | None:
    positional = [a for a in call.args if a.keyword is None]
    for a in call.args:
        if a.keyword is not None and a.keyword.value == name:
            return a
    if index is not None and index < len(positional):
        return positional[index]
    return None


def _class_of(src: SourceFile, node: cst.CSTNode) -> str | None:
    """The qualified name of the class whose method `node` is in."""
    names: list[str] = []
    cls = None
    cur = src.parent(node)
    while cur is not None:
        if isinstance(cur, (cst.ClassDef, cst.FunctionDef)):
            names.append(cur.name.value)
            if cls is None and isinstance(cur, cst.ClassDef):
                cls = len(names)
        cur = src.parent(cur)
    if cls is None:
        return None
    return ".".join(reversed(names[cls - 1 :]))


class _Edit(cst.CSTTransformer):
    """Remove the arguments, parameters and statement lines named (by id of the
    original node)."""

    def __init__(self, args: set[int], params: set[int], lines: set[int]) -> None:
        super().__init__()
        self.args, self.params, self.lines = args, params, lines

    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> Any:
        return cst.RemoveFromParent() if id(original) in self.lines else updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        kept = _without(original.args, updated.args, self.args)
        return updated if kept is None else updated.with_changes(args=kept)

    def leave_Parameters(self, original: cst.Parameters, updated: cst.Parameters) -> cst.Parameters:
        return without_params(original, updated, self.params)


def without_params(
    original: cst.Parameters, updated: cst.Parameters, remove: set[int]
) -> cst.Parameters:
    """`updated` less the parameters whose original is in `remove` (by id), the
    commas left right."""
    changes: dict[str, Any] = {}
    for name in ("posonly_params", "params", "kwonly_params"):
        kept = _without(getattr(original, name), getattr(updated, name), remove)
        if kept is not None:
            changes[name] = kept
    out = updated.with_changes(**changes) if changes else updated
    if not out.kwonly_params and isinstance(out.star_arg, cst.ParamStar):
        out = out.with_changes(star_arg=cst.MaybeSentinel.DEFAULT)  # a bare `*` alone
    return out


def _without(original: Any, updated: Any, remove: set[int]) -> list[Any] | None:
    """`updated` less the items whose original is in `remove`; None: none was."""
    if not any(id(o) in remove for o in original):
        return None
    kept = [u for o, u in zip(original, updated, strict=True) if id(o) not in remove]
    if kept and id(original[-1]) in remove:  # the last went: the new last takes its comma
        last = original[-1]  # and the space before the bracket (a line break, say)
        space = "whitespace_after_param" if isinstance(last, cst.Param) else "whitespace_after_arg"
        kept[-1] = kept[-1].with_changes(comma=last.comma, **{space: getattr(last, space)})
    return kept
