"""The reader of resolution's decision: a module-level function that reads the
declaration stash off its first parameter and is neither a view nor a
declarer (SGLang's `resolution_result(server_args, field)`), the call a test
makes to assert what resolution decided.

A visitor inherits `SlotReaders`: it keeps each module-level function of two or
more parameters that reads a private slot of its first (`p._slot`,
`p.__dict__[...]`, `getattr(p, "_slot")` or `getattr(p, SLOT)`), with its
parameters. `decision_reader` picks, among those the resolution model finds
reading the stash, the one beside the declaration function first.
"""

from __future__ import annotations

from collections.abc import Iterable

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext
from ctxlint.facts.visitor import FileVisitor
from ctxlint.program.resolution import Resolution


class SlotReaders(FileVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.readers: dict[str, list[str]] = {}  # module-level fn -> its parameters
        self.top: tuple[str, str] | None = None  # (module-level fn, its first parameter)
        self._params: list[str] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        if len(self.ctx.scopes) == 2:
            params = [p.name.value for p in (*node.params.posonly_params, *node.params.params)]
            self.top = (f"{self.ctx.module}.{node.name.value}", params[0]) if params else None
            if self.top and len(params) >= 2:
                self.readers[self.top[0]] = []
                self._params = params

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        if len(self.ctx.scopes) == 2:
            if self.top and self.top[0] in self.readers and not self.readers[self.top[0]]:
                del self.readers[self.top[0]]  # read no private slot of its first parameter
            self.top = None

    def _private_read(self, obj: cst.BaseExpression) -> None:
        if self.top and self.top[0] in self.readers and not self.readers[self.top[0]]:
            if isinstance(obj, cst.Name) and obj.value == self.top[1]:
                self.readers[self.top[0]] = self._params

    def visit_Attribute(self, node: cst.Attribute) -> None:
        attr = node.attr.value  # `p._slot`, or `p.__dict__[SLOT]`
        if attr == "__dict__" or (attr.startswith("_") and not attr.startswith("__")):
            self._private_read(node.value)

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name) and func.value == "getattr" and len(node.args) >= 2:
            slot = node.args[1].value
            if not isinstance(slot, cst.SimpleString) or slot.value.strip("\"'").startswith("_"):
                self._private_read(node.args[0].value)  # a literal private slot, or a constant


def decision_reader(
    res: Resolution, readers: Iterable[dict[str, list[str]]]
) -> tuple[str, list[str]] | None:
    """(the reader, its parameters) among the files' SlotReaders, or None."""
    stash_readers = {
        fn for _, _, f in res.files for fn, key in f.slot_reads if res.slot(key) in res.stash
    }
    blocked = res.view_functions | set(res.appenders)
    candidates = sorted(
        (q, ps) for rs in readers for q, ps in rs.items() if q in stash_readers and q not in blocked
    )
    g = res.graph
    home = g.funcs[res.declaration].module if res.declaration in g.funcs else ""
    candidates.sort(key=lambda c: (c[0].rpartition(".")[0] != home, c[0]))
    return candidates[0] if candidates else None
