"""Deriving the vocabulary (facts/vocab.py) from the runtime and record code:
the record's fields (facts/vocab_fields.py: a flat record, field classes,
NS() markers), then the accessors (facts/vocab_accessors.py: the seed, the
namespaces and bag accessors, the legacy ones), then what is missing.

A set a codebase has not reached yet (no namespaces before the migration starts)
is `missing`, with the reason; the rules that need it are disabled for the run.
A spelling that is there but cannot be read is an error, never a disabled rule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ctxlint.core.errors import DerivationError
from ctxlint.facts.vocab import BAGS, NAMESPACES, SEED, SchemaLoader, Vocabulary, where
from ctxlint.facts.vocab_accessors import (
    Types,
    bag_accessors,
    legacy_accessors,
    literal_bags,
    namespaces,
    seed_accessors,
)
from ctxlint.facts.vocab_errors import unpublished_errors
from ctxlint.facts.vocab_fields import RecordFields

Schema = dict[str, Any]


def derive_vocabulary(
    runtime_module: str,
    record_class: str,
    load: SchemaLoader,
    may_hold_field_class: Callable[[str], bool],
) -> Vocabulary:
    """Derive the vocabulary; `load(module)` returns schema facts or None if absent."""
    rt, rec_module, rec_schema, record = _inputs(runtime_module, record_class, load)
    provenance: dict[str, str] = {}
    found = RecordFields(load, provenance)
    found.record(record_class, record)
    found.assembled(rec_module, rec_schema, may_hold_field_class)
    found.count_markers()
    if not found.fields:
        raise DerivationError(
            f"record-class {record_class!r}: found no fields (no annotations on the class, its "
            "bases, or field classes with a literal _NS_PATH)"
        )
    modules = ((runtime_module, rt), (rec_module, rec_schema))
    seed = seed_accessors(modules, record_class, Types(load), provenance)
    public = {
        name: f
        for name, f in sorted(rt["functions"].items())
        if not f["required"] and name not in seed and not name.startswith("_")
    }
    literals = literal_bags(public, rt, provenance)
    spaces = namespaces(found.fields, literals)
    tops = sorted({ns.split(".")[0] for ns in spaces})
    bags = bag_accessors(public, literals, tops, rt, provenance)
    errors = unpublished_errors(runtime_module, rt, bags, load, provenance)
    legacy = legacy_accessors(runtime_module, rt, rec_module, rec_schema, load, provenance)
    missing = _missing(modules, record_class, found, seed, spaces, bags, tops)
    return Vocabulary(
        runtime_module=runtime_module,
        record_class=record_class,
        seed_accessors=tuple(sorted(seed)),
        bag_accessors=bags,
        fields=dict(sorted(found.fields.items())),
        properties=tuple(sorted(found.properties)),
        field_classes=dict(sorted(found.field_classes.items())),
        accessor_modules={k: m for k, m in sorted(seed.items()) if m != runtime_module},
        namespaces=tuple(sorted(spaces)),
        provenance=dict(sorted(provenance.items())),
        missing=missing,
        record_classes=tuple(found.record_classes),
        legacy_accessors=legacy,
        derived_leaves=dict(sorted(found.derived.items())),
        unpublished_errors=errors,
    )


def _inputs(
    runtime_module: str, record_class: str, load: SchemaLoader
) -> tuple[Schema, str, Schema, Schema]:
    """The runtime module's schema, the record's module and its schema, and the
    record class's facts; a name that is not there is an error."""
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
    return rt, rec_module, rec_schema, record


def _missing(
    modules: tuple[tuple[str, Schema], ...],
    record_class: str,
    found: RecordFields,
    seed: dict[str, str],
    spaces: set[str],
    bags: dict[str, str],
    tops: list[str],
) -> dict[str, str]:
    """Set -> why the codebase has not reached it (Rule.needs); a spelling that
    is there but cannot be read raises instead."""
    (runtime_module, _), (rec_module, _) = modules
    rec_name = record_class.rpartition(".")[2]
    missing: dict[str, str] = {}
    unreadable = found.unreadable
    if not spaces and unreadable:
        raise DerivationError(
            f"record-class {record_class!r}: namespaces are declared but none can be read "
            f"(a literal is needed): {unreadable[0]}"
            + (f" and {len(unreadable) - 1} more" if len(unreadable) > 1 else "")
        )
    if not seed:
        _seed_annotation_unresolved(modules, record_class)
        missing[SEED] = (
            f"no seed accessor: a zero-argument function in {runtime_module} or {rec_module} "
            f"returning {rec_name} (annotated `-> {rec_name}`, or returning the context's "
            f"{rec_name} slot) would provide it"
        )
    if not spaces:
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
    return missing


def _seed_annotation_unresolved(modules: tuple[tuple[str, Schema], ...], record_class: str) -> None:
    """With no seed found, a function annotated with the record's name that does
    not resolve to it is a broken derivation (an import missing), not a stage."""
    rec_name = record_class.rpartition(".")[2]
    for _, schema in modules:
        for name, f in sorted(schema["functions"].items()):
            names = f["returns_names"]
            if not f["required"] and names and names[-1].rpartition(".")[2] == rec_name:
                raise DerivationError(
                    f"{where(schema, name)}: `{name}()` is annotated `-> {f['returns']}` "
                    f"but that does not resolve to {record_class} (import the record there, "
                    "under TYPE_CHECKING if need be)"
                )
