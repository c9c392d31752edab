"""Readback surfaces: which functions report a readback, grouped by the readback
they serve, and the keys each reports.

Per file (on program.returned_values): what each function returns, and the
readback primitives a module defines: the record's whole-object readback (a
record method of no arguments annotated to return a dict) and the runtime's
name-driven leaf read (a method of one name parameter returning a lookup by
it). `Model` closes the primitives over what returns their results (a fixed
point, by called name), finds the surfaces (functions returning a dict that
spreads a readback or holds a primitive's result), the parts a surface spreads,
each surface's keys, and the groups by readback name (`group_name`). Asked by
CTX502, whose facts these are.

`own_descriptions` tells which keys a surface reports about itself rather than
as a readback field (the design's sibling rule is about the fields its users
lose): a key no sibling reports, whose value is a literal constant
(`"frontend": "python"`) or the result of a function of the surface's own
module that only that module calls, that is not handed the record, is no
readback primitive and reaches no bag read (`"grpc_features":
_media_input_features(mm_processor)`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, dotted
from ctxlint.program.call_model import EventKind
from ctxlint.program.calls import CallGraph, call_graph
from ctxlint.program.core import Program
from ctxlint.program.returned_values import (
    DictShape,
    ReturnedValuesVisitor,
    ReturnFacts,
    Spread,
    strip,
)

ID = "CTX502"  # the rule whose facts these are
WHOLE = "**whole readback"
_DICT_HEADS = ("dict", "Dict", "Mapping", "MutableMapping")


@dataclass(frozen=True, slots=True)
class ReadbackFacts:
    functions: dict[str, ReturnFacts]  # function -> what it returns (program.returned_values)
    # the readback primitives it defines: ("whole", the record's whole-object
    # readback) or ("leaf", the runtime's name-driven leaf read)
    seeds: list[tuple[str, str]]


class ReadbackVisitor(ReturnedValuesVisitor):
    """What each function returns, and the readback primitives a module defines."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        vocab = ctx.vocab
        assert vocab is not None
        self.record_classes = set(vocab.record_classes)
        self.in_runtime = ctx.module == vocab.runtime_module
        self.seeds: list[tuple[str, str]] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        super().visit_FunctionDef(node)
        params = self.stack[-1].params
        cls = self.ctx.enclosing_class()
        outer = self.ctx.scopes[-2]
        if outer.kind == "class" and cls and f"{self.ctx.module}.{cls}" in self.record_classes:
            returns = node.returns.annotation if node.returns else None
            head = (
                dotted(returns.value if isinstance(returns, cst.Subscript) else returns)
                if returns
                else None
            )
            if params == params[:1] and head and head.rpartition(".")[2] in _DICT_HEADS:
                self.seeds.append(("whole", node.name.value))

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        if self.stack[-1].keep and self.in_runtime and self.ctx.enclosing_class():
            self.seeds.append(("leaf", node.name.value))
        super().leave_FunctionDef(node)

    def visit_Return(self, node: cst.Return) -> None:
        super().visit_Return(node)
        if not self.stack or node.value is None:
            return
        # the name-driven read: a method of one name parameter returning a lookup
        # by it (`getattr(bag, name)`, `bag._leaf(name)`)
        value, params = strip(node.value), self.stack[-1].params
        if isinstance(value, cst.Call) and len(params) == 2:
            if any(
                isinstance(a.value, cst.Name) and a.value.value == params[1] for a in value.args
            ):
                self.stack[-1].keep = True

    def finish(self) -> ReadbackFacts | None:
        if not (self.returns or self.seeds):
            return None
        return ReadbackFacts(self.returns, self.seeds)


def group_name(name: str) -> str:
    """The readback a surface serves, from its name: `GetServerInfo`,
    `get_server_info` and `server_info` are one."""
    snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower().strip("_")
    return re.sub(r"^(get|read|fetch)_", "", snake)


