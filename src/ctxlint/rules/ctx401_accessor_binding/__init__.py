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
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.classes import KEY as CLASSES
from ctxlint.program.classes import ClassIndex, class_index
from ctxlint.program.core import Program
from ctxlint.program.method_lookup import defining, find_method
from ctxlint.program.rule import RawFinding, Rule
from ctxlint.rules.ctx401_accessor_binding.visitor import (
    AccessorBindingVisitor,
    AccessorFacts,
    MemberUse,
    NameBinding,
    RuntimeImport,
    accessor_names,
)

ID = "CTX401"
RUFF_STATUS = "ruff"  # the derived set saying whether and where ruff ran


# -- ruff's F811 ----------------------------------------------------------------
_ruff_command = ruff.command  # module attributes: tests replace them


def run_ruff_f811(root: Any, paths: list[str], names: set[str]) -> tuple[str, list[ruff.F811]]:
    return ruff.f811(root, paths, names, _ruff_command())


def _ruff(program: Program) -> tuple[str, list[ruff.F811]]:
    """ruff's F811 on the files that bind an accessor name twice, once a run:
    only `check` asks, so a run that does not select CTX401 never starts ruff."""

    def run() -> tuple[str, list[ruff.F811]]:
        candidates = sorted(p for p, _, f in _facts(program) if f.ruff)
        return run_ruff_f811(program.config.root, candidates, accessor_names(program.vocab))

    return program.memo(f"{ID} ruff", run)


def _facts(program: Program) -> Iterable[tuple[str, str, AccessorFacts]]:
    return program.typed_facts(ID, AccessorFacts)


def _accessor_target(index: ClassIndex, target: str, runtime: str) -> bool:
    """Whether an import target is the runtime's accessor (possibly re-exported)."""
    return index.follow(target, lambda n: n.rpartition(".")[0] == runtime) is not None


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
        # subclasses of a class defining an accessor-named method live in files
        # that name it: parse them so the inheritance chain is complete
        index = class_index(program)
        definers = {q for qs in defining(index, accessor_names(program.vocab)).values() for q in qs}
        definers |= {s for q in list(definers) for s in index.subclasses(q)}
        return {q.rpartition(".")[2] for q in definers}

    def environment(self) -> str:
        # F811 comes from ruff: an outcome stored without it (or with another
        # ruff) must not be replayed once that changes
        return ruff.identity(_ruff_command())

    def partial(self, sets: dict[str, Any]) -> str | None:
        status = str(sets.get(RUFF_STATUS, ""))
        if status.startswith("unavailable"):
            return f"ruff F811 on accessor names was not merged ({status})"
        return None

    def derive(self, program: Program) -> dict[str, Any]:
        names = accessor_names(program.vocab)
        index = class_index(program)
        runtime = program.vocab.runtime_module
        # re-exports actually imported from: `from pkg import get_exec` where pkg
        # imports the runtime's accessor
        reexports = sorted(
            {
                b.target
                for _, _, f in _facts(program)
                for b in f.bindings
                if b.kind == "import"
                and b.target is not None
                and b.target.rpartition(".")[0] != runtime
                and _accessor_target(index, b.target, runtime)
            }
        )
        return {
            "accessor names": sorted(names),
            "classes defining accessor-named methods": defining(index, names),
            "accessor re-exports imported from": reexports,
        }

    def check(self, program: Program) -> Iterable[RawFinding]:
        vocab = program.vocab
        runtime = vocab.runtime_module
        index = class_index(program)
        ns = {**dict(vocab.bag_accessors), **{s: "seed record" for s in vocab.seed_accessors}}
        mine: list[RawFinding] = []
        legit_sites: dict[tuple[str, int], RuntimeImport] = {}
        attrs = _class_attrs(program)
        apart: list[str] = []  # bindings where the accessor is not bound: no collision
        for path, _, facts in _facts(program):
            mine += _file_findings(path, facts, index, runtime, ns, attrs, apart)
            for lg in facts.legit:
                legit_sites.setdefault((path, lg.span[0]), lg)
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
        yield from _ruff_findings(program, hits, mine, legit_sites)


def _file_findings(
    path: str,
    facts: AccessorFacts,
    index: ClassIndex,
    runtime: str,
    ns: dict[str, str],
    attrs: dict[str, set[str]],
    apart: list[str],
) -> list[RawFinding]:
    """One module's bindings, calls with arguments and member uses of an accessor
    name; the bindings that meet no accessor go to `apart`."""
    mine: list[RawFinding] = []
    accessor_imported = {n for n, t in facts.imports.items() if _accessor_target(index, t, runtime)}
    meets = _runtime_bound(facts, index, runtime)
    for b in facts.bindings:
        target = b.target or ""
        to_accessor = b.kind == "import" and _accessor_target(index, target, runtime)
        if to_accessor and b.name == target.rpartition(".")[2]:
            continue  # a re-export of the runtime's own accessor
        if not to_accessor and not _collides(b, meets):
            apart.append(f"{path}:{b.span[0]} {b.snippet}")
            continue
        why = _binding_message(b, runtime, ns, b.name in accessor_imported)
        mine.append(RawFinding(ID, path, b.scope, b.snippet, b.span, why))
    shadowed = {
        (b.name, b.scope)
        for b in facts.bindings
        if b.scope_kind == "function" and b.kind != "late import"
    }
    for c in facts.calls:
        if c.local and any((c.name, s) in shadowed for s in c.chain):
            continue  # a local of that name, reported as its binding
        target = c.target or ""
        if not (target.endswith(f".{c.name}") and _accessor_target(index, target, runtime)):
            continue
        mine.append(
            RawFinding(
                ID,
                path,
                c.scope,
                c.snippet,
                c.span,
                f"`{c.name}` called with arguments: the accessor takes none, it answers "
                f"the process-wide {ns.get(c.name, 'bag')}; if this means another "
                "callable, give that one another name",
            )
        )
    for m in facts.members:
        member_binding = m.receiver is None and m.kind != "monkeypatch"
        if member_binding and m.name not in meets:
            apart.append(f"{path}:{m.span[0]} {m.snippet}")
            continue
        why = _member_problem(m, index, runtime, attrs)
        if why is not None:
            mine.append(RawFinding(ID, path, m.scope, m.snippet, m.span, why))
    return mine


