"""Process starts, for the part "calls": where code runs a target in a new process.

`Process(target=f)`, a process pool's `submit(f, ...)`/`map(f, ...)`, a Ray task or
actor (`@ray.remote` on a def or class, `ray.remote(Cls)`, `ray.remote(...)(Cls)`).
Mixed into the call facts visitor, whose targets and scopes it uses.
"""

from __future__ import annotations

from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, dotted
from ctxlint.program.call_model import Global, Site, Start, StartKind, Target

PROCESS_POOL = "ProcessPoolExecutor"


class ProcessStarts:
    ctx: FileContext
    stack: list[Any]  # the visitor's function stack (call_facts._Func)
    starts: list[Start]
    pool_attrs: set[tuple[str, str]]  # (class, attr) holding a process pool

    def _targets(self, expr: cst.BaseExpression) -> list[Target]:
        raise NotImplementedError

    def _is_ray_remote(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Call):
            expr = expr.func
        return Global("ray.remote") in self._targets(expr)

    def _is_pool(self, call: cst.Call) -> bool:
        name = dotted(call.func)
        return bool(name) and name.rpartition(".")[2] == PROCESS_POOL  # type: ignore[union-attr]

    def _site(self, node: cst.CSTNode) -> Site:
        return Site(self.ctx.snippet(node)[:160], self.ctx.anchor(node))

    def _start(self, kind: StartKind, targets: list[Target], node: cst.CSTNode) -> Start:
        fn = self.stack[-1] if self.stack else None
        return Start(
            kind,
            tuple(targets),
            self.ctx.qualname,
            fn.qual if fn else None,
            fn.cls if fn else None,
            self._site(node),
        )

    def _process_start(self, node: cst.Call, name: str | None) -> None:
        func = node.func
        if name is not None and name.rpartition(".")[2] == "Process":
            for arg in node.args:
                if arg.keyword is not None and arg.keyword.value == "target":
                    self.starts.append(
                        self._start(StartKind.PROCESS, self._targets(arg.value), node)
                    )
            return
        # ray.remote(Cls) and ray.remote(num_gpus=1)(Cls); ray.remote(num_gpus=1)
        # alone is a decorator factory, and the decorator is seen on the def
        positional = [a.value for a in node.args if a.keyword is None and not a.star]
        if name is not None and name.rpartition(".")[2] == "remote":
            if positional and Global("ray.remote") in self._targets(func):
                self.starts.append(self._start(StartKind.RAY, self._targets(positional[0]), node))
            return
        if isinstance(func, cst.Call) and positional and self._is_ray_remote(func.func):
            self.starts.append(self._start(StartKind.RAY, self._targets(positional[0]), node))
            return
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in ("submit", "map")
            and node.args
            and self._is_pool_expr(func.value)
        ):
            targets = self._targets(node.args[0].value)
            self.starts.append(self._start(StartKind.SUBMIT, targets, node))

    def _is_pool_expr(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Call):
            return self._is_pool(expr)
        if not self.stack:
            return False
        fn = self.stack[-1]
        if isinstance(expr, cst.Name):
            return expr.value in fn.pools
        # `self.pool` is decided in finish(), once every method was seen
        return (
            isinstance(expr, cst.Attribute)
            and isinstance(expr.value, cst.Name)
            and expr.value.value == fn.self_name
            and fn.cls is not None
            and (fn.cls, expr.attr.value) in self.pool_attrs
        )
