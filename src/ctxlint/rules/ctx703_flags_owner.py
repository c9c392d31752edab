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

from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.core import Program
from ctxlint.program.flags_owners import FlagsOwners, FlagsVisitor, FlagWrite, wanted_modules
from ctxlint.program.flags_tier import ACCESSOR, missing_groups, no_tier
from ctxlint.program.rule import RawFinding, Rule

ID = "CTX703"


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
        return wanted_modules(program)

    def _model(self, program: Program) -> FlagsOwners:
        return program.memo(f"{ID}:model", lambda: FlagsOwners(program))

    def derive(self, program: Program) -> dict[str, Any]:
        model = self._model(program)
        if not model.tier.defined:  # a codebase without a flags tier: nothing to own
            return no_tier(program.vocab.runtime_module)
        return {
            "flags root": model.tier.root or "(not found)",
            "groups": {g: model.tier.leaves(g) for g in sorted(model.groups)},
            "owners": {g: model.owners.get(g, []) for g in sorted(model.groups)},
            # only where some group has one: a tree whose inits own every group reads as before
            **(
                {"owning modules": dict(sorted(model.owning_module.items()))}
                if model.owning_module
                else {}
            ),
            "materialised leaves": {g: model.materialised[g] for g in sorted(model.groups)},
            **model.kinded(),
        }

    def partial(self, sets: dict[str, Any]) -> str | None:
        return missing_groups(sets)

    def check(self, program: Program) -> Iterable[RawFinding]:
        model = self._model(program)
        for group, path, c, pieces in model.unowned():
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
                c.scope,
                f"class {c.scope}",
                c.span,
                f"flags group `{group}` has no owning init: {why}; materialise every leaf "
                "in the subsystem's one init",
                "writes:\n"
                + "\n".join(
                    f"  - {fn}: {', '.join(sorted(ls))}" for fn, ls in sorted(pieces.items())
                ),
            )
        for path, module, w in model.plain_writes():
            group = w.chain[0]
            leaf = w.chain[1] if len(w.chain) == 2 else None
            leaves = model.tier.leaves(group)
            if leaf is not None and leaf not in leaves:
                yield self._at(
                    path,
                    w,
                    f"`{group}.{leaf}` is not a leaf of the flags group `{group}` "
                    f"({_short(model.groups[group])} declares {', '.join(leaves)}): "
                    "the write raises at runtime",
                )
                continue
            owners = model.owners.get(group)
            owning = model.owning_module.get(group)
            if owners:
                if f"{module}.{w.fn}" in owners:
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
    def _at(path: str, w: FlagWrite, message: str) -> RawFinding:
        return RawFinding(ID, path, w.fn, w.snippet, w.span, message)


RULE = FlagsOwner()
