"""The program model's parts run on sources in memory: the real LibCST parse,
the real dispatcher and walk, the real part visitors, a real Program."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from typing import Any

from ctxlint.facts.context import FileContext
from ctxlint.facts.extract import Dispatcher, _plain, parse
from ctxlint.facts.visitor import FileVisitor
from ctxlint.facts.walk import walk
from ctxlint.program.bindings import Bindings
from ctxlint.program.classes import ClassFacts
from ctxlint.program.core import Program

PARTS: list[tuple[str, type[FileVisitor]]] = [("bindings", Bindings), ("classes", ClassFacts)]


def module_of(path: str) -> str:
    parts = path.removesuffix(".py").split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def walk_file(
    path: str, source: str, extra: list[tuple[str, type[FileVisitor]]] = ()
) -> tuple[FileContext, dict[str, Any]]:
    """Walk one file with the parts (and `extra` visitors after them, as rule
    visitors come after the parts): its context and its plain facts."""
    tree = parse(textwrap.dedent(source))
    ctx = FileContext(
        path=path,
        module=module_of(path),
        is_package=path.endswith("__init__.py"),
        module_node=tree,
        vocab=None,
    )
    visitors = []
    for key, cls in [*PARTS, *extra]:
        visitor = cls(ctx)
        ctx.parts[key] = visitor
        visitors.append((key, visitor))
    dispatcher = Dispatcher(ctx, [v for _, v in visitors])
    walk(tree, dispatcher.on_visit, dispatcher.on_leave)
    facts = {key: v.finish() for key, v in visitors}
    ctx.resolve_anchors()
    return ctx, _plain({k: v for k, v in facts.items() if v})


def program_of(files: dict[str, str]) -> Program:
    """A Program holding the parts' facts of every file."""
    entries = {}
    for path, source in files.items():
        _, facts = walk_file(path, source)
        entries[path] = {"module": module_of(path), "facts": facts}
    return Program(config=None, vocab=None, files=entries)  # type: ignore[arg-type]


class Probe(FileVisitor):
    """A rule-like visitor that asks the bindings part, at each call of
    `probe(x)`, what `x` is there; `ask` decides what is recorded."""

    ask: Callable[[Bindings, Any], Any] = staticmethod(lambda model, expr: model.receiver(expr))

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.seen: list[Any] = []

    def visit_Call(self, node: Any) -> None:
        from ctxlint.facts.context import dotted

        if dotted(node.func) == "probe" and node.args:
            self.seen.append(type(self).ask(self.ctx.parts["bindings"], node.args[0].value))
