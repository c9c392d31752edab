"""Who owns each runtime-flags group: every write through the flags classified
(a lazy default, a clear, a scoped write, or plain), and the owner each group's
plain writes give it (the init assigning the group, the one function writing
every leaf, or else the one module that does). `FlagsVisitor` gathers the
writes (kept under CTX703's id); CTX703 reports the writes outside the owner.

A write is an assignment to `<flags>.<group>` or `<flags>.<group>.<leaf>` (a
flags path, program.flags_tier), or a `setattr` on one. Its kind: *lazy* under
`if <same leaf> is None:`; a *clear* under `if <same leaf>:` writing the leaf's
declared default; *scoped* when the same function writes the leaf again in a
`finally:`, or it puts back the value its class saved from that leaf
(`self._prev = <leaf>` in one method, `<leaf> = self._prev` in another).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, string_value
from ctxlint.facts.typed import Span
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.core import Program
from ctxlint.program.flags_tier import FlagsTierVisitor, TierFacts, flags_tier, tier_defaults

KEY = "CTX703"  # the rule whose facts these are


@dataclass(frozen=True, slots=True)
class ClassSite:
    scope: str
    span: Span
    defaults: dict[str, str] = field(default_factory=dict)  # leaf -> its default's source


@dataclass(frozen=True, slots=True)
class FlagWrite:
    """An assignment through the flags: `chain` is the path below the root."""

    fn: str
    chain: list[str]  # [group] or [group, leaf, ...]
    lazy: bool  # under `if <the same path> is None:`
    in_finally: bool
    restore: bool  # puts back the value its class saved from that leaf
    snippet: str
    span: Span
    # under `if <the same leaf>:`, the value written (a clear when it is the default)
    cleared_to: str | None = None


@dataclass(frozen=True, slots=True)
class FlagsFacts(TierFacts):
    sites: dict[str, ClassSite]  # tier class -> where it is
    writes: list[FlagWrite]


class FlagsVisitor(FlagsTierVisitor):
    """The flags tier's declarations (program.flags_tier), where each class is, and
    every write through the flags."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.sites: dict[str, ClassSite] = {}
        self.writes: list[FlagWrite] = []  # restore told in finish()
        self.restores: list[tuple[str | None, str] | None] = []  # (class, attr) per write
        self.finally_depth = 0
        self.saved: set[tuple[str, str, tuple[str, ...]]] = set()  # (class, attr, leaf)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        super().visit_ClassDef(node)
        qual = f"{self.ctx.module}.{self.ctx.qualname}"
        if qual in self.classes:
            self.sites[qual] = ClassSite(
                self.ctx.qualname,
                self.ctx.anchor(node.name),  # type: ignore[arg-type]
                tier_defaults(self.ctx, node),
            )

    def assigned(
        self, target: cst.Attribute, node: cst.CSTNode, value: cst.BaseExpression | None
    ) -> None:
        chain = self.below_flags(target)
        if chain:
            self._record(chain, node, value)
        elif value is not None:
            # `self._prev = <flags leaf>`: a saved value some method may put back
            attr = self._self_attr(target)
            read = self.below_flags(value)
            cls = self.ctx.enclosing_class()
            if attr and read and cls:
                self.saved.add((cls, attr, tuple(read)))

    def _self_attr(self, expr: cst.BaseExpression) -> str | None:
        return self.ctx.parts[BINDINGS].self_attr(expr)

    def _record(
        self, chain: list[str], node: cst.CSTNode, value: cst.BaseExpression | None = None
    ) -> None:
        ctx, fn, lazy, in_finally = (
            self.ctx,
            self.writer(),
            self.lazy(chain),
            self.finally_depth > 0,
        )
        restores = self._self_attr(value) if value is not None else None
        cleared = (
            ctx.module_node.code_for_node(value)
            if value is not None and self.under_truthy(chain)
            else None
        )
        w = FlagWrite(
            fn, chain, lazy, in_finally, False, ctx.snippet(node), ctx.anchor(node), cleared
        )  # type: ignore[arg-type]
        self.writes.append(w)
        # `<leaf> = self._prev`: the class's saved value, checked in finish()
        self.restores.append((ctx.enclosing_class(), restores) if restores else None)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "setattr" and len(node.args) == 3:
            chain = self.below_flags(node.args[0].value)
            leaf = string_value(node.args[1].value)
            if chain is not None and leaf is not None:
                self._record([*chain, leaf], node)

    def visit_Finally(self, node: cst.Finally) -> None:
        self.finally_depth += 1

    def leave_Finally(self, node: cst.Finally) -> None:
        self.finally_depth -= 1

    def finish(self) -> FlagsFacts | None:
        if not (self.classes or self.accessor or self.writes):
            return None
        writes = [  # a restore: the leaf's own value, saved by its class
            replace(w, restore=(*r, tuple(w.chain)) in self.saved) if r else w
            for w, r in zip(self.writes, self.restores, strict=True)
        ]
        return FlagsFacts(self.classes, self.accessor, self.sites, writes)