def _ruff_findings(
    program: Program,
    hits: Any,
    mine: list[RawFinding],
    legit_sites: dict[tuple[str, int], RuntimeImport],
) -> Iterable[RawFinding]:
    """ruff's F811 on accessor names, at a line no finding above holds."""
    taken = {(f.path, f.span[0]) for f in mine}
    by_path = {p: f for p, _, f in _facts(program)}
    for hit in hits:
        if (hit.path, hit.row) in taken:
            continue
        taken.add((hit.path, hit.row))
        site = legit_sites.get((hit.path, hit.row)) or _binding_at(by_path.get(hit.path), hit.row)
        yield RawFinding(
            ID,
            hit.path,
            site.scope if site else "<module>",
            site.snippet if site else f"ruff F811 {hit.name}",
            site.span if site else [hit.row, hit.col, hit.row, hit.col],
            f"ruff F811: {hit.message[0].lower()}{hit.message[1:]}: a module binds "
            f"`{hit.name}` once; drop the redefinition",
        )


def _runtime_bound(facts: AccessorFacts, index: ClassIndex, runtime: str) -> set[str]:
    """The accessor names this module binds to the runtime's own accessor: an
    import of it (directly or through a re-export) under its own name."""
    bound = set(facts.runtime_bound)
    for b in facts.bindings:
        target = b.target or ""
        if b.kind == "import" and b.name == target.rpartition(".")[2]:
            if _accessor_target(index, target, runtime):
                bound.add(b.name)
    return bound


def _collides(b: NameBinding, meets: set[str]) -> bool:
    """Whether a binding of an accessor name meets the runtime's accessor: the
    module binds that accessor too, or (for a same-named import) it reads the
    runtime through any accessor, so the first bag read of that name a
    migration writes there is the design's "same-named import next to the bag
    one" (SGLang 0.5.23's expert_distribution.py already had to import the
    device bag as `get_device_namespace` beside `utils.get_device`)."""
    return b.name in meets or (b.kind == "import" and bool(meets))


def _class_attrs(program: Program) -> dict[str, set[str]]:
    """Class -> the accessor-named attributes its body declares (a field holding
    a callable: `get_model: Callable[[], nn.Module]`)."""
    out: dict[str, set[str]] = {}
    for _, _, facts in _facts(program):
        for cls, names in facts.class_attrs.items():
            out.setdefault(cls, set()).update(names)
    return out


def _binding_at(facts: AccessorFacts | None, row: int) -> NameBinding | None:
    return next((b for b in facts.bindings if b.span[0] == row), None) if facts else None


def _binding_message(b: NameBinding, runtime: str, ns: dict[str, str], imported: bool) -> str:
    name, kind = b.name, b.kind
    bag = ns.get(name, "bag")
    if kind == "late import":
        return (
            f"`{name}` is used above its function-local import: inside the function the name "
            "is local throughout, so that use raises UnboundLocalError; import it once at "
            "module level"
        )
    if kind == "import":
        return (
            f"`{name}` imported from `{b.target}`: the accessor name means "
            f"`{runtime}.{name}` (the process-wide {bag}); import the other one under another "
            "name (ruff F811's import collision)"
        )
    if b.scope_kind == "function" and imported:
        return (
            f"`{name}` bound by {kind} in `{b.scope}` shadows the imported accessor: every "
            f"use of `{name}` in that function is the local, and one above the binding raises "
            "UnboundLocalError; rename the local"
        )
    where = "in the module" if b.scope_kind == "module" else f"in `{b.scope}`"
    return (
        f"`{name}` bound by {kind} {where}: the accessor name means `{runtime}.{name}` "
        f"(the process-wide {bag}), bound once per module; rename this"
    )


def _member_problem(
    m: MemberUse, index: ClassIndex, runtime: str, attrs: dict[str, set[str]]
) -> str | None:
    name, recv = m.name, m.receiver
    tail = f"call `{name}()` imported from `{runtime}`, or rename the member"
    if recv is None:  # a member binding
        if m.kind == "monkeypatch":
            return (
                f"`{name}` rebound on the runtime module: never patch an accessor; publish a "
                "config (get_context().override_server_args) or override the bag's leaves"
            )
        if m.kind == "class attribute":  # a field: `self.<name>()` calls what it holds
            return (
                f"`{name}` declared as a member of `{m.scope.rpartition('.')[2]}` in a module "
                f"that reads the `{name}()` accessor: `self.{name}()` and `{name}()` mean two "
                "things a line apart; rename the member and its uses (the accessor is not what "
                "it holds)"
            )
        return (
            f"`{name}` bound as a member ({m.kind}): the accessor name means the runtime's "
            f"module-level accessor, and `obj.{name}` shapes fail only when that path runs; "
            "rename the member"
        )
    via = recv.via
    found = find_method(index, recv, name)
    if found.found or any(name in attrs.get(c, ()) for c in found.classes):
        # a class declaring the attribute (a field holding a callable): the use
        # calls it, and the field's binding is the finding, where it collides
        return None
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