class Model:
    def __init__(self, program: Program) -> None:
        # qualified name -> (path, name in its module, facts)
        self.fns: dict[str, tuple[str, str, ReturnFacts]] = {}
        self.modules: dict[str, str] = {}  # qualified name -> its module
        whole: set[str] = set()
        leaf: set[str] = set()
        bag_lookups: set[str] = set()  # what the bag accessors call: a bag, not a leaf
        accessors = set(program.vocab.bag_accessors)
        for path, module, facts in program.typed_facts(ID, ReadbackFacts):
            for qual, f in facts.functions.items():
                self.fns[f"{module}.{qual}"] = (path, qual, f)
                self.modules[f"{module}.{qual}"] = module
                if module == program.vocab.runtime_module and qual in accessors:
                    bag_lookups.update(f.ret)
            for kind, name in facts.seeds:
                (whole if kind == "whole" else leaf).add(name)
        # a public method: `__getattr__` and private helpers are the bags' own
        # machinery, not the read a readback endpoint calls
        leaf = {n for n in leaf - bag_lookups if not n.startswith("_")}
        self.whole_seeds, self.leaf_seeds = sorted(whole), sorted(leaf)
        # fixed point: a function whose return value is (or holds) a primitive's result
        self.whole, self.leaf = set(whole), set(leaf)
        changed = True
        while changed:
            changed = False
            for _, _, f in self.fns.values():
                name = f.name
                if name in self.whole or name.startswith("__"):
                    continue  # a dunder is every class's protocol, not a readback
                spreads = f.shape.spreads if f.shape is not None else []
                if any(self._is_whole(s) for s in spreads) or set(f.ret) & self.whole:
                    self.whole.add(name)
                    self.leaf.discard(name)
                    changed = True
                elif name not in self.leaf and set(f.ret) & self.leaf and f.shape is None:
                    self.leaf.add(name)
                    changed = True
        self.primitives = self.whole | self.leaf
        candidates: dict[str, DictShape] = {}
        for qual, (_, _, f) in sorted(self.fns.items()):
            shape = f.shape
            if shape is None:
                continue
            served = any(set(v) & self.primitives for v in shape.keys.values())
            if served or any(self._is_whole(s) for s in shape.spreads):
                candidates[qual] = shape
        # parts: a candidate another one spreads (`**build_server_info(...)`): its
        # keys count in the surface that spreads it
        by_name: dict[str, list[str]] = {}
        for q in candidates:
            by_name.setdefault(self.fns[q][2].name, []).append(q)
        self._spread_of: dict[int, str] = {}  # id(spread) -> the part it is
        for shape in candidates.values():
            for s in shape.spreads:
                part = self._find_part(s, candidates, by_name)
                if part is not None:
                    self._spread_of[id(s)] = part
        spread = set(self._spread_of.values())
        self.parts = {q: shape for q, shape in candidates.items() if q in spread}
        self.surfaces = {q: shape for q, shape in candidates.items() if q not in spread}
        self.keys = {q: self._keys(s) for q, s in self.surfaces.items()}
        self.groups: dict[str, list[str]] = {}
        for qual in sorted(self.surfaces):
            self.groups.setdefault(group_name(self.fns[qual][2].name), []).append(qual)

    def _is_whole(self, spread: Spread) -> bool:
        return bool(set(spread.calls) & self.whole)

    def _keys(self, shape: DictShape, depth: int = 0) -> list[str]:
        keys = set(shape.keys)
        for s in shape.spreads:
            part = self._part(s)
            if part is not None and depth < 4:
                keys |= set(self._keys(part, depth + 1))
            elif self._is_whole(s):
                keys.add(WHOLE)
            else:
                keys.add(f"**{s.text}")
        return sorted(keys)

    @staticmethod
    def _find_part(
        spread: Spread, candidates: dict[str, DictShape], by_name: dict[str, list[str]]
    ) -> str | None:
        """The candidate a spread's value comes from: by a resolved target, else by
        a called name only one candidate has (a re-export the import table hides)."""
        for target in spread.targets:
            if target in candidates:
                return target
        for name in spread.calls:
            if len(by_name.get(name, ())) == 1:
                return by_name[name][0]
        return None

    def _part(self, spread: Spread) -> DictShape | None:
        part = self._spread_of.get(id(spread))
        return self.parts.get(part) if part else None


