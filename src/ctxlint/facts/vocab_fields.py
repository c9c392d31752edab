"""The record's fields with their namespaces, in every spelling the migration
has used, stage by stage:

- a flat record: the annotations of the record class and its bases, with no
  namespace ("");
- field classes: a class carrying a literal `_NS_PATH` (a base of the record,
  or one the record's module assembles it from: SGLang's `_INPUT_NAMESPACES`),
  whose fields are in that namespace;
- `NS("path")` markers: one field's namespace (in `Annotated[...]` metadata or
  `field(metadata=...)`), over its class's.

Each namespace keeps where it came from (`provenance`); a declaration that is
not a literal is kept apart (`unreadable`): the derivation then fails rather
than disable a rule.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ctxlint.facts.vocab import SchemaLoader, find_class, where


class RecordFields:
    """What the stages find, in the order they find it: a field declared twice
    keeps its first namespace, a namespace its first provenance."""

    def __init__(self, load: SchemaLoader, provenance: dict[str, str]) -> None:
        self.load = load
        self.provenance = provenance
        self.fields: dict[str, str] = {}  # field -> namespace path ("": the record's own)
        self.properties: list[str] = []
        self.field_classes: dict[str, str] = {}  # qualified field class -> namespace path
        self.record_classes: list[str] = []  # the record and its bases, qualified
        self.derived: dict[str, str] = {}  # Derived leaf -> the namespace of its field class
        self.unreadable: list[str] = []  # namespace declarations that are not literals
        self._markers: dict[str, int] = {}  # namespace -> NS() markers naming it

    # -- stage: the record and its bases ----------------------------------------
    def record(self, record_class: str, record: dict[str, Any]) -> None:
        """The record and its bases (transitively): their annotations are fields,
        a base with `_NS_PATH` is a field class. Depth first, left base first
        (the stack gets them reversed), so a field declared twice keeps the
        namespace of the class Python's MRO puts first."""
        todo: list[tuple[str, dict[str, Any]]] = [(record_class, record)]
        while todo:
            qual, cls = todo.pop()
            if qual in self.record_classes:
                continue
            self.record_classes.append(qual)
            ns = cls.get("ns_path") or ""
            if ns:
                self._field_class(qual, ns)
            self._absorb(qual, cls, ns)
            for base in reversed(cls["bases"]):
                found = find_class(base, self.load)
                if found is not None:
                    todo.append(found)

    # -- stage: field classes the record is assembled from -----------------------
    def assembled(
        self, rec_module: str, rec_schema: dict[str, Any], may_hold: Callable[[str], bool]
    ) -> None:
        """Field classes the record module assembles the record from (SGLang lists
        them in `_INPUT_NAMESPACES`): any class it imports or defines with
        `_NS_PATH` (`may_hold`: whose module's text has one at all)."""
        referenced = sorted(
            {*rec_schema["imports"].values()}
            | {n for names in rec_schema["lists"].values() for n in names}
            | {f"{rec_module}.{c}" for c in rec_schema["classes"]}
        )
        for qual in referenced:
            if not may_hold(qual):
                continue
            found = find_class(qual, self.load)
            if found is None:
                continue
            real, cls = found
            if cls.get("ns_path") and real not in self.field_classes:
                self._field_class(real, cls["ns_path"])
                self._absorb(real, cls, cls["ns_path"])

    # -- stage: NS() markers ----------------------------------------------------
    def count_markers(self) -> None:
        """Each marked namespace's provenance says how many markers name it."""
        for ns, n in self._markers.items():
            self.provenance[f"namespace {ns}"] += f", {n} marker{'s' if n > 1 else ''}"

    def _marker(self, qual: str, name: str, marker: str) -> None:
        module, _, local = qual.rpartition(".")
        self._markers[marker] = self._markers.get(marker, 0) + 1
        self.provenance.setdefault(
            f"namespace {marker}",
            f"{where(self.load(module) or {}, f'{local}.{name}')} "
            f"(NS({marker!r}) on {local}.{name})",
        )

    # -- one class's fields -------------------------------------------------------
    def _field_class(self, qual: str, namespace: str) -> None:
        module, _, local = qual.rpartition(".")
        self.field_classes[qual] = namespace
        at = where(self.load(module) or {}, local)
        self.provenance[f"field class {qual}"] = f"{at} (_NS_PATH = {namespace!r})"
        self.provenance.setdefault(f"namespace {namespace}", f"{at} ({local}._NS_PATH)")

    def _absorb(self, qual: str, cls: dict[str, Any], namespace: str) -> None:
        """A class's fields (in `namespace`, or their own marker's), properties
        and Derived leaves; its namespace declarations that are not literals."""
        module, _, local = qual.rpartition(".")
        for what in cls.get("ns_unreadable", ()):
            name = what.partition(":")[0] if ":" in what else ""
            key = f"{local}.{name}" if name else local
            self.unreadable.append(f"{where(self.load(module) or {}, key)} ({local}: {what})")
        for f in cls["fields"]:
            if f.startswith("__") or f in self.fields:
                continue
            marker = cls.get("ns_fields", {}).get(f)
            self.fields[f] = marker or namespace
            if marker:
                self._marker(qual, f, marker)
        for p in cls["properties"]:
            if p not in self.properties:
                self.properties.append(p)
        if namespace:
            for d in cls.get("derived", ()):
                self.derived.setdefault(d, namespace)
