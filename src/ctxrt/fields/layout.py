"""Assembling the record from the namespace classes.

``collect_input_fields`` walks the field classes once and answers the two questions
everything else asks: which fields the record takes as input, and which namespace
path (bag) every leaf — input or ``Derived`` — belongs to."""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, TypeVar

from ctxrt.fields.base import Derived
from ctxrt.frozen import accepted_types

T = TypeVar("T")

# The twelve top-level namespaces, one ``get_<ns>()`` accessor (or get_parallel) each.
TOP_NAMESPACES: tuple[str, ...] = (
    "exec",
    "memory",
    "schedule",
    "model",
    "spec",
    "serving",
    "observability",
    "disagg",
    "lora",
    "mm",
    "device",
    "parallel",
)

# Names a bag answers itself; a leaf may not shadow them.
RESERVED_LEAF_NAMES = frozenset({"override"})


@dataclasses.dataclass(frozen=True)
class NamespaceLayout:
    """Where every leaf lives. ``leaf_paths`` covers input and derived leaves."""

    leaf_paths: Mapping[str, str]
    input_fields: Mapping[str, tuple[Any, dataclasses.Field[Any]]]
    derived: Mapping[str, Derived]
    paths: tuple[str, ...]
    leaf_types: Mapping[str, tuple[type, ...]]  # what a post-publish write may store

    def assemble(self, cls: type[T]) -> type[T]:
        """Class decorator: give ``cls`` the input fields and make it a kw-only dataclass."""
        own = dict(inspect.get_annotations(cls))
        annotations: dict[str, Any] = {}
        for name, (annotation, template) in self.input_fields.items():
            annotations[name] = annotation
            setattr(cls, name, _copy_field(template))
        cls.__annotations__ = {**annotations, **own}
        return dataclasses.dataclass(kw_only=True)(cls)


def _copy_field(template: dataclasses.Field[Any]) -> Any:
    # dataclass() writes name/type onto the Field it is given: each record class gets
    # its own copy so the namespace classes stay reusable.
    if template.default_factory is not dataclasses.MISSING:
        return dataclasses.field(
            default_factory=template.default_factory, metadata=template.metadata
        )
    return dataclasses.field(default=template.default, metadata=template.metadata)


def collect_input_fields(namespaces: Iterable[type]) -> NamespaceLayout:
    leaf_paths: dict[str, str] = {}
    input_fields: dict[str, tuple[Any, dataclasses.Field[Any]]] = {}
    derived: dict[str, Derived] = {}
    paths: list[str] = []
    leaf_types: dict[str, tuple[type, ...]] = {}
    for ns_cls in namespaces:
        path = ns_cls.__dict__.get("_NS_PATH")
        if not isinstance(path, str) or path.split(".")[0] not in TOP_NAMESPACES:
            raise TypeError(f"{ns_cls.__name__} needs _NS_PATH under one of {TOP_NAMESPACES}")
        if path in paths:
            raise TypeError(f"two field classes claim namespace {path!r}")
        paths.append(path)
        evaluated = inspect.get_annotations(ns_cls, eval_str=True)
        for name, annotation in inspect.get_annotations(ns_cls).items():
            if name.startswith("_"):
                continue
            if name in leaf_paths:
                raise TypeError(f"field {name!r} declared in {leaf_paths[name]!r} and {path!r}")
            if name in RESERVED_LEAF_NAMES:
                raise TypeError(f"field name {name!r} is reserved")
            leaf_paths[name] = path
            leaf_types[name] = accepted_types(evaluated[name])
            value = ns_cls.__dict__.get(name, dataclasses.MISSING)
            if isinstance(value, Derived):
                derived[name] = value
            elif isinstance(value, dataclasses.Field):
                input_fields[name] = (annotation, value)
            else:
                input_fields[name] = (annotation, dataclasses.field(default=value, metadata={}))
    for path in paths:
        top = path.split(".")[0]
        if top != path and path.split(".")[-1] in leaf_paths:
            raise TypeError(f"sub-namespace {path!r} collides with a leaf name")
    return NamespaceLayout(
        leaf_paths=MappingProxyType(leaf_paths),
        input_fields=MappingProxyType(input_fields),
        derived=MappingProxyType(derived),
        paths=tuple(paths),
        leaf_types=MappingProxyType(leaf_types),
    )
