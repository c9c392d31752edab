"""The vocabulary: names the rules need, derived from the runtime and record code.

Configuration names two things (the runtime module and the record class);
everything else is found here: the seed accessor (the zero-argument function of
the runtime module annotated to return the record), the bag accessors (its
zero-argument `get_<namespace>` functions, or those whose return names the
namespace), and the record's fields with their namespaces (from the field
classes, each carrying a literal `_NS_PATH`). An empty result is an error.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from ctxlint.errors import DerivationError

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

    @property
    def record_name(self) -> str:
        return self.record_class.rpartition(".")[2]

    @property
    def record_module(self) -> str:
        return self.record_class.rpartition(".")[0]

    def qualified(self, accessor: str) -> str:
        return f"{self.runtime_module}.{accessor}"

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
        )

    def key(self) -> str:
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

    def absorb(qual: str, cls: dict[str, Any], namespace: str) -> None:
        for f in cls["fields"]:
            if not f.startswith("__"):
                fields.setdefault(f, namespace)
        for p in cls["properties"]:
            if p not in properties:
                properties.append(p)

    # The record and its bases (transitively): their annotations are fields. Depth
    # first, left base first (the stack gets them reversed), so a field declared
    # twice keeps the namespace of the class Python's MRO puts first.
    seen: set[str] = set()
    todo: list[tuple[str, dict[str, Any]]] = [(record_class, record)]
    while todo:
        qual, cls = todo.pop()
        if qual in seen:
            continue
        seen.add(qual)
        ns = cls.get("ns_path") or ""
        if ns:
            field_classes[qual] = ns
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
            absorb(real, cls, cls["ns_path"])

    if not fields:
        raise DerivationError(
            f"record-class {record_class!r}: found no fields (no annotations on the class, its "
            "bases, or field classes with a literal _NS_PATH)"
        )

    def resolves_to_record(text: str | None) -> bool:
        if not text:
            return False
        head, _, rest = text.partition(".")
        if head in rt["imports"]:
            text = rt["imports"][head] + (f".{rest}" if rest else "")
        elif head in rt["classes"]:
            text = f"{runtime_module}.{text}"
        return text == record_class

    namespaces = sorted({ns.split(".")[0] for ns in field_classes.values()})
    seed = tuple(
        sorted(
            n
            for n, f in rt["functions"].items()
            if f["required"] == 0 and resolves_to_record(f["returns"])
        )
    )
    if not seed:
        raise DerivationError(
            f"runtime-module {runtime_module!r}: no zero-argument function annotated to return "
            f"{rec_name} (the seed accessor)"
        )
    bags: dict[str, str] = {}
    for name, f in sorted(rt["functions"].items()):
        if f["required"] != 0 or name in seed or name.startswith("_"):
            continue  # an accessor is public API of the runtime module
        for ns in namespaces:
            if name == f"get_{ns}" or ns in f["return_strings"]:
                bags[name] = ns
                break
    if not bags:
        raise DerivationError(
            f"runtime-module {runtime_module!r}: no bag accessors (zero-argument get_<namespace> "
            f"functions) for the namespaces {namespaces}"
        )
    return Vocabulary(
        runtime_module=runtime_module,
        record_class=record_class,
        seed_accessors=seed,
        bag_accessors=bags,
        fields=dict(sorted(fields.items())),
        properties=tuple(sorted(properties)),
        field_classes=dict(sorted(field_classes.items())),
    )
