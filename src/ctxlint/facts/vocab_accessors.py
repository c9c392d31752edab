"""The accessors, stage by stage: the seed accessors (and the aliases of one
the migration left behind), the namespaces and the bag accessors that answer
them, and the legacy accessors the code marks deprecated. Each keeps where it
came from (`provenance`)."""

from __future__ import annotations

import re
from typing import Any

from ctxlint.core.errors import DerivationError
from ctxlint.facts.vocab import SchemaLoader, find_class, where

Schema = dict[str, Any]


# -- stage: the seed ----------------------------------------------------------------
def seed_accessors(
    modules: tuple[tuple[str, Schema], ...],
    record_class: str,
    types: Types,
    provenance: dict[str, str],
) -> dict[str, str]:
    """Zero-argument functions of the runtime module or of the record's module
    (`modules`, in that order) that return the record, by annotation or by what
    they return (the context's record slot), then the aliases of one: accessor
    -> its module."""
    rec_name = record_class.rpartition(".")[2]
    seed: dict[str, str] = {}
    for module, schema in modules:
        for name, f in sorted(schema["functions"].items()):
            if f["required"] or name in seed:
                continue
            if types.resolve(f["returns_names"], module) == record_class:
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
            provenance[f"seed accessor {name}"] = f"{where(schema, name)} ({how})"
    _seed_aliases(modules, seed, provenance)
    return seed


def _seed_aliases(
    modules: tuple[tuple[str, Schema], ...], seed: dict[str, str], provenance: dict[str, str]
) -> None:
    """Deprecated aliases: `old_name = get_server_args` (or an import of it under
    another name) in the runtime module or the record's module."""
    runtime_module = modules[0][0]
    for module, schema in modules:
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
            provenance[f"seed accessor {alias}"] = f"{where(schema, alias)} (alias of {target})"


# -- stage: namespaces and the bag accessors -------------------------------------------
def literal_bags(
    public: dict[str, Schema], rt: Schema, provenance: dict[str, str]
) -> dict[str, str]:
    """Accessor -> the literal name it asks the context for (`config_bag("exec")`)."""
    out: dict[str, str] = {}
    for name, f in public.items():
        for path in f.get("return_paths", ()):
            literal = _literal_bag(path, rt)
            if literal is not None:
                out[name] = literal
                provenance.setdefault(
                    f"namespace {literal}", f"{where(rt, name)} ({name} returns {path})"
                )
                break
    return out


def namespaces(fields: dict[str, str], literals: dict[str, str]) -> set[str]:
    """The fields' namespaces and their parents (`exec` for `exec.moe`), and the
    literals bag accessors pass to the context."""
    out = {ns for ns in fields.values() if ns} | set(literals.values())
    for ns in list(out):
        parts = ns.split(".")
        out.update(".".join(parts[:i]) for i in range(1, len(parts)))
    return out


def bag_accessors(
    public: dict[str, Schema],
    literals: dict[str, str],
    tops: list[str],
    rt: Schema,
    provenance: dict[str, str],
) -> dict[str, str]:
    """Accessor -> top-level namespace: one returning the context's bag for a
    literal name, else one named `get_<namespace>`, else one whose return names
    its namespace."""
    bags: dict[str, str] = {}
    for name, f in public.items():
        if name in literals and literals[name] in tops:
            bags[name] = literals[name]
            how = f"returns the context's bag {literals[name]!r}"
        else:
            ns = next((ns for ns in tops if name == f"get_{ns}"), None)
            how = f"named get_{ns}"
            if ns is None:  # an accessor whose return names its namespace otherwise
                ns = next((ns for ns in tops if ns in f["return_strings"]), None)
                how = f"its return names {ns!r}"
            if ns is None:
                continue
            bags[name] = ns
        provenance[f"bag accessor {name}"] = f"{where(rt, name)} ({how})"
    return bags


def _literal_bag(path: str, rt: Schema) -> str | None:
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


# -- stage: legacy accessors ------------------------------------------------------------
def legacy_accessors(
    runtime_module: str,
    rt: Schema,
    rec_module: str,
    rec_schema: Schema,
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
                    f"{where(schema, name)} ({f['deprecated']})"
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
                f"{where(schema, name)} ({f['deprecated']}; re-exported by {runtime_module})"
            )
    return tuple(sorted(found))


class Types:
    """Just enough typing to tell that `_CONTEXT.server_args` is the record:
    annotations of functions, class attributes and properties, and the classes
    module globals are instances of, in the runtime and record modules."""

    def __init__(self, load: SchemaLoader) -> None:
        self.load = load

    def resolve(self, names: list[str], module: str) -> str | None:
        """The qualified class an annotation names, given the names it names
        instances of (facts.annotations.instance_names: through Optional/`| None`)."""
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
            cls = self.resolve(schema["functions"][head[:-2]]["returns_names"], module)
        elif head in schema.get("values", {}) and schema["values"][head].endswith("(...)"):
            cls = self.resolve([schema["values"][head][:-5]], module)  # an instance of the callee
        else:
            return None
        for attr in parts[1:]:
            if cls is None or "(" in attr:
                return None
            found = find_class(cls, self.load)
            if found is None:
                return None
            qual, facts = found
            cls = self.resolve(facts.get("attr_types", {}).get(attr, []), qual.rpartition(".")[0])
        return cls
