"""Per-file work: decode, parse once with LibCST, run every rule's visitor in
one traversal, and return plain serialisable facts.

This runs in pool workers, so it takes and returns only plain data.
"""

from __future__ import annotations

import ast
import json
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import libcst as cst

from ctxlint import schema, suppressions
from ctxlint.filecontext import Anchor, FileContext
from ctxlint.records import RecordTracker
from ctxlint.rule import FileVisitor, Rule
from ctxlint.vocab import Vocabulary
from ctxlint.walk import TRIVIA, walk

SCOPE_NODES = (cst.ClassDef, cst.FunctionDef)
TRIVIA_NAMES = frozenset(t.__name__ for t in TRIVIA)


class Dispatcher:
    """Batches every visitor's `visit_X`/`leave_X` into a single walk, keeping
    the file context's scopes and local imports current around them."""

    def __init__(
        self,
        ctx: FileContext,
        visitors: list[FileVisitor],
        clock: dict[str, float] | None = None,
        names: list[str] | None = None,
    ) -> None:
        self.ctx = ctx
        self.visits: dict[str, list[Callable[[Any], Any]]] = defaultdict(list)
        self.leaves: dict[str, list[Callable[[Any], Any]]] = defaultdict(list)
        for i, v in enumerate(visitors):
            for attr in dir(type(v)):
                if attr.startswith(("visit_", "leave_")):
                    fn = getattr(v, attr)
                    if clock is not None:  # --timings: each call charged to its rule
                        fn = _timed(fn, clock, names[i] if names else type(v).__name__)
                    (self.visits if attr[0] == "v" else self.leaves)[attr[6:]].append(fn)
        skipped = set(self.visits).union(self.leaves) & TRIVIA_NAMES
        if skipped:  # the walk never reaches layout nodes
            raise TypeError(f"visitors ask for layout nodes the walk skips: {sorted(skipped)}")

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, SCOPE_NODES):
            self.ctx.push(node)
        elif isinstance(node, (cst.Import, cst.ImportFrom)):
            self.ctx.add_local_import(node)
        for fn in self.visits.get(type(node).__name__, ()):
            fn(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        for fn in self.leaves.get(type(original_node).__name__, ()):
            fn(original_node)
        if isinstance(original_node, SCOPE_NODES):
            self.ctx.pop()


def _timed(fn: Callable[[Any], Any], clock: dict[str, float], name: str) -> Callable[[Any], Any]:
    def call(node: Any) -> Any:
        start = time.perf_counter()
        try:
            return fn(node)
        finally:
            clock[name] = clock.get(name, 0.0) + time.perf_counter() - start

    return call


def _plain(value: Any) -> Any:
    """JSON round trip: Anchors become spans, and cold and warm runs see
    exactly the same data types."""
    return json.loads(
        json.dumps(value, default=lambda o: o.to_json() if isinstance(o, Anchor) else str(o))
    )


def _decode(source: bytes) -> tuple[str | None, str | None]:
    """(text, None), or (None, why not) for bytes that are not UTF-8."""
    try:
        return source.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return None, f"not valid UTF-8 (byte {exc.start})"


def _cannot(exc: BaseException) -> str:
    return f"cannot parse: {type(exc).__name__}: {exc}"


def parse(source: bytes) -> tuple[cst.Module | None, str | None]:
    text, error = _decode(source)
    if text is None:
        return None, error
    try:
        return cst.parse_module(text), None
    except cst.ParserSyntaxError as exc:
        return (
            None,
            f"syntax error at line {exc.raw_line}, column {exc.raw_column + 1}: {exc.message}",
        )
    except (RecursionError, ValueError) as exc:  # pathological nesting, odd bytes
        return None, _cannot(exc)


def syntax_error(source: bytes) -> str | None:
    """Why a file no rule needs would not parse (ast: a fraction of a LibCST parse)."""
    text, error = _decode(source)
    if text is None:
        return error
    try:
        ast.parse(text)
    except SyntaxError as exc:
        return f"syntax error at line {exc.lineno}, column {exc.offset}: {exc.msg}"
    except (RecursionError, ValueError, MemoryError) as exc:
        return _cannot(exc)
    return None


def extract_file(
    path: str,
    module: str,
    source: bytes,
    vocab_json: dict[str, Any] | None,
    rules: list[Rule],
    clock: dict[str, float] | None = None,
) -> dict[str, Any]:
    """Facts of one file: {"module", "facts": {rule_id: ...}, "suppressions", "schema"?}
    or {"error": message}. With a `clock`, the seconds spent parsing ("parse")
    and in each visitor (its rule id, or "records") are added to it."""
    start = time.perf_counter()
    tree, error = parse(source)
    if clock is not None:
        clock["parse"] = clock.get("parse", 0.0) + time.perf_counter() - start
    if tree is None:
        return {"module": module, "error": error}
    is_package = path.endswith("__init__.py")
    vocab = Vocabulary.from_json(vocab_json) if vocab_json else None
    out: dict[str, Any] = {"module": module, "facts": {}}
    if vocab is None:  # the vocabulary round only needs declarations
        out["schema"] = schema.schema_facts(tree, module, is_package)
        return _plain(out)
    ctx = FileContext(
        path=path, module=module, is_package=is_package, module_node=tree, vocab=vocab
    )
    tracker = RecordTracker(ctx)
    ctx.records = tracker
    visitors: list[tuple[str, FileVisitor]] = [("records", tracker)]
    visitors += [(r.id, r.visitor(ctx)) for r in rules if r.visitor is not None]
    dispatcher = Dispatcher(ctx, [v for _, v in visitors], clock, [rid for rid, _ in visitors])
    walk(tree, dispatcher.on_visit, dispatcher.on_leave)
    facts = {}
    for rid, v in visitors:
        start = time.perf_counter()
        facts[rid] = v.finish()
        if clock is not None:
            clock[rid] = clock.get(rid, 0.0) + time.perf_counter() - start
    ctx.resolve_anchors()
    out["facts"] = {k: v for k, v in facts.items() if v}
    if b"ctxlint:" in source:
        out["suppressions"] = suppressions.scan(source.decode("utf-8"))
    ctx.records = None  # the one reference cycle (context <-> tracker) that would hold the tree
    return _plain(out)
