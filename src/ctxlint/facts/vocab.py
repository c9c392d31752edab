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
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

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
    # bag accessor -> for each class a read may raise before publish, that class
    # and its bases (facts/vocab_errors.py): what a `try` must catch to guard it
    unpublished_errors: dict[str, tuple[tuple[str, ...], ...]] = field(default_factory=dict)

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
            unpublished_errors={
                k: tuple(tuple(c) for c in v) for k, v in data.get("unpublished_errors", {}).items()
            },
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
# (facts/vocab_derive.py) either filled or in `missing` with the reason.
SEED = "seed accessors"
BAGS = "bag accessors"
NAMESPACES = "namespaces"


def where(schema: dict[str, Any], name: str) -> str:
    """`path:line` of a name a module's schema facts define (the path alone if
    no line was kept), for a derived name's provenance."""
    line = schema.get("lines", {}).get(name)
    return f"{schema.get('path', '?')}:{line}" if line else schema.get("path", "?")
