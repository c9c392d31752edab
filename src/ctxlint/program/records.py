"""Which expressions hold the seed record, or any record instance.

Shared by every rule that reasons about records (seed reads, record writes,
copies, exposure): the tracker runs early in the batched traversal and asks
the binding model (program.bindings) what each name holds, in statement
order, so `sa = get_server_args(); sa.f` is known to read the seed at the
point `sa.f` is visited. What is only known at the end of a
class (an alias parked on `self` in a later method) is left as a pending
reference that rules resolve in `finish()`.
"""

from __future__ import annotations

from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.annotations import unwrap
from ctxlint.facts.context import FileContext, dotted
from ctxlint.facts.visitor import FileVisitor
from ctxlint.program.binding_values import VALUE_KINDS, Bound
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.bindings import Bindings
from ctxlint.program.holders import COPY_FUNCTIONS, Holder, HolderKind


class RecordTracker(FileVisitor):
    """Built-in facility: seed aliases, record-annotated names, parked attributes."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        vocab = ctx.vocab
        assert vocab is not None
        self.seed_names = {vocab.qualified(a) for a in vocab.seed_accessors}
        self.record_class = vocab.record_class
        self.is_runtime = ctx.module == vocab.runtime_module
        self.bindings: Bindings = ctx.parts[BINDINGS]
        bindings = self.bindings
        # names holding the seed, and the `self` attributes a method parked it on
        self.seed = bindings.track(self._holds_seed, self._parks_seed)
        # names holding a copy of something, or a new record (the expression)
        self.copies = bindings.track(self._holds_copy)
        self.annotated: dict[str, set[str]] = {}  # scope -> names annotated as the record
        self.annotated_attrs: dict[str, set[str]] = {}  # class -> attrs annotated as the record
        self.record_params: dict[
            str, int
        ] = {}  # parameter name -> functions annotating it as the record
        self.other_params: dict[str, int] = {}  # ... annotated with another concrete type
        # parameter name -> {class: n} for a class named like the record that is not
        # it (a rival record: SGLang's multimodal_gen has its own ServerArgs)
        self.rival_params: dict[str, dict[str, int]] = {}
        self.other_typed: dict[str, set[str]] = {}  # scope -> parameters of another type

    # -- queries ------------------------------------------------------------
    def is_record_annotation(self, ann: cst.BaseExpression) -> bool:
        """The annotation names the record (facts.annotations.unwrap:
        Optional/Union/`X | None`/Annotated/Final/ClassVar/strings)."""
        return any(self.ctx.resolve(e) == self.record_class for e in unwrap(ann).instances)

    def rival_classes(self, ann: cst.BaseExpression) -> list[str]:
        """Classes an annotation names (as is_record_annotation reads it) that
        carry the record's simple name but resolve elsewhere."""
        name = self.record_class.rpartition(".")[2]
        return [
            q
            for e in unwrap(ann).instances
            if (q := self.ctx.resolve(e))
            and q != self.record_class
            and q.rpartition(".")[2] == name
        ]

    def is_seed_call(self, expr: cst.BaseExpression) -> bool:
        return (
            isinstance(expr, cst.Call)
            and not expr.args
            and self.ctx.resolve(expr.func) in self.seed_names
        )

    def is_seed_alias(self, name: str) -> bool:
        return bool(self.seed.lookup(name))

    def is_seed(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.NamedExpr):  # `(sa := get_server_args()).port`
            return self.is_seed(expr.value)
        if self.is_seed_call(expr):
            return True
        return isinstance(expr, cst.Name) and self.is_seed_alias(expr.value)

    def is_construction(self, expr: cst.BaseExpression) -> bool:
        """`ServerArgs(...)`: a call of the record class itself."""
        return isinstance(expr, cst.Call) and self.ctx.resolve(expr.func) == self.record_class

    def copy_source(self, value: cst.BaseExpression | None) -> cst.BaseExpression | None:
        """`x` for `copy.deepcopy(x)`, `dataclasses.replace(x, ...)` and the other
        copy functions under any import spelling; the call itself for a new record
        (`ServerArgs(...)`, whatever the name it is bound to); None otherwise."""
        if not isinstance(value, cst.Call):
            return None
        if self.is_construction(value):
            return value
        if self.ctx.resolve(value.func) not in COPY_FUNCTIONS:
            return None
        first = value.args[0] if value.args else None
        if first is None or first.keyword is not None or first.star:
            return None
        return first.value

    def copied_from(self, name: str) -> cst.BaseExpression | None:
        """What the name `name` was last bound to a copy of."""
        return self.copies.lookup(name)

    def self_attr(self, expr: cst.BaseExpression) -> str | None:
        """`X` for `self.X` inside a method (the binding model's reading)."""
        return self.bindings.self_attr(expr)

    def holder(self, expr: cst.BaseExpression, depth: int = 0) -> Holder | None:
        """What kind of record holder `expr` is, or None if it cannot be one: the
        one classifier every record rule asks (seed reads, writes, copies and
        exposure each decide which kinds they report). A name bound to a copy
        of something holds what that holds; a name annotated with another
        concrete type is not a holder, whatever it is called."""
        if self.is_seed(expr):
            return Holder(HolderKind.SEED)
        if self.is_construction(expr):
            return Holder(HolderKind.BUILT)
        if isinstance(expr, cst.Name):
            name = expr.value
            if self.is_annotated_name(name):
                return Holder(HolderKind.ANNOTATED, name)
            source = self.copied_from(name)
            if source is not None and depth < 8:
                return self.holder(source, depth + 1)
            if name == self.ctx.scope.self_name or name in ("self", "cls"):
                return Holder(HolderKind.RECEIVER, name)
            if self.is_other_typed(name):
                return None
            return Holder(HolderKind.NAME, name)
        attr = self.self_attr(expr)
        if attr is not None:
            return Holder(HolderKind.SELF_ATTR, attr, self.ctx.enclosing_class())
        if isinstance(expr, cst.Attribute):
            return Holder(HolderKind.ATTR, expr.attr.value, via=dotted(expr.value) or "(...)")
        return None

    def is_annotated_name(self, name: str) -> bool:
        for s in reversed(self.ctx.scopes):
            if name in self.annotated.get(s.qualname, ()):
                return True
            if s.kind == "class":
                return False
        return False

    def is_other_typed(self, name: str) -> bool:
        """`name` is a parameter annotated with a concrete type that is not the record
        (an explicit annotation beats the codebase's naming convention)."""
        for s in reversed(self.ctx.scopes):
            if name in self.seed.names.get(s.qualname, {}) or name in self.annotated.get(
                s.qualname, ()
            ):
                return name in self.other_typed.get(s.qualname, ())
            if s.kind == "class":
                return False
        return False

    # -- what bindings hold (asked by the binding model) -----------------------
    def _holds_seed(self, bound: Bound, before: Any) -> bool:
        return bound.kind in VALUE_KINDS and bound.value is not None and self.is_seed(bound.value)

    def _parks_seed(self, bound: Bound, before: Any) -> bool:
        return bool(before) or (bound.kind in VALUE_KINDS and self._holds_seed(bound, None))

    def _holds_copy(self, bound: Bound, before: Any) -> cst.BaseExpression | None:
        return self.copy_source(bound.value) if bound.kind in VALUE_KINDS else None

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if not self.is_record_annotation(node.annotation.annotation):
            return
        scope = self.ctx.scope
        if isinstance(node.target, cst.Name):
            if scope.kind == "class":
                self.annotated_attrs.setdefault(scope.qualname, set()).add(node.target.value)
            else:
                self.annotated.setdefault(scope.qualname, set()).add(node.target.value)
        attr = self.self_attr(node.target)
        cls = self.ctx.enclosing_class()
        if attr is not None and cls:
            self.annotated_attrs.setdefault(cls, set()).add(attr)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        scope = self.ctx.qualname
        params = node.params
        for p in (
            *params.posonly_params,
            *params.params,
            *params.kwonly_params,
            *(x for x in (params.star_arg,) if isinstance(x, cst.Param)),
        ):
            if p.annotation is None:
                continue
            if self.is_record_annotation(p.annotation.annotation):
                self.annotated.setdefault(scope, set()).add(p.name.value)
                self.record_params[p.name.value] = self.record_params.get(p.name.value, 0) + 1
            elif (dotted(p.annotation.annotation) or "").rpartition(".")[2] not in (
                "Any",
                "object",
            ):
                self.other_params[p.name.value] = self.other_params.get(p.name.value, 0) + 1
                self.other_typed.setdefault(scope, set()).add(p.name.value)
                for q in self.rival_classes(p.annotation.annotation):
                    votes = self.rival_params.setdefault(p.name.value, {})
                    votes[q] = votes.get(q, 0) + 1

    # -- pending references -------------------------------------------------
    def parked(self, cls: str | None, attr: str) -> bool:
        return bool(self.seed.attr(cls, attr))

    def annotated_attr(self, cls: str | None, attr: str) -> bool:
        return cls is not None and attr in self.annotated_attrs.get(cls, ())

    def settle(self, pending: dict[str, Any]) -> dict[str, Any]:
        """What a holder fact left pending on `self.X` (SELF_ATTR) turned out to
        be, once the class is complete: the seed, an annotated record, or just
        `<x>.X`; any other holder fact as it is."""
        if pending["k"] != HolderKind.SELF_ATTR.value:
            return pending
        if self.parked(pending["cls"], pending["n"]):
            return Holder(HolderKind.SEED).fact()
        if self.annotated_attr(pending["cls"], pending["n"]):
            return Holder(HolderKind.ANNOTATED).fact()
        return Holder(HolderKind.ATTR, pending["n"]).fact()

    def finish(self) -> Any:
        if not self.record_params and not self.rival_params:
            return None
        out: dict[str, Any] = {
            "record_params": dict(sorted(self.record_params.items())),
            "other_params": {
                k: v for k, v in sorted(self.other_params.items()) if k in self.record_params
            },
        }
        if self.rival_params:
            out["rival_params"] = {
                k: dict(sorted(v.items())) for k, v in sorted(self.rival_params.items())
            }
        return out
