"""Parameter reads the design keeps although the field is one resolution fills
in or an override moves: two cuts program.whole_object makes (CTX102).

- **Read before the same function resolves the record.** The read precedes, in
  its own function, a call resolving that same parameter: a method of the
  record that is a pipeline entry (SGLang 0.5.23's
  `server_args.resolve_once()`) or the declaration function with the record
  first (`declare_resolution(server_args, ...)`). Such a function is
  launcher-stage resolution (the design: "resolution, not mutation"): no bag
  exists before it, and where no declaration in the function names the field
  before the read, a view answers the raw field too. A declaration of the field
  above the read in the same function keeps the read reported.
- **Overridden only in other processes.** Every function overriding the field
  runs under a process role (program.process_roles) that the reading function
  never runs under, and the reading function runs under one at least: "bags do
  not cross a process boundary", so no override reaches the process that
  reads, and the record answers as its bag will. A method no role's calls
  reach runs where its object is built: under the roles that reach its
  class's constructor (0.5.17's `ModelRunner.forward`, run by dispatch, and
  the `_finalize_scale_up` it reaches run in the scheduler that builds the
  runner). A field resolution fills in stays reported
  (whole_object.Exposure.moved), and so does a manager-owned field (the
  manager moves it in its own process without an override), or a read whose
  function, or one of whose overriders, no role reaches (not claimed).
"""

from __future__ import annotations

from ctxlint.program.calls import short
from ctxlint.program.core import Program
from ctxlint.program.declared_names import declarations
from ctxlint.program.handed_reads import ExposedRead, Handed, HandedReads
from ctxlint.program.manager_owned import manager_model
from ctxlint.program.process_roles import role_reach
from ctxlint.program.resolution import resolution

KEY = "exposure-cuts"


class Cuts:
    def __init__(self, program: Program) -> None:
        res = resolution(program)
        self.graph = res.graph
        self.declaration = res.declaration
        # the record's methods that run resolution (not `__post_init__`: building
        # the record is no call on a parameter)
        self.resolving = {
            q.rpartition(".")[2] for q in res.entries if not q.endswith(".__post_init__")
        }
        # (path, function) -> (field, line) of each declaration keyword there
        self.declared_at: dict[tuple[str, str], list[tuple[str, int]]] = {}
        for path, c in declarations(program):
            for k in c.keywords:
                self.declared_at.setdefault((path, c.scope), []).append((k.name, k.span[0]))
        self.reach = role_reach(program)
        model = manager_model(program)
        self.overriders = model.overriders()
        self.owned = set(model.owned)
        self._roles: dict[str, frozenset[str]] = {}  # asked per read of each overrider

    def resolved_later(self, handed: HandedReads, path: str, r: ExposedRead, held: Handed) -> str:
        """The call below the read that resolves the parameter it reads off, as
        written (`server_args.resolve_once()`); "" where there is none, or where
        a declaration of the field comes first in the function."""
        if held.kind != "param":
            return ""
        key = (path, r.site.scope)
        if any(
            f == r.field and line <= r.site.span[0] for f, line in self.declared_at.get(key, ())
        ):
            return ""
        for c in handed.on_params.get(key, ()):
            if c.param != held.name or c.span[0] <= r.site.span[2]:
                continue
            if c.method and c.name in self.resolving:
                return f"{c.param}.{c.name}()"
            decl = self.declaration
            if not c.method and decl and decl in self.graph.resolve_global(c.name):
                return f"{short(decl, self.graph.funcs[decl].module)}({c.param}, ...)"
        return ""

    def roles(self, q: str) -> frozenset[str]:
        """The roles `q` runs under: those whose reach has it, else, for a
        method, those reaching its class's constructor (where the object lives)."""
        if q not in self._roles:
            found = frozenset(role for role, fns in self.reach.items() if q in fns)
            fn = self.graph.funcs.get(q)
            if not found and fn is not None and fn.cls is not None:
                inits = self.graph.method(fn.cls, "__init__")
                found = frozenset(r for r, fns in self.reach.items() if fns.intersection(inits))
            self._roles[q] = found
        return self._roles[q]

    def overridden_elsewhere(self, q: str, field: str) -> str:
        """The roles the overrides of `field` run under, where none is a role the
        function `q` runs under (", "-joined); "" where that cannot be said."""
        fns = self.overriders.get(field)
        mine = self.roles(q)
        if not fns or not mine or field in self.owned:
            return ""
        theirs: set[str] = set()
        for o in fns:
            roles = self.roles(o)
            if not roles or roles & mine:
                return ""
            theirs |= roles
        return ", ".join(sorted(theirs))


def exposure_cuts(program: Program) -> Cuts:
    """The run's answer, built once."""
    return program.memo(KEY, lambda: Cuts(program))