def _literal(keys: list[str]) -> set[str]:
    """Keys compared across siblings: literal ones and the whole readback (an
    opaque spread's keys are unknown)."""
    return {k for k in keys if not k.startswith("**") or k == WHOLE}


def disagreements(
    program: Program, model: Model
) -> list[tuple[str, str, str, dict[str, list[str]]]]:
    """(group, surface, its short name, key -> the siblings reporting it, by
    short name) for each surface of a group of two or more that lacks a field
    a sibling reports (sorted keys)."""
    out = []
    for group, quals in sorted(model.groups.items()):
        if len(quals) < 2:
            continue
        own = own_descriptions(program, model, quals)
        fields = {q: _literal(model.keys[q]) - own[q] for q in quals}
        for qual in quals:
            others = [q for q in quals if q != qual]
            missing = sorted(set().union(*(fields[q] for q in others)) - _literal(model.keys[qual]))
            if missing:
                having = {k: [_short(q) for q in others if k in fields[q]] for k in missing}
                out.append((group, qual, _short(qual), having))
    return out


def _short(qual: str) -> str:
    return ".".join(qual.split(".")[-2:])


def own_descriptions(program: Program, model: Model, quals: list[str]) -> dict[str, set[str]]:
    """Per surface of one group, the keys it reports about itself (see the module
    docstring): a key no sibling reports, whose value is a constant or what a
    helper of its own module answers. A sibling that lacks one loses no field;
    a key two siblings report is the group's, whatever its values."""
    graph = call_graph(program)
    seeds = {program.vocab.qualified(a) for a in program.vocab.seed_accessors}
    reporters: dict[str, int] = {}
    for q in quals:
        for key in model.keys[q]:
            reporters[key] = reporters.get(key, 0) + 1
    out: dict[str, set[str]] = {}
    for q in quals:
        module = model.modules[q]
        out[q] = {
            key
            for key, what in model.surfaces[q].own.items()
            if reporters.get(key) == 1
            and (
                what.startswith("=")
                or _local_description(
                    graph, what.removeprefix("call "), module, model.primitives | seeds
                )
            )
        }
    return out


def _local_description(graph: CallGraph, fn: str, module: str, primitives: set[str]) -> bool:
    """`fn` is a function of `module` that only `module` calls, not handed the
    record, no readback primitive, reaching no bag read (through what it calls).
    `primitives` holds the readback primitives' names and the seed accessors'
    qualified names (a call of one reads the record: a config answer)."""
    func = graph.funcs.get(fn)
    if func is None or func.module != module or func.takes_record:
        return False
    if fn.rpartition(".")[2] in primitives:
        return False
    if any(graph.funcs[c].module != module for c in graph.callers.get(fn, ()) if c in graph.funcs):
        return False
    seen, todo = {fn}, [fn]
    while todo:
        if len(seen) > 200:  # a helper this wide is no description of a transport
            return False
        f = graph.funcs.get(todo.pop())
        if f is None:
            continue
        if f.takes_record or f.does(EventKind.READ):
            return False
        for found in graph.edges.get(f.qual, ()):
            for t in found:
                if t not in seen:
                    if t in primitives or t.rpartition(".")[2] in primitives:
                        return False
                    seen.add(t)
                    todo.append(t)
    return True


def readback_model(program: Program) -> Model:
    """The model, once a run (a prefilter round builds its own: the facts grow)."""
    return program.memo(f"{ID}:model", lambda: Model(program))
