"""Callees named inside part of a function body, and how a call path is shown.

Rules that start a walk somewhere other than a function entry (a thread's
target, the body of a `with torch.cuda.graph(...)` block) name what is called
there with the call graph's own typed targets, during their walk; the graph
resolves them (`program.reach.resolve_targets`) and `program.reach.first_reached`
follows its edges from there, keeping one parent per function so a finding can
show its call path (`chain_text`).
"""

from __future__ import annotations

from collections.abc import Iterable

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, dotted
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.call_model import Global, HeldMethod, SelfMethod, Target, target_json
from ctxlint.program.calls import CallGraph


def callee_targets(
    ctx: FileContext, expr: cst.BaseExpression, nested: Iterable[str] | None = None
) -> list[list[str]]:
    """What calling `expr` runs, as target JSON: `self.m`, `self.attr.m`, a name
    through the imports, a def nested in the enclosing function (`nested`, or
    when None as the binding model has it so far), `functools.partial(f, ...)`
    and `lambda: f(...)` as `f`."""
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
    elif ctx.in_function() and (
        ctx.parts[BINDINGS].nested_def(head) if nested is None else head in nested
    ):
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