def wanted_modules(program: Program) -> set[str]:
    """The modules the flags tier still wants parsed (not memoised: the facts grow
    each round)."""
    files = program.typed_facts(KEY, FlagsFacts)
    return flags_tier(files, program.vocab.runtime_module).wanted_modules()


class FlagsOwners:
    """The groups, every write classified, and each group's owners."""

    def __init__(self, program: Program) -> None:
        self.classes: dict[str, tuple[str, ClassSite]] = {}  # tier class -> (path, where)
        self.writes: list[tuple[str, str, FlagWrite]] = []  # (path, module, write)
        files = list(program.typed_facts(KEY, FlagsFacts))
        self.tier = flags_tier(files, program.vocab.runtime_module)
        self.groups = self.tier.groups  # group -> its class
        for path, module, facts in files:
            self.classes.update((qual, (path, facts.sites[qual])) for qual in facts.classes)
            self.writes += [(path, module, w) for w in facts.writes]
        # a leaf also written in a `finally:` of the same function is a scoped write
        restored = {(module, w.fn, tuple(w.chain)) for _, module, w in self.writes if w.in_finally}
        self.kind: list[str] = []
        for _, module, w in self.writes:
            if w.lazy:
                self.kind.append("lazy default")
            elif self._clear(w):
                self.kind.append("clear")
            elif w.restore or (module, w.fn, tuple(w.chain)) in restored:
                self.kind.append("scoped")
            else:
                self.kind.append("plain")
        self.owners: dict[str, list[str]] = {}
        self.owning_module: dict[str, str] = {}  # group -> the module owning it, no init does
        self.contenders: dict[str, list[str]] = {}
        self.materialised: dict[str, list[str]] = {}
        for group in self.groups:
            declared = set(self.tier.leaves(group))
            whole: set[str] = set()
            per_fn: dict[str, set[str]] = {}
            per_module: dict[str, set[str]] = {}
            for (_, module, w), kind in zip(self.writes, self.kind, strict=True):
                if w.chain[0] != group or kind != "plain":
                    continue
                fn = f"{module}.{w.fn}"
                if len(w.chain) == 1:
                    whole.add(fn)
                elif w.chain[1] in declared:  # an undeclared name raises: no leaf
                    per_fn.setdefault(fn, set()).add(w.chain[1])
                    per_module.setdefault(module, set()).add(w.chain[1])
            leaves = set().union(*per_fn.values()) if per_fn else set()
            self.materialised[group] = sorted(leaves)
            if whole:
                self.owners[group] = sorted(whole)
            elif leaves:
                covering = sorted(f for f, ls in per_fn.items() if ls >= leaves)
                modules = [m for m, ls in per_module.items() if ls >= leaves]
                if len(covering) == 1:
                    self.owners[group] = covering
                elif len(modules) == 1:
                    # no one init, but one module writes every leaf: the subsystem
                    # owns the group there, its init and its lifecycle updates
                    self.owning_module[group] = modules[0]
                else:  # none, or several each writing all: no one owner either way
                    self.contenders[group] = covering

    def _clear(self, w: FlagWrite) -> bool:
        """`if <leaf>: <leaf> = <its declared default>`: the write only takes back
        what was set, to the pre-init value the design gives every default."""
        chain = w.chain
        if w.cleared_to is None or len(chain) != 2 or chain[0] not in self.groups:
            return False
        defaults = self.classes[self.groups[chain[0]]][1].defaults
        return defaults.get(chain[1]) == w.cleared_to

    def kinded(self) -> dict[str, list[str]]:
        """Each kind of write that is not plain -> its writes of a group, as text."""
        out: dict[str, list[str]] = {}
        for (path, module, w), kind in zip(self.writes, self.kind, strict=True):
            if w.chain[0] in self.groups and kind != "plain":
                out.setdefault(kind, []).append(
                    f"{'.'.join(w.chain)} in {module}.{w.fn} ({path}:{w.span[0]})"
                )
        return {f"{k} writes": sorted(v) for k, v in sorted(out.items())}

    def unowned(self) -> Iterator[tuple[str, str, ClassSite, dict[str, set[str]]]]:
        """(group, path, its class's site, function -> the leaves it writes plainly)
        for each group written plainly that no init and no module owns."""
        for group in sorted(self.groups):
            if self.owners.get(group) or group in self.owning_module:
                continue
            if not self.materialised[group]:
                continue
            path, site = self.classes[self.groups[group]]
            pieces: dict[str, set[str]] = {}
            for (_, m, w), k in zip(self.writes, self.kind, strict=True):
                if k == "plain" and w.chain[0] == group and len(w.chain) > 1:
                    pieces.setdefault(f"{m}.{w.fn}", set()).add(w.chain[1])
            yield group, path, site, pieces

    def plain_writes(self) -> Iterator[tuple[str, str, FlagWrite]]:
        """(path, module, write): each plain write of a group or of one of its leaves."""
        for (path, module, w), kind in zip(self.writes, self.kind, strict=True):
            if w.chain[0] in self.groups and kind == "plain" and len(w.chain) <= 2:
                yield path, module, w
