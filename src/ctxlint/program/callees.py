"""Callees named inside part of a function body, and forward reachability.

Rules that start a walk somewhere other than a function entry (a thread's
target, the body of a `with torch.cuda.graph(...)` block) name what is called
there with the call graph's own typed targets, during their walk; the graph
resolves them (`CallGraph.targets`) and `forward` follows its edges from there,
keeping one parent per function so a finding can show its call path.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, dotted
from ctxlint.program.call_model import Global, HeldMethod, SelfMethod, Target, target_json
from ctxlint.program.calls import CallGraph


def callee_targets(
    ctx: FileContext, expr: cst.BaseExpression, nested: Iterable[str] = ()
) -> list[list[str]]:
    """What calling `expr` runs, as target JSON: `self.m`, `self.attr.m`, a name
    through the imports, a def nested in the enclosing function (`nested`),
    `functools.partial(f, ...)` and `lambda: f(...)` as `f`."""
    if isinstance(expr, cst.Call):
        name = dotted(expr.func)
        if name and name.rpartition(".")[2] == "partial" and expr.args:
            return callee_targets(ctx, expr.args[0].value, nested)
        return []
    if isinstance(expr, cst.Lambda):
        body = expr.body
        return callee_targets(ctx, body.func, nested) if isinstance(body, cst.Call) else []
    name = dotted(expr)
    if name is None:
        return []
    head, _, rest = name.partition(".")
    out: Target
    if ctx.in_function() and head == ctx.scope.self_name:
        parts = rest.split(".") if rest else []
        if len(parts) == 1:
            out = SelfMethod(parts[0])
        elif len(parts) == 2:
            out = HeldMethod(parts[0], parts[1])
        else:
            return []
    elif head in nested and ctx.in_function():
        out = Global(f"{ctx.module}.{ctx.qualname}.{name}")
    else:
        resolved = ctx.resolve(expr)
        if resolved is None:
            return []
        out = Global(resolved)
    return [target_json(out)]


def function_key(ctx: FileContext) -> str:
    """The call graph's key of the function the walk is in (`module.<module>`
    outside any function)."""
    if ctx.in_function():
        return f"{ctx.module}.{ctx.qualname}"
    return f"{ctx.module}.<module>"


def forward(graph: CallGraph, seeds: dict[str, str | None]) -> dict[str, str | None]:
    """Every function reachable from `seeds` (function -> its parent, None at a
    seed), breadth first, so each parent is on a shortest path."""
    parents = dict(seeds)
    todo = list(seeds)
    while todo:
        nxt: list[str] = []
        for q in todo:
            for found in graph.edges.get(q, ()):
                for t in found:
                    if t not in parents:
                        parents[t] = q
                        nxt.append(t)
        todo = nxt
    return parents


def path_to(parents: dict[str, str | None], q: str) -> list[str]:
    """The call path from a seed to `q`."""
    out = [q]
    while parents.get(out[-1]) is not None:
        out.append(parents[out[-1]])  # type: ignore[arg-type]
    return out[::-1]


def short(qual: str, module: str | None = None) -> str:
    """A function's name without its module (`Class.method`)."""
    if module and qual.startswith(module + "."):
        return qual[len(module) + 1 :]
    return qual.rpartition(".")[2]


def chain_text(graph: CallGraph, chain: list[str]) -> str:
    """A call path as a finding says it: `f -> Cls.g -> h`."""
    return " -> ".join(
        short(q, graph.funcs[q].module if q in graph.funcs else q.rpartition(".")[0]) for q in chain
    )


def resolve_targets(graph: CallGraph, fn: str, cls: str | None, raw: list[Any]) -> list[str]:
    """Functions the JSON targets of a call in function `fn` (of class `cls`) run."""
    from ctxlint.program.call_model import targets_from_json

    targets = targets_from_json(raw)
    func = graph.funcs.get(fn)
    return graph.targets(func if func is not None else cls, targets)


def wanted_modules(graph: CallGraph, reached: Iterable[str], raw: Iterable[Any] = ()) -> set[str]:
    """`module:` tokens for what the walk from `reached` (and the JSON targets
    `raw`) calls and the program has not parsed yet: every module on the way to
    an unresolved qualified name inside the program's top-level packages."""
    from ctxlint.program.call_model import targets_from_json

    tops = {m.partition(".")[0] for m in graph.modules}
    out: set[str] = set()

    def want(name: str, depth: int = 0) -> None:
        parts = name.split(".")
        if parts[0] not in tops or depth > 8 or graph.resolve_global(name):
            return
        out.update(f"module:{'.'.join(parts[:i])}" for i in range(1, len(parts) + 1))
        target = graph.reexported(name)
        if target:
            want(target, depth + 1)

    for t in targets_from_json(list(raw)):
        if isinstance(t, Global):
            want(t.name)
    for q in reached:
        func = graph.funcs.get(q)
        for event in func.events if func is not None else ():
            for t in event.targets:
                if isinstance(t, Global):
                    want(t.name)
    return out
