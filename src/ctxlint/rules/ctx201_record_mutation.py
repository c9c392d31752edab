"""CTX201 record-mutation: a write to a field of a record instance.

The record is the operator's raw input, sealed after resolution; a write
outside the resolution pipeline desyncs it from the bags it was projected into
(and raises at run time under the strict guard). Instances are the seed and
its aliases, names and attributes annotated with the record class, and the
names the codebase itself gives record parameters (derived from annotations).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxlint.filecontext import FileContext, dotted, string_value
from ctxlint.lazy_libcst import cst
from ctxlint.rule import FileVisitor, Program, RawFinding, Rule
from ctxlint.rules._shared import positional
from ctxlint.vocab import Vocabulary

ID = "CTX201"
SETATTR_CALLS = {"setattr": "setattr()", "delattr": "delattr()"}


class RecordWriteVisitor(FileVisitor):
    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        assert ctx.vocab is not None
        self.fields = set(ctx.vocab.fields)
        # the runtime module owns the record slot (it builds the record a test
        # override publishes and seeds its private caches): not a mutation site
        self.active = ctx.module != ctx.vocab.runtime_module
        self.writes: list[dict[str, Any]] = []

    def _base(self, expr: cst.BaseExpression) -> dict[str, Any] | None:
        """What kind of record holder `expr` is, or None if it cannot be one."""
        rec = self.ctx.records
        if rec.is_seed(expr):
            return {"k": "seed"}
        if isinstance(expr, cst.Name):
            if rec.is_annotated_name(expr.value):
                return {"k": "annotated"}
            if expr.value in ("self", "cls") or rec.is_other_typed(expr.value):
                return None
            return {"k": "name", "n": expr.value}
        attr = rec.self_attr(expr)
        if attr is not None:
            return {"k": "self", "cls": self.ctx.enclosing_class(), "n": attr}
        if isinstance(expr, cst.Attribute):
            return {"k": "attr", "n": expr.attr.value}
        return None

    def _write(
        self, node: cst.CSTNode, base: cst.BaseExpression, field: str | None, form: str
    ) -> None:
        if not self.active or (field is not None and field not in self.fields):
            return
        kind = self._base(base)
        if kind is None:
            return
        self.writes.append(
            {
                "field": field,
                "form": form,
                "base": kind,
                "scope": self.ctx.qualname,
                "snippet": self.ctx.snippet(node),
                "span": self.ctx.anchor(node),
            }
        )

    def _target(self, target: cst.BaseExpression, form: str) -> None:
        if isinstance(target, cst.Attribute):
            self._write(target, target.value, target.attr.value, form)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for e in target.elements:
                self._target(e.value, form)
        elif isinstance(target, cst.StarredElement):
            self._target(target.value, form)
        elif isinstance(target, cst.Subscript):
            self._dict_write(target, form)

    def _dict_write(self, target: cst.Subscript, form: str) -> None:
        """`vars(rec)["f"] = v` and `rec.__dict__["f"] = v`."""
        holder = target.value
        base: cst.BaseExpression | None = None
        if isinstance(holder, cst.Call) and dotted(holder.func) == "vars" and holder.args:
            base, how = holder.args[0].value, "vars()[...]"
        elif isinstance(holder, cst.Attribute) and holder.attr.value == "__dict__":
            base, how = holder.value, "__dict__[...]"
        if base is None or len(target.slice) != 1:
            return
        index = target.slice[0].slice
        key = string_value(index.value) if isinstance(index, cst.Index) else None
        self._write(target, base, key, f"{how} {form}")

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._target(node.target, "assignment")

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._target(node.target, "annotated assignment")

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._target(node.target, "augmented assignment")

    def visit_For(self, node: cst.For) -> None:
        self._target(node.target, "for target")

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._target(node.asname.name, "with target")

    def visit_Del(self, node: cst.Del) -> None:
        self._target(node.target, "del")

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        args = positional(node)
        name = dotted(func)
        if name in SETATTR_CALLS and len(args) >= 2:
            self._write(node, args[0], string_value(args[1]), SETATTR_CALLS[name])
        elif isinstance(func, cst.Attribute) and func.attr.value == "__setattr__":
            if name is not None and len(args) >= 3 and name.count(".") >= 1:
                # object.__setattr__(rec, "f", v) / SomeClass.__setattr__(rec, "f", v)
                self._write(node, args[0], string_value(args[1]), f"{name}()")
            if len(args) == 2:  # rec.__setattr__("f", v)
                self._write(node, func.value, string_value(args[0]), "__setattr__()")
        elif isinstance(func, cst.Attribute) and func.attr.value == "update":
            holder = func.value
            if isinstance(holder, cst.Call) and dotted(holder.func) == "vars" and holder.args:
                self._write(node, holder.args[0].value, None, "vars().update()")
            elif isinstance(holder, cst.Attribute) and holder.attr.value == "__dict__":
                self._write(node, holder.value, None, "__dict__.update()")

    def finish(self) -> Any:
        rec = self.ctx.records
        for w in self.writes:
            if w["base"]["k"] == "self":
                w["base"] = rec.settle(w["base"])
        return self.writes


def record_names(program: Program) -> set[str]:
    """The codebase's naming convention for a record parameter.

    A name qualifies when functions annotate a parameter of that name with the
    record class more than once, and more often than with any other concrete
    type (`Any` does not count against it): one `args: ServerArgs` among many
    `args: dict` is not a convention, and every `args.x = ...` in the tree must
    not become a record write because of it.
    """
    counts: dict[str, int] = {}
    other: dict[str, int] = {}
    for entry in program.files.values():
        facts = entry["facts"].get("records") or {}
        for name, n in facts.get("record_params", {}).items():
            counts[name] = counts.get(name, 0) + n
        for name, n in facts.get("other_params", {}).items():
            other[name] = other.get(name, 0) + n
    return {name for name, n in counts.items() if n >= 2 and n > other.get(name, 0)}


def _branch(record_module: str, rival: str) -> str | None:
    """The package holding a rival record class, one level below the package its
    module shares with the record's module (`sglang.multimodal_gen` for
    `sglang.multimodal_gen.runtime.server_args.ServerArgs` against
    `sglang.srt.server_args`); None when the rival's module is an ancestor of the
    record's, and no package separates the two."""
    rec = record_module.split(".")
    riv = rival.rpartition(".")[0].split(".")
    k = 0
    while k < min(len(rec), len(riv)) and rec[k] == riv[k]:
        k += 1
    return ".".join(riv[: k + 1]) if k < len(riv) else None


