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
from ctxlint.program.rule import RawFinding, Rule
from ctxlint.rules.ctx401_accessor_binding.visitor import AccessorBindingVisitor, accessor_names

ID = "CTX401"


# -- ruff's F811 ----------------------------------------------------------------
_ruff_command = ruff.command  # module attributes: tests replace them


def run_ruff_f811(root: Any, paths: list[str], names: set[str]) -> tuple[str, list[ruff.F811]]:
    return ruff.f811(root, paths, names, _ruff_command())


def _ruff(program: Program) -> tuple[str, list[ruff.F811]]:
    """ruff's F811 on the files that bind an accessor name twice, once a run:
    only `check` asks, so a run that does not select CTX401 never starts ruff."""

    def run() -> tuple[str, list[ruff.F811]]:
        candidates = sorted(p for p, _, f in program.facts(ID) if f["ruff"])
        return run_ruff_f811(program.config.root, candidates, accessor_names(program.vocab))

    return program.memo(f"{ID} ruff", run)


# -- the class index's answers ------------------------------------------------------
def _verdict(index: ClassIndex, types: list[str], name: str) -> str:
    """ "yes"/"maybe"/"no": does an object of one of `types` (classes, or
    callees: a function's return class) have method `name`."""
    verdicts = []
    for t in types:
        classes = index.instances(t)
        if classes:
            verdicts += [index.defines(c, name) for c in classes]
        else:
            verdicts.append("maybe" if index.external(t) else "no")
    return "yes" if "yes" in verdicts else "maybe" if "maybe" in verdicts else "no"


def _accessor_target(index: ClassIndex, target: str, runtime: str) -> bool:
    """Whether an import target is the runtime's accessor (possibly re-exported)."""
    return index.follow(target, lambda n: n.rpartition(".")[0] == runtime) is not None


def _defining(index: ClassIndex, names: set[str]) -> dict[str, list[str]]:
    """Accessor name -> classes of the tree defining a method of that name."""
    out: dict[str, list[str]] = {}
    for q, c in sorted(index.classes.items()):
        for m in sorted(set(c.methods) & names):
            out.setdefault(m, []).append(q)
    return out


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
        definers = {
            q for qs in _defining(index, accessor_names(program.vocab)).values() for q in qs
        }
        definers |= {s for q in list(definers) for s in index.subclasses(q)}
        return {q.rpartition(".")[2] for q in definers}

    def environment(self) -> str:
        # F811 comes from ruff: an outcome stored without it (or with another
        # ruff) must not be replayed once that changes
        return ruff.identity(_ruff_command())

    def partial(self, sets: dict[str, Any]) -> str | None:
        status = str(sets.get("ruff", ""))
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
                b["target"]
                for _, _, f in program.facts(ID)
                for b in f["bindings"]
                if b["kind"] == "import"
                and b["target"].rpartition(".")[0] != runtime
                and _accessor_target(index, b["target"], runtime)
            }
        )
        return {
            "accessor names": sorted(names),
            "classes defining accessor-named methods": _defining(index, names),
            "accessor re-exports imported from": reexports,
        }

    def check(self, program: Program) -> Iterable[RawFinding]:
        vocab = program.vocab
        runtime = vocab.runtime_module
        index = class_index(program)
        ns = {**dict(vocab.bag_accessors), **{s: "seed record" for s in vocab.seed_accessors}}
        mine: list[RawFinding] = []
        legit_sites: dict[tuple[str, int], dict[str, Any]] = {}
        attrs = _class_attrs(program)
        apart: list[str] = []  # bindings where the accessor is not bound: no collision
        for path, _, facts in program.facts(ID):
            mine += _file_findings(path, facts, index, runtime, ns, attrs, apart)
            for lg in facts["legit"]:
                legit_sites.setdefault((path, lg["span"][0]), lg)
        yield from mine
        status, hits = _ruff(program)
        program.sets.setdefault(ID, {}).update(
            {
                "ruff": status,
                "ruff F811 on accessor names": [str(h) for h in hits],
                "accessor names bound where the module does not bind that accessor "
                "(no collision: not reported)": apart,
            }
        )
        yield from _ruff_findings(program, hits, mine, legit_sites)


