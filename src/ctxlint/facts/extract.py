"""Per-file work: decode, parse once with LibCST, run every rule's visitor in
one traversal, and return plain serialisable facts.

This runs in pool workers, so it takes and returns only plain data.
"""

from __future__ import annotations

import json
import re
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

import libcst as cst

from ctxlint.core import deepstack, pysource
from ctxlint.facts import declarations as schema
from ctxlint.facts import entry, resume, typed
from ctxlint.facts import suppression_comments as suppressions
from ctxlint.facts.context import FileContext
from ctxlint.facts.visitor import FileVisitor
from ctxlint.facts.vocab import Vocabulary
from ctxlint.facts.walk import TRIVIA, walk

# The walk compares exact types: LibCST has no subclasses of these
SCOPE_TYPES = frozenset({cst.ClassDef, cst.FunctionDef})
IMPORT_TYPES = frozenset({cst.Import, cst.ImportFrom})
SCOPE, IMPORT = 1, 2
# A node type's role (SCOPE, IMPORT or 0), its visit_ calls and its leave_ calls
Plan = tuple[int, tuple[Callable[[Any], Any], ...], tuple[Callable[[Any], Any], ...]]
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
        self._plans: dict[type, Plan] = {}
        skipped = set(self.visits).union(self.leaves) & TRIVIA_NAMES
        if skipped:  # the walk never reaches layout nodes
            raise TypeError(f"visitors ask for layout nodes the walk skips: {sorted(skipped)}")

    def _plan(self, kind: type) -> Plan:
        """What a node of this exact type sets off: its role (SCOPE, IMPORT or 0)
        and the visitors' visit_ and leave_ calls. Worked out once per type: an
        isinstance against LibCST's ABC-derived classes costs a Python-level
        __instancecheck__ whenever it is False, on every node of the walk."""
        role = SCOPE if kind in SCOPE_TYPES else IMPORT if kind in IMPORT_TYPES else 0
        name = kind.__name__
        plan = self._plans[kind] = (
            role,
            tuple(self.visits.get(name, ())),
            tuple(self.leaves.get(name, ())),
        )
        return plan

    def on_visit(self, node: cst.CSTNode) -> bool:
        plan = self._plans.get(type(node)) or self._plan(type(node))
        role = plan[0]
        if role == SCOPE:
            self.ctx.push(node)
        elif role == IMPORT:
            self.ctx.add_local_import(node)
        for fn in plan[1]:
            fn(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        plan = self._plans.get(type(original_node)) or self._plan(type(original_node))
        for fn in plan[2]:
            fn(original_node)
        if plan[0] == SCOPE:
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
    """JSON round trip: Anchors become spans, typed facts their plain form
    (facts.typed), and cold and warm runs see exactly the same data types."""
    return json.loads(json.dumps(value, default=typed.plain))


# LibCST's message for valid Python it cannot read: "parser error: error at L:C: ..."
_LIBCST_AT = re.compile(r"error at (\d+):(\d+): (.*)")


def _unsupported(exc: cst.ParserSyntaxError) -> str:
    """Valid Python (CPython parsed it) that LibCST's grammar rejects."""
    found = _LIBCST_AT.search(exc.message)
    if found is None:
        return f"not supported by the parser (LibCST): {exc.message}"
    line, column, why = found.groups()
    return f"not supported by the parser (LibCST) at line {line}, column {column}: {why}"


def parse(text: str) -> cst.Module:
    """The LibCST tree of text CPython accepted (see pysource); raises SourceError."""
    try:
        return cst.parse_module(text)
    except cst.ParserSyntaxError as exc:
        raise pysource.SourceError(_unsupported(exc)) from None
    except ValueError as exc:
        raise pysource.SourceError(f"not supported by the parser (LibCST): {exc}") from None


def extract_file(
    path: str,
    module: str,
    source: bytes,
    vocab_json: dict[str, Any] | None,
    visitors: list[tuple[str, type[FileVisitor]]],
    target: str = pysource.DEFAULT_TARGET,
    clock: dict[str, float] | None = None,
    parser: Callable[[str], cst.Module] | None = None,
) -> dict[str, Any]:
    """Facts of one file: {"module", "facts": {key: ...}, "suppressions", "schema"?},
    where `visitors` are (key, class): the program model's parts and the rules'.
    or {"error": message}. With a `clock`, the seconds spent parsing ("parse":
    CPython's verdict and LibCST's parse) and in each visitor (its rule id, or
    "records") are added to it. `parser` parses the text in place of `parse`
    (a resident's kept module, spliced: engine.kept_tree)."""
    start = time.perf_counter()
    try:  # CPython's verdict first, on this thread (pysource.check)
        text = pysource.read(source, target)
    except pysource.SourceError as exc:
        return {"module": module, "error": str(exc)}
    finally:
        _tick(clock, "parse", start)
    return deepstack.call(
        _extract, path, module, text, vocab_json, visitors, clock, parser or parse
    )  # LibCST's part


def _fresh(
    path: str,
    module: str,
    is_package: bool,
    tree: cst.Module,
    vocab: Vocabulary,
    text: str,
    kinds: list[tuple[str, type[FileVisitor]]],
    scoped: bool,
) -> resume.State:
    """The context and the visitors before the walk: the program model's
    visitors first (rule visitors query them during the walk, as ctx.records),
    then the rules', keyed by rule id; the suppressions' scopes last, for a
    file that has some."""
    ctx = FileContext(
        path=path, module=module, is_package=is_package, module_node=tree, vocab=vocab, text=text
    )
    walking: list[FileVisitor] = []
    for key, cls in kinds:
        visitor = cls(ctx)
        ctx.parts[key] = visitor
        walking.append(visitor)
    ctx.records = ctx.parts.get("records")
    if scoped:  # only where there are some
        walking.append(suppressions.ScopeSpans(ctx))
    return ctx, walking


def _tick(clock: dict[str, float] | None, name: str, start: float) -> None:
    if clock is not None:
        clock[name] = clock.get(name, 0.0) + time.perf_counter() - start


def _extract(
    path: str,
    module: str,
    text: str,
    vocab_json: dict[str, Any] | None,
    kinds: list[tuple[str, type[FileVisitor]]],
    clock: dict[str, float] | None,
    parser: Callable[[str], cst.Module],
) -> dict[str, Any]:
    start = time.perf_counter()
    try:
        tree = parser(text)
    except pysource.SourceError as exc:
        return {"module": module, "error": str(exc)}
    finally:
        _tick(clock, "parse", start)
    is_package = path.endswith("__init__.py")
    vocab = Vocabulary.from_json(vocab_json) if vocab_json else None
    out: dict[str, Any] = {"module": module, "facts": {}}
    if vocab is None:  # the vocabulary round only needs declarations
        out["schema"] = schema.schema_facts(tree, module, is_package)
        return _plain(out)
    kept = getattr(parser, "kept", None)  # a resident's kept module (engine.kept_tree)
    kept = kept if kept is not None and kept.module is tree else None
    scanned = "ctxlint:" in text  # (a file that never mentions it has no suppression)
    found = suppressions.scan(text) if scanned else []
    fresh = _fresh(path, module, is_package, tree, vocab, text, kinds, bool(found))
    if kept is not None:
        fresh[0].texts.known = kept.said or {}
    names = [rid for rid, _ in kinds] + (["suppressions"] if found else [])

    def dispatch(state: resume.State) -> Dispatcher:
        return Dispatcher(state[0], state[1], clock, names)

    if kept is None:
        state, dispatcher = fresh, dispatch(fresh)
        walk(tree, dispatcher.on_visit, dispatcher.on_leave)
    else:
        setup = resume.Setup(path, module, vocab_json, tuple(kinds))
        at = kept.changed.index if kept.changed is not None else kept.hint
        state, kept.walk, _ = resume.walked(kept, setup, fresh, dispatch, text, at)
    ctx, walking = state
    visitors = list(zip([rid for rid, _ in kinds], walking, strict=False))
    scopes = walking[-1] if found else None
    facts = {}
    for rid, v in visitors:
        start = time.perf_counter()
        facts[rid] = v.finish()
        if clock is not None:
            clock[rid] = clock.get(rid, 0.0) + time.perf_counter() - start
    ctx.resolve_anchors(kept)
    if kept is not None:
        kept.said = ctx.texts.told
    out["facts"] = {k: v for k, v in facts.items() if v}
    if scanned:
        if scopes is not None:
            found = scopes.place(found)
        out["suppressions"] = found
    ctx.records = None  # the reference cycles (context <-> part visitors) that would hold the tree
    ctx.parts.clear()
    if kept is not None:  # the pieces that changed since the last entry (facts.entry)
        kept.entry = entry.piece(out, kept.entry)
        return kept.entry.value  # type: ignore[no-any-return]
    return _plain(out)
