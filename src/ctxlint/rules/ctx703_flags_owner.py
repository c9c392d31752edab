"""CTX703 flags-owner: each runtime-flags group is materialised by one owning init.

The groups are derived from the runtime's flags tier: the flags accessor of the
runtime module (`get_flags`) returns a class whose
annotated fields are the groups; each group's class declares its leaves.

A write is an assignment to `<flags>.<group>` or `<flags>.<group>.<leaf>`, where
`<flags>` is a call of the accessor, `get_context().flags`, the `flags` slot
inside the runtime module, or a local bound to one of those (`moe =
get_flags().moe`). Three shapes are not materialisation and are left alone:

- a *lazy default* in a shim: the write sits under `if <same leaf> is None:`;
- a *clear*: the write sits under `if <same leaf>:` and writes the leaf's
  declared default (it takes back what was set, to the pre-init value);
- a *scoped* write: the same function writes the leaf again in a `finally:`
  (the speculative contexts' swap-and-restore, the override's own shape), or
  the write puts back the value its class saved from that leaf
  (`self._prev = <leaf>` in one method, `<leaf> = self._prev` in another: an
  install/restore pair).

The owner of a group is the function that assigns the group object itself,
or else the one function whose plain writes cover every leaf the code writes
plainly anywhere (several such functions own it no more than none does);
failing that, the one module whose functions together write all of them (the
subsystem's init and its lifecycle updates). A plain leaf write outside the
owner is a finding; a group with neither is one finding at the group's class. Owners
are told per function, without the call graph: an init that materialises a
group through helpers it calls has no owner here (the program model's call
graph would credit the caller).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, string_value
from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.binding_values import VALUE_KINDS, Bound
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.core import Program
from ctxlint.program.flags_tier import (
    ACCESSOR,
    Env,
    FlagsTierVisitor,
    IsNoneBranches,
    flags_groups,
    tier_defaults,
    tier_groups,
    tier_modules,
)
from ctxlint.program.rule import RawFinding, Rule

ID = "CTX703"
_MODULE = "<module>"


class FlagsVisitor(FlagsTierVisitor, IsNoneBranches):
    """The flags tier's declarations (program.flags_tier), where each class is, and
    every write through the flags."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.sites: dict[str, dict[str, Any]] = {}  # tier class -> its scope and span
        self.writes: list[dict[str, Any]] = []
        # name -> the flags path it holds, asked of the binding model
        self.env = ctx.parts[BINDINGS].track(self._holds_path)
        self.finally_depth = 0
        self.saved: set[tuple[str, str, tuple[str, ...]]] = set()  # (class, attr, leaf)

    # -- declarations -------------------------------------------------------
    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        super().visit_ClassDef(node)
        qual = f"{self.ctx.module}.{self.ctx.qualname}"
        if qual in self.classes:
            self.sites[qual] = {
                "scope": self.ctx.qualname,
                "span": self.ctx.anchor(node.name),
                "defaults": tier_defaults(self.ctx, node),
            }

    # -- flags expressions ----------------------------------------------------
    def bound(self, name: str, env: Env) -> list[str] | None:
        return self.env.here(name)

    def _chain(self, expr: cst.BaseExpression) -> list[str] | None:
        """The path below the flags root that `expr` denotes, or None."""
        found = self.path(expr, {})
        return found[1:] if found and found[0] == "flags" else None

    def tested_path(self, expr: cst.BaseExpression) -> list[str] | None:
        return self._chain(expr)

    def _holds_path(self, bound: Bound, before: Any) -> list[str] | None:
        if bound.kind not in VALUE_KINDS or bound.value is None:
            return None
        return self.path(bound.value, {})

    def _write(
        self, target: cst.BaseExpression, node: cst.CSTNode, value: cst.BaseExpression | None
    ) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            for e in target.elements:
                self._write(e.value, node, None)
            return
        if not isinstance(target, cst.Attribute):
            return
        chain = self._chain(target)
        if chain:
            self._record(chain, node, value)
        elif value is not None:
            # `self._prev = <flags leaf>`: a saved value some method may put back
            attr = self._self_attr(target)
            read = self._chain(value)
            cls = self.ctx.enclosing_class()
            if attr and read and cls:
                self.saved.add((cls, attr, tuple(read)))

    def _self_attr(self, expr: cst.BaseExpression) -> str | None:
        return self.ctx.parts[BINDINGS].self_attr(expr)

    def _record(
        self, chain: list[str], node: cst.CSTNode, value: cst.BaseExpression | None = None
    ) -> None:
        lazy = self.lazy(chain)
        restores = self._self_attr(value) if value is not None else None
        # under `if <the same leaf>:` the value written, for a clear to its default
        cleared = (
            self.ctx.module_node.code_for_node(value)
            if value is not None and self.under_truthy(chain)
            else None
        )
        scope = self.ctx.scope
        self.writes.append(
            {
                "fn": scope.qualname if scope.kind != "module" else _MODULE,
                "chain": chain,
                "lazy": lazy,
                "cleared_to": cleared,
                "finally": self.finally_depth > 0,
                # `<leaf> = self._prev`: the class's saved value, checked in finish()
                "restores": [self.ctx.enclosing_class(), restores] if restores else None,
                "snippet": self.ctx.snippet(node),
                "span": self.ctx.anchor(node),
            }
        )

    # -- statements -------------------------------------------------------------
    def visit_Assign(self, node: cst.Assign) -> None:
        for t in node.targets:
            if not isinstance(t.target, cst.Name):  # a name's binding: the model's
                self._write(t.target, node, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self._write(node.target, node, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._write(node.target, node, None)

    def visit_Call(self, node: cst.Call) -> None:
        if isinstance(node.func, cst.Name) and node.func.value == "setattr" and len(node.args) == 3:
            chain = self._chain(node.args[0].value)
            leaf = string_value(node.args[1].value)
            if chain is not None and leaf is not None:
                self._record([*chain, leaf], node)

    def visit_Finally(self, node: cst.Finally) -> None:
        self.finally_depth += 1

    def leave_Finally(self, node: cst.Finally) -> None:
        self.finally_depth -= 1

    def finish(self) -> Any:
        if not (self.classes or self.accessor or self.writes):
            return None
        for w in self.writes:  # a restore: the leaf's own value, saved by its class
            r = w.pop("restores")
            w["restore"] = bool(r) and (r[0], r[1], tuple(w["chain"])) in self.saved
        return {**self.tier_facts(), "sites": self.sites, "writes": self.writes}


# -- the program -------------------------------------------------------------------
class Model:
    """The groups, every write classified, and each group's owners."""

    def __init__(self, program: Program) -> None:
        self.classes: dict[str, tuple[str, dict[str, Any]]] = {}  # (path, scope/span/fields)
        self.fields: dict[str, dict[str, str | None]] = {}  # tier class -> its fields
        self.writes: list[tuple[str, str, dict[str, Any]]] = []  # (path, module, write)
        files = list(program.facts(ID))
        # the runtime module defines the flags accessor at all; the class it returns
        self.tier, self.root, _ = flags_groups(files, program.vocab.runtime_module)
        for path, module, facts in files:
            for qual, fields in facts["classes"].items():
                self.fields[qual] = fields
                self.classes[qual] = (path, {**facts["sites"][qual], "fields": fields})
            self.writes += [(path, module, w) for w in facts["writes"]]
        self.groups = tier_groups(self.fields, self.root)  # group -> its class
        # a leaf also written in a `finally:` of the same function is a scoped write
        restored = {
            (module, w["fn"], tuple(w["chain"])) for _, module, w in self.writes if w["finally"]
        }
        self.kind: list[str] = []
        for _, module, w in self.writes:
            if w["lazy"]:
                self.kind.append("lazy default")
            elif self._clear(w):
                self.kind.append("clear")
            elif w["restore"] or (module, w["fn"], tuple(w["chain"])) in restored:
                self.kind.append("scoped")
            else:
                self.kind.append("plain")
        self.owners: dict[str, list[str]] = {}
        self.owning_module: dict[str, str] = {}  # group -> the module owning it, no init does
        self.contenders: dict[str, list[str]] = {}
        self.materialised: dict[str, list[str]] = {}
        for group in self.groups:
            declared = set(self.leaves(group))
            whole: set[str] = set()
            per_fn: dict[str, set[str]] = {}
            per_module: dict[str, set[str]] = {}
            for (_, module, w), kind in zip(self.writes, self.kind, strict=True):
                if w["chain"][0] != group or kind != "plain":
                    continue
                fn = f"{module}.{w['fn']}"
                if len(w["chain"]) == 1:
                    whole.add(fn)
                elif w["chain"][1] in declared:  # an undeclared name raises: no leaf
                    per_fn.setdefault(fn, set()).add(w["chain"][1])
                    per_module.setdefault(module, set()).add(w["chain"][1])
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

    def _clear(self, w: dict[str, Any]) -> bool:
        """`if <leaf>: <leaf> = <its declared default>`: the write only takes back
        what was set, to the pre-init value the design gives every default."""
        chain = w["chain"]
        if w["cleared_to"] is None or len(chain) != 2 or chain[0] not in self.groups:
            return False
        defaults = self.classes[self.groups[chain[0]]][1].get("defaults", {})
        return defaults.get(chain[1]) == w["cleared_to"]

    def leaves(self, group: str) -> list[str]:
        return list(self.classes[self.groups[group]][1]["fields"])


def _short(qual: str) -> str:
    return qual.rpartition(".")[2]


class FlagsOwner(Rule):
    id = ID
    name = "flags-owner"
    summary = (
        "Each runtime-flags group is materialised by one owning init; a leaf assigned "
        "anywhere else (outside a lazy default or a restoring scope) is reported"
    )
    visitor = FlagsVisitor
    requires = (BINDINGS,)  # what names hold a flags path
    needs = (BAGS,)  # the flags tier sits beside the bags on the runtime context

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return {ACCESSOR, f"module:{vocab.runtime_module}"}

    def more_tokens(self, program: Program) -> set[str]:
        model = Model(program)  # not memoised: the facts grow each round
        return tier_modules(model.fields, model.root)

    def _model(self, program: Program) -> Model:
        return program.memo(f"{ID}:model", lambda: Model(program))

    def derive(self, program: Program) -> dict[str, Any]:
        model = self._model(program)
        writers: dict[str, list[str]] = {}
        for (path, module, w), kind in zip(model.writes, model.kind, strict=True):
            if w["chain"][0] in model.groups and kind != "plain":
                writers.setdefault(kind, []).append(
                    f"{'.'.join(w['chain'])} in {module}.{w['fn']} ({path}:{w['span'][0]})"
                )
        if not model.tier:  # a codebase without a flags tier: nothing to own
            return {"flags root": f"(no {ACCESSOR}() in {program.vocab.runtime_module})"}
        return {
            "flags root": model.root or "(not found)",
            "groups": {g: model.leaves(g) for g in sorted(model.groups)},
            "owners": {g: model.owners.get(g, []) for g in sorted(model.groups)},
            # only where some group has one: a tree whose inits own every group reads as before
            **(
                {"owning modules": dict(sorted(model.owning_module.items()))}
                if model.owning_module
                else {}
            ),
            "materialised leaves": {g: model.materialised[g] for g in sorted(model.groups)},
            **{f"{k} writes": sorted(v) for k, v in sorted(writers.items())},
        }

    def partial(self, sets: dict[str, Any]) -> str | None:
        if "groups" in sets and not sets["groups"]:
            return (
                f"no flags groups: the runtime module's {ACCESSOR}() is not annotated with "
                f"a class of groups (flags root: {sets.get('flags root')})"
            )
        return None

    def check(self, program: Program) -> Iterable[RawFinding]:
        model = self._model(program)
        for group in sorted(model.groups):
            owners = model.owners.get(group)
            if owners or group in model.owning_module or not model.materialised[group]:
                continue
            path, c = model.classes[model.groups[group]]
            pieces: dict[str, set[str]] = {}
            for (_, m, w), k in zip(model.writes, model.kind, strict=True):
                if k == "plain" and w["chain"][0] == group and len(w["chain"]) > 1:
                    pieces.setdefault(f"{m}.{w['fn']}", set()).add(w["chain"][1])
            rivals = model.contenders.get(group, [])
            why = (
                f"{len(rivals)} functions each write all of its leaves "
                f"({', '.join(_short(r) for r in rivals)}), so none owns it"
                if rivals
                else f"its leaves are written piecemeal by {len(pieces)} functions, none "
                "assigning the group or all of them"
            )
            yield RawFinding(
                ID,
                path,
                c["scope"],
                f"class {c['scope']}",
                c["span"],
                f"flags group `{group}` has no owning init: {why}; materialise every leaf "
                "in the subsystem's one init",
                "writes:\n"
                + "\n".join(
                    f"  - {fn}: {', '.join(sorted(ls))}" for fn, ls in sorted(pieces.items())
                ),
            )
        for (path, module, w), kind in zip(model.writes, model.kind, strict=True):
            group = w["chain"][0]
            if group not in model.groups or kind != "plain" or len(w["chain"]) > 2:
                continue
            fn = f"{module}.{w['fn']}"
            leaf = w["chain"][1] if len(w["chain"]) == 2 else None
            if leaf is not None and leaf not in model.leaves(group):
                yield self._at(
                    path,
                    w,
                    f"`{group}.{leaf}` is not a leaf of the flags group `{group}` "
                    f"({_short(model.groups[group])} declares {', '.join(model.leaves(group))}): "
                    "the write raises at runtime",
                )
                continue
            owners = model.owners.get(group)
            owning = model.owning_module.get(group)
            if owners:
                if fn in owners:
                    continue
                where = f"its owning init `{', '.join(_short(o) for o in owners)}`"
            elif owning is not None:
                if module == owning:
                    continue  # the owning subsystem's own init and lifecycle updates
                where = f"its owning module `{owning}`"
            else:
                continue
            what = f"`{group}.{leaf}`" if leaf else f"the flags group `{group}`"
            yield self._at(
                path,
                w,
                f"{what} is assigned outside {where}: materialise it there, or write "
                f"it in a scope that restores it (`get_flags().{group}.override(...)`)",
            )

    @staticmethod
    def _at(path: str, w: dict[str, Any], message: str) -> RawFinding:
        return RawFinding(ID, path, w["fn"], w["snippet"], w["span"], message)


RULE = FlagsOwner()