def _file_findings(
    path: str,
    facts: dict[str, Any],
    index: ClassIndex,
    runtime: str,
    ns: dict[str, str],
    attrs: dict[str, set[str]],
    apart: list[str],
) -> list[RawFinding]:
    """One module's bindings, calls with arguments and member uses of an accessor
    name; the bindings that meet no accessor go to `apart`."""
    mine: list[RawFinding] = []
    accessor_imported = {
        n for n, t in facts["imports"].items() if _accessor_target(index, t, runtime)
    }
    meets = _runtime_bound(facts, index, runtime)
    for b in facts["bindings"]:
        target = b.get("target", "")
        to_accessor = b["kind"] == "import" and _accessor_target(index, target, runtime)
        if to_accessor and b["n"] == target.rpartition(".")[2]:
            continue  # a re-export of the runtime's own accessor
        if not to_accessor and not _collides(b, meets):
            apart.append(f"{path}:{b['span'][0]} {b['snippet']}")
            continue
        why = _binding_message(b, runtime, ns, b["n"] in accessor_imported)
        mine.append(RawFinding(ID, path, b["scope"], b["snippet"], b["span"], why))
    shadowed = {
        (b["n"], b["scope"])
        for b in facts["bindings"]
        if b["sk"] == "function" and b["kind"] != "late import"
    }
    for c in facts["calls"]:
        if c["local"] and any((c["n"], s) in shadowed for s in c["chain"]):
            continue  # a local of that name, reported as its binding
        if not _accessor_target(index, c["target"], runtime) or not c["target"].endswith(
            f".{c['n']}"
        ):
            continue
        mine.append(
            RawFinding(
                ID,
                path,
                c["scope"],
                c["snippet"],
                c["span"],
                f"`{c['n']}` called with arguments: the accessor takes none, it answers "
                f"the process-wide {ns.get(c['n'], 'bag')}; if this means another "
                "callable, give that one another name",
            )
        )
    for m in facts["members"]:
        member_binding = m["recv"]["k"] == "binding" and m["kind"] != "monkeypatch"
        if member_binding and m["n"] not in meets:
            apart.append(f"{path}:{m['span'][0]} {m['snippet']}")
            continue
        why = _member_problem(m, index, runtime, attrs)
        if why is not None:
            mine.append(RawFinding(ID, path, m["scope"], m["snippet"], m["span"], why))
    return mine


def _ruff_findings(
    program: Program,
    hits: Any,
    mine: list[RawFinding],
    legit_sites: dict[tuple[str, int], dict[str, Any]],
) -> Iterable[RawFinding]:
    """ruff's F811 on accessor names, at a line no finding above holds."""
    taken = {(f.path, f.span[0]) for f in mine}
    by_path = {p: f for p, _, f in program.facts(ID)}
    for hit in hits:
        if (hit.path, hit.row) in taken:
            continue
        taken.add((hit.path, hit.row))
        site = legit_sites.get((hit.path, hit.row)) or _binding_at(by_path.get(hit.path), hit.row)
        yield RawFinding(
            ID,
            hit.path,
            site["scope"] if site else "<module>",
            site["snippet"] if site else f"ruff F811 {hit.name}",
            site["span"] if site else [hit.row, hit.col, hit.row, hit.col],
            f"ruff F811: {hit.message[0].lower()}{hit.message[1:]}: a module binds "
            f"`{hit.name}` once; drop the redefinition",
        )


def _runtime_bound(facts: dict[str, Any], index: ClassIndex, runtime: str) -> set[str]:
    """The accessor names this module binds to the runtime's own accessor: an
    import of it (directly or through a re-export) under its own name."""
    bound = set(facts.get("runtime_bound", ()))
    for b in facts["bindings"]:
        target = b.get("target", "")
        if b["kind"] == "import" and b["n"] == target.rpartition(".")[2]:
            if _accessor_target(index, target, runtime):
                bound.add(b["n"])
    return bound


def _collides(b: dict[str, Any], meets: set[str]) -> bool:
    """Whether a binding of an accessor name meets the runtime's accessor: the
    module binds that accessor too, or (for a same-named import) it reads the
    runtime through any accessor, so the first bag read of that name a
    migration writes there is the design's "same-named import next to the bag
    one" (SGLang 0.5.23's expert_distribution.py already had to import the
    device bag as `get_device_namespace` beside `utils.get_device`)."""
    return b["n"] in meets or (b["kind"] == "import" and bool(meets))


def _class_attrs(program: Program) -> dict[str, set[str]]:
    """Class -> the accessor-named attributes its body declares (a field holding
    a callable: `get_model: Callable[[], nn.Module]`)."""
    out: dict[str, set[str]] = {}
    for _, _, facts in program.facts(ID):
        for cls, names in facts.get("class_attrs", {}).items():
            out.setdefault(cls, set()).update(names)
    return out


