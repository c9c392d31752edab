"""CTX401 accessor-binding: an accessor name means the process-wide bag.

Every bag accessor (and the seed accessor) is a module function of the runtime
module, takes no arguments, and a module binds the name once, to that function.
A same-named import from elsewhere, a def, a class, an assignment, a parameter,
a loop/with/except/comprehension target or a walrus all import fine and fail
only when that path runs; a function-local binding makes every use in the
function the local (and one before it an UnboundLocalError). Member shapes
(`manager.get_disagg()`, `self.get_disagg = get_disagg`) are an AttributeError
at call time, unless the receiver is the runtime module or an instance of a
class that really defines the method (the class index: C3 MRO, re-exports,
inheritance). ruff's F811 on accessor names is merged in, with its origin named.
The runtime module is exempt from the binding checks: it defines the names.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ctxlint.facts import ruff
from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.accessor_bindings import (
    AccessorBindingVisitor,
    MemberUse,
    accessor_names,
    accessor_uses,
    binding_message,
    method_classes,
)
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.classes import KEY as CLASSES
from ctxlint.program.core import Program
from ctxlint.program.method_lookup import MethodLookup
from ctxlint.program.rule import RawFinding, Rule, finding_at

ID = "CTX401"
RUFF_STATUS = "ruff"  # the derived set saying whether and where ruff ran


# -- ruff's F811 ----------------------------------------------------------------
_ruff_command = ruff.command  # module attributes: tests replace them


def run_ruff_f811(root: Any, paths: list[str], names: set[str]) -> tuple[str, list[ruff.F811]]:
    return ruff.f811(root, paths, names, _ruff_command())


def _ruff(program: Program) -> tuple[str, list[ruff.F811]]:
    """ruff's F811 on the files that bind an accessor name twice, once a run:
    only `check` asks, so a run that does not select CTX401 never starts ruff."""
    uses = accessor_uses(program)
    paths, names = uses.ruff_candidates(), uses.names
    return program.memo(f"{ID} ruff", lambda: run_ruff_f811(program.config.root, paths, names))


class AccessorBinding(Rule):
    id = ID
    name = "accessor-binding"
    summary = (
        "An accessor name is bound once per module, to the runtime's no-argument accessor; "
        "no shadowing, no arguments, no member shapes"
    )
    visitor = AccessorBindingVisitor
    needs = (BAGS,)
    requires = (BINDINGS, CLASSES)
    fixes = ("safe", "unsafe")  # ctxlint fix (docs/fix.md)
    fix_order = 0  # its renames plan first: they free names a read's rewrite may need

    def fixers(self) -> tuple[Callable[..., None], ...]:
        from ctxlint.rules.ctx401_accessor_binding.fix import fix_accessor_bindings

        return (fix_accessor_bindings,)

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return accessor_names(vocab)

    def more_tokens(self, program: Program) -> set[str]:
        return method_classes(program)  # the files completing their inheritance chains

    def environment(self) -> str:
        # F811 comes from ruff: an outcome stored without it (or with another
        # ruff) must not be replayed once that changes
        return ruff.identity(_ruff_command())

    def memo_texts(self, program: Program) -> list[str]:
        """ruff's candidates: its reports on them depend on their text alone (engine.check_memo)."""
        return accessor_uses(program).ruff_candidates()

    def texts_key(self, root: Any, paths: list[str]) -> str | None:
        """The digest of those files' texts as ruff reads them now, and of ruff."""
        return ruff.texts_key(root, paths, _ruff_command())

    def partial(self, sets: dict[str, Any]) -> str | None:
        status = str(sets.get(RUFF_STATUS, ""))
        if status.startswith("unavailable"):
            return f"ruff F811 on accessor names was not merged ({status})"
        return None

    def derive(self, program: Program) -> dict[str, Any]:
        uses = accessor_uses(program)
        return {
            "accessor names": sorted(uses.names),
            "classes defining accessor-named methods": uses.defining(),
            "accessor re-exports imported from": uses.reexports(),
        }

    def check(self, program: Program) -> Iterable[RawFinding]:
        uses = accessor_uses(program)
        runtime, ns = uses.runtime, uses.bags
        mine: list[RawFinding] = []
        apart: list[str] = []  # bindings where the accessor is not bound: no collision
        for path, facts in uses.files:
            found = uses.uses(path, facts)
            apart += found.apart
            for b, imported in found.bindings:
                callers = found.keyword_callers.get(id(b), [])
                why, more = binding_message(b, runtime, ns.get(b.name, "bag"), imported, callers)
                mine.append(finding_at(ID, path, b, why, more))
            for c in found.calls:
                why = (
                    f"`{c.name}` called with arguments: the accessor takes none, it answers "
                    f"the process-wide {ns.get(c.name, 'bag')}; if this means another "
                    "callable, give that one another name"
                )
                mine.append(finding_at(ID, path, c, why))
            for m, lookup in found.members:
                mine.append(finding_at(ID, path, m, _member_problem(m, lookup, runtime)))
        yield from mine
        status, hits = _ruff(program)
        program.sets.setdefault(ID, {}).update(
            {
                RUFF_STATUS: status,
                "ruff F811 on accessor names": [str(h) for h in hits],
                "accessor names bound where the module does not bind that accessor "
                "(no collision: not reported)": apart,
            }
        )
        # ruff's F811 on accessor names, at a line no finding above holds
        taken = {(f.path, f.span[0]) for f in mine}
        for hit, site in uses.f811_sites(hits, taken):
            why = f"ruff F811: {hit.message[0].lower()}{hit.message[1:]}: a module binds "
            yield finding_at(ID, hit.path, site, why + f"`{hit.name}` once; drop the redefinition")


def _member_problem(m: MemberUse, found: MethodLookup | None, runtime: str) -> str:
    name, recv = m.name, m.receiver
    tail = f"call `{name}()` imported from `{runtime}`, or rename the member"
    if recv is None or found is None:  # a member binding
        if m.kind == "monkeypatch":
            return (
                f"`{name}` rebound on the runtime module: never patch an accessor; publish a "
                "config (get_context().override_server_args) or override the bag's leaves"
            )
        if m.kind == "class attribute":  # a field: `self.<name>()` calls what it holds
            return (
                f"`{name}` declared as a member of `{m.scope.rpartition('.')[2]}` in a module "
                f"that reads the `{name}()` accessor: `self.{name}()` means another thing; "
                "rename the member and its uses"
            )
        return (
            f"`{name}` bound as a member ({m.kind}): the accessor name means the module-level "
            f"accessor, and `obj.{name}` shapes fail only when that path runs; rename the member"
        )
    via = recv.via
    owner = (found.owner or "").rpartition(".")[2]
    if found.missing == "types":
        return f"`{via}.{name}` member shape: `{owner}` defines no method `{name}`; {tail}"
    if found.missing == "class":
        return f"`{via}.{name}`: class `{found.owner}` defines no method `{name}`; {tail}"
    if found.missing == "instance":
        return (
            f"`{via}.{name}` member shape: `{via}` is a `{owner}`, which "
            f"defines no method `{name}`; {tail}"
        )
    if found.missing == "module":
        return (
            f"`{via}.{name}` reaches a same-named function of `{found.owner}`, not the runtime "
            f"module's accessor; {tail}"
        )
    return (
        f"`{via}.{name}` member shape on a receiver of unknown class: the accessor is a module "
        f"function of `{runtime}`; {tail}"
    )


RULE = AccessorBinding()
