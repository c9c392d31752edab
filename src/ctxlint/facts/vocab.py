"""The vocabulary: names the rules need, derived from the runtime and record code.

Configuration names two things (the runtime module and the record class);
everything else is found here, in every spelling the design has had:

- the record's fields with their namespaces: field classes carrying a literal
  `_NS_PATH`, per-field `NS("path")` markers (in `Annotated[...]` metadata or
  `field(metadata=...)`); a dotted path is a sub-namespace;
- the namespaces: those, plus the literal a bag accessor passes to the context
  (`config_bag("exec")`);
- the seed accessors: zero-argument functions of the runtime module or of the
  record's module that return the record, by annotation or by what they return
  (the context's record slot), plus module-level aliases of them;
- the bag accessors: zero-argument public functions of the runtime module named
  `get_<namespace>`, or returning the context's bag for a literal name.

A set a codebase has not reached yet (no namespaces before the migration starts)
is `missing`, with the reason; the rules that need it are disabled for the run.
Each derived name keeps where it came from (`provenance`), for `ctxlint sets`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from ctxlint.core.errors import DerivationError

SchemaLoader = Callable[[str], "dict[str, Any] | None"]


@dataclass(frozen=True)
class Vocabulary:
    runtime_module: str
    record_class: str  # qualified
    seed_accessors: tuple[str, ...]
    bag_accessors: dict[str, str]  # accessor name -> top-level namespace
    fields: dict[str, str]  # record field -> namespace path ("" when the record declares it)
    properties: tuple[str, ...]
    field_classes: dict[str, str]  # qualified field class -> namespace path
    # accessor -> its module, for one not defined in the runtime module
    accessor_modules: dict[str, str] = field(default_factory=dict)
    namespaces: tuple[str, ...] = ()  # every namespace path, sub-namespaces included
    provenance: dict[str, str] = field(default_factory=dict)  # "kind name" -> where from
    missing: dict[str, str] = field(default_factory=dict)  # set -> why it is absent
    record_classes: tuple[str, ...] = ()  # the record and its bases, qualified
    # legacy accessors: functions of the runtime or record module (or re-exported
    # by the runtime module from another) marked deprecated in the code, qualified
    # as callers name them
    legacy_accessors: tuple[str, ...] = ()
    # leaves computed at publish (`x = Derived(fn=...)` in a field class) -> namespace
    derived_leaves: dict[str, str] = field(default_factory=dict)

    @property
    def record_name(self) -> str:
        return self.record_class.rpartition(".")[2]

    @property
    def record_module(self) -> str:
        return self.record_class.rpartition(".")[0]

    def qualified(self, accessor: str) -> str:
        return f"{self.accessor_modules.get(accessor, self.runtime_module)}.{accessor}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Vocabulary:
        return cls(
            runtime_module=data["runtime_module"],
            record_class=data["record_class"],
            seed_accessors=tuple(data["seed_accessors"]),
            bag_accessors=dict(data["bag_accessors"]),
            fields=dict(data["fields"]),
            properties=tuple(data["properties"]),
            field_classes=dict(data["field_classes"]),
            accessor_modules=dict(data.get("accessor_modules", {})),
            namespaces=tuple(data.get("namespaces", ())),
            provenance=dict(data.get("provenance", {})),
            missing=dict(data.get("missing", {})),
            record_classes=tuple(data.get("record_classes", ())),
            legacy_accessors=tuple(data.get("legacy_accessors", ())),
            derived_leaves=dict(data.get("derived_leaves", {})),
        )

    def key(self) -> str:
        """What per-file facts depend on: the names, not where they came from (a
        line added above an accessor must not make every file's facts cold)."""
        data = self.to_json()
        del data["provenance"]
        raw = json.dumps(data, sort_keys=True).encode()
        return hashlib.sha256(raw).hexdigest()[:16]

    def full_key(self) -> str:
        """Everything, provenance included: what a stored outcome depends on."""
        raw = json.dumps(self.to_json(), sort_keys=True).encode()
        return hashlib.sha256(raw).hexdigest()[:16]


def _split(qualname: str, load: SchemaLoader) -> tuple[dict[str, Any], str] | None:
    """(schema of the defining module, local name) for a qualified name, or None."""
    module, _, name = qualname.rpartition(".")
    while module:
        schema = load(module)
        if schema is not None:
            return schema, qualname[len(module) + 1 :] if name else name
        module, _, _ = module.rpartition(".")
    return None


def find_class(
    qualname: str, load: SchemaLoader, depth: int = 0
) -> tuple[str, dict[str, Any]] | None:
    """Follow re-exports (`from .fields import Memory`) to the class definition."""
    if depth > 8:
        return None
    found = _split(qualname, load)
    if found is None:
        return None
    schema, local = found
    if "." in local:
        return None
    if local in schema["classes"]:
        return qualname, schema["classes"][local]
    target = schema["imports"].get(local)
    if target and target != qualname:
        return find_class(target, load, depth + 1)
    return None


# The sets a rule may need (Rule.needs); each comes out of derive_vocabulary
# either filled or in `missing` with the reason.
SEED = "seed accessors"
BAGS = "bag accessors"
NAMESPACES = "namespaces"


def _where(schema: dict[str, Any], name: str) -> str:
    line = schema.get("lines", {}).get(name)
    return f"{schema.get('path', '?')}:{line}" if line else schema.get("path", "?")


def derive_vocabulary(
    runtime_module: str,
    record_class: str,
    load: SchemaLoader,
    may_hold_field_class: Callable[[str], bool],
) -> Vocabulary:
    """Derive the vocabulary; `load(module)` returns schema facts or None if absent."""
    rt = load(runtime_module)
    if rt is None:
        raise DerivationError(
            f"runtime-module {runtime_module!r} is not a module under the src roots"
        )
    rec_module, _, rec_name = record_class.rpartition(".")
    rec_schema = load(rec_module)
    if rec_schema is None:
        raise DerivationError(f"record-class module {rec_module!r} is not under the src roots")
    record = rec_schema["classes"].get(rec_name)
    if record is None:
        raise DerivationError(f"record-class {record_class!r}: no class {rec_name} in {rec_module}")

    fields: dict[str, str] = {}
    properties: list[str] = []
    field_classes: dict[str, str] = {}
    provenance: dict[str, str] = {}
    marker_counts: dict[str, int] = {}
    derived: dict[str, str] = {}  # Derived leaf -> the namespace of its field class
    unreadable: list[str] = []  # namespace declarations in a form that is not a literal

    def absorb(qual: str, cls: dict[str, Any], namespace: str) -> None:
        module, _, local = qual.rpartition(".")
        for what in cls.get("ns_unreadable", ()):
            name = what.partition(":")[0] if ":" in what else ""
            key = f"{local}.{name}" if name else local
            unreadable.append(f"{_where(load(module) or {}, key)} ({local}: {what})")
        for f in cls["fields"]:
            if f.startswith("__") or f in fields:
                continue
            marker = cls.get("ns_fields", {}).get(f)
            fields[f] = marker or namespace
            if marker:
                marker_counts[marker] = marker_counts.get(marker, 0) + 1
                schema = load(module)
                provenance.setdefault(
                    f"namespace {marker}",
                    f"{_where(schema or {}, f'{local}.{f}')} (NS({marker!r}) on {local}.{f})",
                )
        for p in cls["properties"]:
            if p not in properties:
                properties.append(p)
        if namespace:
            for d in cls.get("derived", ()):
                derived.setdefault(d, namespace)

    def note_class(qual: str, namespace: str) -> None:
        module, _, local = qual.rpartition(".")
        where = _where(load(module) or {}, local)
        provenance[f"field class {qual}"] = f"{where} (_NS_PATH = {namespace!r})"
        provenance.setdefault(f"namespace {namespace}", f"{where} ({local}._NS_PATH)")

    # The record and its bases (transitively): their annotations are fields. Depth
    # first, left base first (the stack gets them reversed), so a field declared
    # twice keeps the namespace of the class Python's MRO puts first.
    seen: list[str] = []
    todo: list[tuple[str, dict[str, Any]]] = [(record_class, record)]
    while todo:
        qual, cls = todo.pop()
        if qual in seen:
            continue
        seen.append(qual)
        ns = cls.get("ns_path") or ""
        if ns:
            field_classes[qual] = ns
            note_class(qual, ns)
        absorb(qual, cls, ns)
        for base in reversed(cls["bases"]):
            found = find_class(base, load)
            if found is not None:
                todo.append(found)

    # Field classes the record module assembles the record from (SGLang lists
    # them in `_INPUT_NAMESPACES`): any class it imports or defines with `_NS_PATH`.
    referenced = sorted(
        {*rec_schema["imports"].values()}
        | {n for names in rec_schema["lists"].values() for n in names}
        | {f"{rec_module}.{c}" for c in rec_schema["classes"]}
    )
    for qual in referenced:
        if not may_hold_field_class(qual):
            continue
        found = find_class(qual, load)
        if found is None:
            continue
        real, cls = found
        if cls.get("ns_path") and real not in field_classes:
            field_classes[real] = cls["ns_path"]
            note_class(real, cls["ns_path"])
            absorb(real, cls, cls["ns_path"])
    for ns, n in marker_counts.items():
        provenance[f"namespace {ns}"] += f", {n} marker{'s' if n > 1 else ''}"

    if not fields:
        raise DerivationError(
            f"record-class {record_class!r}: found no fields (no annotations on the class, its "
            "bases, or field classes with a literal _NS_PATH)"
        )

    types = _Types(runtime_module, record_class, load)
    seed: dict[str, str] = {}  # accessor -> module
    for module, schema in ((runtime_module, rt), (rec_module, rec_schema)):
        for name, f in sorted(schema["functions"].items()):
            if f["required"] or name in seed:
                continue
            if types.resolve(f["returns"], module) == record_class:
                how = f"annotated -> {f['returns']}"
            elif not f["returns"] and any(
                types.of_path(p, module) == record_class for p in f.get("return_paths", ())
            ):
                how = f"returns {f['return_paths'][0]}"
            else:
                continue
            if any(p.startswith(f"{rec_name}(") for p in f.get("return_paths", ())):
                continue  # a factory of new records, not the seed
            seed[name] = module
            provenance[f"seed accessor {name}"] = f"{_where(schema, name)} ({how})"
    # Deprecated aliases: `old_name = get_server_args` (or an import of it under
    # another name) in the runtime module or the record's module.
    for module, schema in ((runtime_module, rt), (rec_module, rec_schema)):
        bound = {**schema.get("values", {})}
        bound.update(
            {k: v for k, v in schema["imports"].items() if v.rpartition(".")[0] == runtime_module}
        )
        for alias, target in sorted(bound.items()):
            target_name = target.rpartition(".")[2]
            if alias in seed or target_name not in seed or alias.startswith("_"):
                continue
            if "." in target and target.rpartition(".")[0] != seed[target_name]:
                continue
            if alias == target_name and module != seed[target_name]:
                continue  # a plain import of the accessor, not a second name for it
            seed[alias] = module
            provenance[f"seed accessor {alias}"] = f"{_where(schema, alias)} (alias of {target})"

    # Namespaces: the fields' (and their parents, `exec` for `exec.moe`), and the
    # literal a bag accessor passes to the context.
    public = {
        name: f
        for name, f in sorted(rt["functions"].items())
        if not f["required"] and name not in seed and not name.startswith("_")
    }
    literal_bags: dict[str, str] = {}  # accessor -> the literal name it asks the context for
    for name, f in public.items():
        for path in f.get("return_paths", ()):
            literal = _literal_bag(path, rt)
            if literal is not None:
                literal_bags[name] = literal
                provenance.setdefault(
                    f"namespace {literal}", f"{_where(rt, name)} ({name} returns {path})"
                )
                break
    declared = {ns for ns in fields.values() if ns}
    namespaces = set(declared) | set(literal_bags.values())
    for ns in list(namespaces):
        parts = ns.split(".")
        namespaces.update(".".join(parts[:i]) for i in range(1, len(parts)))
    tops = sorted({ns.split(".")[0] for ns in namespaces})
    bags: dict[str, str] = {}
    for name, f in public.items():
        if name in literal_bags and literal_bags[name] in tops:
            bags[name] = literal_bags[name]
            how = f"returns the context's bag {literal_bags[name]!r}"
        else:
            ns = next((ns for ns in tops if name == f"get_{ns}"), None)
            how = f"named get_{ns}"
            if ns is None:  # an accessor whose return names its namespace otherwise
                ns = next((ns for ns in tops if ns in f["return_strings"]), None)
                how = f"its return names {ns!r}"
            if ns is None:
                continue
            bags[name] = ns
        provenance[f"bag accessor {name}"] = f"{_where(rt, name)} ({how})"

    legacy = _legacy_accessors(runtime_module, rt, rec_module, rec_schema, load, provenance)

    missing: dict[str, str] = {}
    seed_places = f"{runtime_module} or {rec_module}"
    # The difference between a stage not reached and a derivation that broke: a
    # spelling that is there but cannot be read is an error, never a disabled rule.
    if not namespaces and unreadable:
        raise DerivationError(
            f"record-class {record_class!r}: namespaces are declared but none can be read "
            f"(a literal is needed): {unreadable[0]}"
            + (f" and {len(unreadable) - 1} more" if len(unreadable) > 1 else "")
        )
    if not seed:
        for schema in (rt, rec_schema):
            for name, f in sorted(schema["functions"].items()):
                names = _annotation_names(f["returns"])
                if not f["required"] and names and names[-1].rpartition(".")[2] == rec_name:
                    raise DerivationError(
                        f"{_where(schema, name)}: `{name}()` is annotated `-> {f['returns']}` "
                        f"but that does not resolve to {record_class} (import the record there, "
                        "under TYPE_CHECKING if need be)"
                    )

        missing[SEED] = (
            f"no seed accessor: a zero-argument function in {seed_places} returning "
            f"{rec_name} (annotated `-> {rec_name}`, or returning the context's {rec_name} "
            "slot) would provide it"
        )
    if not namespaces:
        missing[NAMESPACES] = (
            f'no namespaces: field classes with `_NS_PATH`, `NS("path")` markers on '
            f"{rec_name}'s fields, or an accessor in {runtime_module} returning the "
            "context's bag for a literal name would provide them"
        )
    if not bags:
        missing[BAGS] = (
            f"no bag accessors: a zero-argument `get_<namespace>()` in {runtime_module} "
            "returning the context's bag for a namespace would provide them"
            + (f" (namespaces declared: {', '.join(tops)})" if tops else "")
        )
    return Vocabulary(
        runtime_module=runtime_module,
        record_class=record_class,
        seed_accessors=tuple(sorted(seed)),
        bag_accessors=bags,
        fields=dict(sorted(fields.items())),
        properties=tuple(sorted(properties)),
        field_classes=dict(sorted(field_classes.items())),
        accessor_modules={k: m for k, m in sorted(seed.items()) if m != runtime_module},
        namespaces=tuple(sorted(namespaces)),
        provenance=dict(sorted(provenance.items())),
        missing=missing,
        record_classes=tuple(seen),
        legacy_accessors=legacy,
        derived_leaves=dict(sorted(derived.items())),
    )


def _legacy_accessors(
    runtime_module: str,
    rt: dict[str, Any],
    rec_module: str,
    rec_schema: dict[str, Any],
    load: SchemaLoader,
    provenance: dict[str, str],
) -> tuple[str, ...]:
    """Functions the code marks deprecated (`@deprecated`, a `warn(...,
    DeprecationWarning)` in the body) in the runtime module and the record's
    module, and those the runtime module re-exports from another module."""
    found: set[str] = set()
    for module, schema in ((runtime_module, rt), (rec_module, rec_schema)):
        for name, f in schema["functions"].items():
            if f.get("deprecated"):
                found.add(f"{module}.{name}")
                provenance[f"legacy accessor {module}.{name}"] = (
                    f"{_where(schema, name)} ({f['deprecated']})"
                )
    for local, target in rt["imports"].items():
        source, _, name = target.rpartition(".")
        if local.startswith("_") or not source or source in (runtime_module, rec_module):
            continue
        try:
            schema = load(source)
        except DerivationError:  # an unreadable module re-exports nothing we can see
            continue
        f = (schema or {}).get("functions", {}).get(name)
        if schema is not None and f and f.get("deprecated"):
            found.add(f"{runtime_module}.{local}")
            provenance[f"legacy accessor {runtime_module}.{local}"] = (
                f"{_where(schema, name)} ({f['deprecated']}; re-exported by {runtime_module})"
            )
    return tuple(sorted(found))


def _literal_bag(path: str, rt: dict[str, Any]) -> str | None:
    """The literal of `_CONTEXT.config_bag("exec")` / `get_context().bag("exec")`:
    a one-literal method call on an object the runtime module owns (a module
    global or one of its zero-argument functions), never on an import."""
    if not path.endswith(")") or "(" not in path:
        return None
    callee, _, arg = path[:-1].partition("(")
    if not (arg.startswith(("'", '"')) and "." in callee):
        return None
    head = callee.split(".")[0]
    owned = head.endswith("()") and head[:-2] in rt["functions"]
    owned = owned or (head in rt.get("values", {}) and head not in rt["imports"])
    literal = arg[1:-1]
    return literal if owned and re.fullmatch(r"[a-z_][a-z0-9_.]*", literal) else None


class _Types:
    """Just enough typing to tell that `_CONTEXT.server_args` is the record:
    annotations of functions, class attributes and properties, and the classes
    module globals are instances of, in the runtime and record modules."""

    def __init__(self, runtime_module: str, record_class: str, load: SchemaLoader) -> None:
        self.load = load
        self.record_class = record_class
        self.runtime_module = runtime_module

    def resolve(self, text: str | None, module: str) -> str | None:
        """The qualified class an annotation names (through Optional/`| None`)."""
        names = _annotation_names(text)
        if len(names) != 1:
            return None
        schema = self.load(module)
        if schema is None:
            return None
        head, _, rest = names[0].partition(".")
        if head in schema["imports"]:
            return schema["imports"][head] + (f".{rest}" if rest else "")
        if head in schema["classes"]:
            return f"{module}.{names[0]}"
        return None

    def of_path(self, path: str, module: str) -> str | None:
        """The class of what `a.b`, `f().b` evaluates to, or None if unknown."""
        schema = self.load(module)
        if schema is None:
            return None
        parts = path.split(".")
        head = parts[0]
        if head.endswith("()") and head[:-2] in schema["functions"]:
            cls = self.resolve(schema["functions"][head[:-2]]["returns"], module)
        elif head in schema.get("values", {}) and schema["values"][head].endswith("(...)"):
            cls = self.resolve(schema["values"][head][:-5], module)
        else:
            return None
        for attr in parts[1:]:
            if cls is None or "(" in attr:
                return None
            found = find_class(cls, self.load)
            if found is None:
                return None
            qual, facts = found
            cls = self.resolve(facts.get("attr_types", {}).get(attr), qual.rpartition(".")[0])
        return cls


def _annotation_names(text: str | None) -> list[str]:
    """The class names an annotation text mentions, less Optional/Union/None."""
    if not text:
        return []
    names = re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", text)
    return [n for n in names if n.rpartition(".")[2] not in ("Optional", "Union", "None")]
