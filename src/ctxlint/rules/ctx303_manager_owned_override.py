"""CTX303 manager-owned-override: a config override of a field the manager answers
for itself, made in the manager's process, records a process-wide change that no
other process sees.

Everything is derived from the code:

- the **manager-owned fields**: a module constant of string literals that a
  method answers off its own instance, `for name in C: ... getattr(self, name)`
  or `if name in C: return getattr(self, name)` (SGLang's
  `_MANAGER_OWNED_FIELDS` in `TokenizerManager.config_value` and
  `resolved_config_dict`), restricted to record fields; the class doing it is
  the **manager**;
- the **overrides**: `get_context().override(source, **fields)` (or a local
  bound to `get_context()`), and a **wrapper**: a function taking `**fields`
  that hands them to such a call (`record_config_updates`), called on `self`
  or by name;
- the **manager's process**: a method of the manager or of a class in its MRO
  (its mixins), or a function reached from the process entries of a role that
  reaches a manager method and from no other role (program.process_roles).

An override naming a manager-owned field in the manager's process is reported.
Elsewhere (the scheduler's `ModelRunner.update_model_fields`, which rewrites its
own process's copy) it is not.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.core import Program
from ctxlint.program.manager_owned import Model, OwnedVisitor, manager_model
from ctxlint.program.process_roles import class_process
from ctxlint.program.rule import RawFinding, Rule, field_data, finding_at

ID = "CTX303"
NOTE = (
    "no manager-owned fields derived (no constant of field names that a method answers "
    "with getattr(self, name)): nothing is checked"
)


class ManagerOwnedOverride(Rule):
    id = ID
    name = "manager-owned-override"
    summary = (
        "A config override of a field the manager answers off itself, made in the "
        "manager's process: it records a change other processes never see"
    )
    visitor = OwnedVisitor
    needs = (BAGS,)
    # the call graph, for the process; the names bound to get_context()
    requires = ("calls", "classes", "records", BINDINGS)

    def tokens(self, vocab: Vocabulary) -> set[str]:
        # `.override(`: an override call or a wrapper's body (a docstring naming
        # `override(**kw)` is no reason to parse a file); wrappers' callers follow
        return {".override(", "getattr(self,"}

    def more_tokens(self, program: Program) -> set[str]:
        m = Model(program)  # not memoised: the facts grow each round
        # a wrapper's callers, and the module of a constant an answer names
        return {w.rpartition(".")[2] for w in m.wrappers} | {f"module:{x}" for x in m.wanted}

    def derive(self, program: Program) -> dict[str, Any]:
        m = manager_model(program)
        roles = class_process(program, m.managers).roles if m.owned else frozenset()
        # a runtime with no manager: said here, not on every run
        note = {} if m.owned else {"note": NOTE}
        return {
            "manager-owned fields": {k: sorted(set(v)) for k, v in sorted(m.owned.items())},
            "override wrappers": sorted(m.wrappers),
            "manager roles": sorted(roles),
            **note,
        }

    def check(self, program: Program) -> Iterable[RawFinding]:
        m = manager_model(program)
        if not m.owned:
            return
        process = class_process(program, m.managers)
        for path, c, owned, via in m.overrides(program):
            in_manager = c.cls in process.classes
            if not in_manager and c.fn not in process.only:
                continue
            where = (
                f"a method of {(c.cls or '').rpartition('.')[2]}"
                if in_manager
                else f"reached only under role {', '.join(sorted(process.roles))}"
            )
            owner = m.owned[owned[0]][0]
            yield finding_at(
                ID,
                path,
                c.site,
                f"`{via}({', '.join(f'{x}=...' for x in owned)})` in the manager's "
                f"process records a process-wide change no other process sees: set "
                f"{', '.join(owned)} on the manager",
                f"{', '.join(owned)} is answered off the manager ({owner}); let each process "
                f"that reloads record its own\nwhere: {where}\nmanager-owned fields: "
                + ", ".join(
                    f"{k}: {', '.join(sorted(set(v)))}" for k, v in sorted(m.owned.items())
                ),
                **field_data(program.vocab, owned[0]),
            )


RULE = ManagerOwnedOverride()