def _binding_at(facts: dict[str, Any] | None, row: int) -> dict[str, Any] | None:
    for b in (facts or {}).get("bindings", ()):
        if b["span"][0] == row:
            return b
    return None


def _binding_message(b: dict[str, Any], runtime: str, ns: dict[str, str], imported: bool) -> str:
    name, kind = b["n"], b["kind"]
    bag = ns.get(name, "bag")
    if kind == "late import":
        return (
            f"`{name}` is used above its function-local import: inside the function the name "
            "is local throughout, so that use raises UnboundLocalError; import it once at "
            "module level"
        )
    if kind == "import":
        return (
            f"`{name}` imported from `{b.get('target')}`: the accessor name means "
            f"`{runtime}.{name}` (the process-wide {bag}); import the other one under another "
            "name (ruff F811's import collision)"
        )
    if b["sk"] == "function" and imported:
        return (
            f"`{name}` bound by {kind} in `{b['scope']}` shadows the imported accessor: every "
            f"use of `{name}` in that function is the local, and one above the binding raises "
            "UnboundLocalError; rename the local"
        )
    where = "in the module" if b["sk"] == "module" else f"in `{b['scope']}`"
    return (
        f"`{name}` bound by {kind} {where}: the accessor name means `{runtime}.{name}` "
        f"(the process-wide {bag}), bound once per module; rename this"
    )


def _member_problem(
    m: dict[str, Any], index: ClassIndex, runtime: str, attrs: dict[str, set[str]]
) -> str | None:
    name, recv = m["n"], m["recv"]
    tail = f"call `{name}()` imported from `{runtime}`, or rename the member"
    if recv["k"] == "binding":
        if m["kind"] == "monkeypatch":
            return (
                f"`{name}` rebound on the runtime module: never patch an accessor; publish a "
                "config (get_context().override_server_args) or override the bag's leaves"
            )
        if m["kind"] == "class attribute":  # a field: `self.<name>()` calls what it holds
            return (
                f"`{name}` declared as a member of `{m['scope'].rpartition('.')[2]}` in a module "
                f"that reads the `{name}()` accessor: `self.{name}()` and `{name}()` mean two "
                "things a line apart; rename the member and its uses (the accessor is not what "
                "it holds)"
            )
        return (
            f"`{name}` bound as a member ({m['kind']}): the accessor name means the runtime's "
            f"module-level accessor, and `obj.{name}` shapes fail only when that path runs; "
            "rename the member"
        )
    via = recv.get("via", "?")
    k = recv["k"]
    types: list[str] = []
    if k == "super":
        cls = recv["q"]
        if index.definer(cls, name, skip_self=True) is not None:
            return None
        if index.defines(cls, name) == "maybe":  # an ancestor outside the tree
            return None
        types = [cls]
    elif k == "class":
        types = [recv["q"]]
    elif k == "types":
        types = recv["t"]
    elif k == "selfattr" and recv["cls"] is not None:
        types = index.attr_types(recv["cls"], recv["attr"])
    if types:
        if k != "super" and _verdict(index, types, name) != "no":
            return None  # a class defining it, or a library type (`tensor.get_device()`)
        declared = {a for t in types for c in index.instances(t) for a in index.mro(c)}
        if k != "super" and any(name in attrs.get(c, ()) for c in declared):
            # the class declares the attribute (a field holding a callable): the use
            # calls it, and the field's binding is the finding, where it collides
            return None
        return (
            f"`{via}.{name}` member shape: `{types[0].rpartition('.')[2]}` defines no method "
            f"`{name}`; {tail}"
        )
    if k == "ref":
        q = recv["q"]
        cls = index.resolve(q)
        if cls is not None:
            if index.defines(cls, name) != "no":
                return None
            return f"`{via}.{name}`: class `{cls}` defines no method `{name}`; {tail}"
        typed = index.instance(q)
        if typed is not None:
            if _verdict(index, [typed], name) != "no":
                return None
            return (
                f"`{via}.{name}` member shape: `{via}` is a `{typed.rpartition('.')[2]}`, which "
                f"defines no method `{name}`; {tail}"
            )
        if index.external(q):
            return None  # a library's own API (`torch.get_device`)
        if q in index.modules:
            return (
                f"`{via}.{name}` reaches a same-named function of `{q}`, not the runtime "
                f"module's accessor; {tail}"
            )
    return (
        f"`{via}.{name}` member shape on a receiver of unknown class: the accessor is a module "
        f"function of `{runtime}`; {tail}"
    )


RULE = AccessorBinding()