def _under(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


class RecordConvention:
    """Where a name of the convention means the record.

    Another class of the record's simple name (a rival record: SGLang's
    `sglang.multimodal_gen` has its own `ServerArgs`, outside the contract)
    takes a convention name over inside its own package: where that package's
    parameters of the name are annotated with the rival at least twice and
    more often than with the record, an unannotated one means the rival there.
    Explicit annotations, the seed and parked records are decided as before.
    """

    def __init__(self, program: Program) -> None:
        self.names = record_names(program)
        record_module = program.vocab.record_module
        # (name, package) -> (record votes, rival votes, rival classes) in that package
        votes: dict[tuple[str, str], list[Any]] = {}
        per_file: list[tuple[str, dict[str, Any]]] = []
        for entry in program.files.values():
            facts = entry["facts"].get("records") or {}
            per_file.append((entry["module"], facts))
            for name, rivals in facts.get("rival_params", {}).items():
                if name not in self.names:
                    continue
                for q in rivals:
                    package = _branch(record_module, q)
                    if package is not None:
                        votes.setdefault((name, package), [0, 0, set()])[2].add(q)
        for (name, package), v in votes.items():
            for module, facts in per_file:
                if not _under(module, package):
                    continue
                v[0] += facts.get("record_params", {}).get(name, 0)
                v[1] += sum(facts.get("rival_params", {}).get(name, {}).values())
        self.yielded: dict[str, list[tuple[str, list[str]]]] = {}
        for (name, package), (rec, riv, classes) in sorted(votes.items()):
            if riv >= 2 and riv > rec:
                self.yielded.setdefault(name, []).append((package, sorted(classes)))

    def holds(self, name: str, module: str) -> bool:
        """Whether `name`, unannotated, is a record holder in `module`."""
        if name not in self.names:
            return False
        return not any(_under(module, p) for p, _ in self.yielded.get(name, ()))

    def describe(self) -> list[str]:
        return [
            f"{name} in {package} (its own {', '.join(classes)})"
            for name, places in sorted(self.yielded.items())
            for package, classes in places
        ]


class RecordMutation(Rule):
    id = ID
    name = "record-mutation"
    summary = "A write to a field of a record instance outside the resolution pipeline"
    visitor = RecordWriteVisitor

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return {*vocab.seed_accessors, vocab.record_name}

    def more_tokens(self, program: Program) -> set[str]:
        return record_names(program)

    def derive(self, program: Program) -> dict[str, Any]:
        convention = RecordConvention(program)
        return {
            "record parameter names": sorted(convention.names),
            "record parameter names meaning a rival record class": convention.describe(),
        }

    def check(self, program: Program) -> Iterable[RawFinding]:
        convention = RecordConvention(program)
        for path, module, writes in program.facts(ID):
            for w in writes:
                b = w["base"]
                if b["k"] in ("name", "attr") and not convention.holds(b["n"], module):
                    continue
                field = f"`{w['field']}`" if w["field"] else "a field named at run time"
                yield RawFinding(
                    ID,
                    path,
                    w["scope"],
                    w["snippet"],
                    w["span"],
                    f"write to record field {field} ({w['form']}): the record is read-only "
                    "after resolution; change config with get_context().override(source, ...) "
                    "or pass the value as a constructor argument",
                )


RULE = RecordMutation()
