"""What each bag accessor raises before publish, derived from the runtime module.

A read in a `try` whose handler catches that error answers the handler's value
before publish instead of failing (SGLang's `is_symmetric_memory_enabled`:
`except ValueError: return False`), so CTX301 leaves it out of the reach. The
classes are the ones the code raises on the read's way, not a stated list:

- the accessor's own body (`raise ...`);
- each method it calls on an object (`_CONTEXT.config_bag("exec")`, also in a
  handler of a fast path, as ctxrt's accessors do), as the object's class
  defines it, with the methods of that class it calls on itself;
- for an accessor handing out an object the module builds (`return _PARALLEL`),
  that class's `__getattr__`, which a leaf read runs.

Each class comes with its bases: in-tree ones from the schema facts (ctxrt's
`ConfigNotPublishedError(ValueError)`), then the builtin's own MRO. A handler
guards the read only if it catches every class (facts' `Event.caught`); an
accessor for which nothing is found gets no entry, and no handler guards it.
"""

from __future__ import annotations

import builtins
from typing import Any

from ctxlint.core.errors import DerivationError
from ctxlint.facts.vocab import SchemaLoader, find_class, where
from ctxlint.facts.vocab_accessors import Types

Schema = dict[str, Any]


def unpublished_errors(
    runtime_module: str,
    rt: Schema,
    bags: dict[str, str],
    load: SchemaLoader,
    provenance: dict[str, str],
) -> dict[str, tuple[tuple[str, ...], ...]]:
    """Bag accessor -> for each class it may raise on a read, that class and its
    bases (builtins by their plain name), the raised class first."""

    def readable(module: str) -> Schema | None:
        try:
            return load(module)
        except DerivationError:  # an unreadable module defines nothing we can see
            return None

    types = Types(readable)
    out: dict[str, tuple[tuple[str, ...], ...]] = {}
    for accessor in sorted(bags):
        f = rt["functions"].get(accessor)
        if f is None:
            continue
        found: dict[str, str] = {c: f"{accessor} raises it" for c in f.get("raises", ())}
        for path in f.get("object_calls", ()):
            obj, _, method = path.rpartition(".")
            cls = types.of_path(obj, runtime_module)
            for c in _method_raises(cls, method, readable):
                found.setdefault(c, f"{path} raises it")
        for path in f.get("return_paths", ()):
            if path in rt.get("values", {}):  # an object built at import: its __getattr__
                cls = types.of_path(path, runtime_module)
                for c in _method_raises(cls, "__getattr__", readable):
                    found.setdefault(c, f"{path}.__getattr__ raises it")
        if not found:
            continue
        out[accessor] = tuple(_with_bases(c, readable) for c in sorted(found))
        provenance[f"unpublished error {accessor}"] = f"{where(rt, accessor)} (" + (
            "; ".join(f"{c}: {how}" for c, how in sorted(found.items())) + ")"
        )
    return out


def _method_raises(cls: str | None, method: str, load: SchemaLoader) -> list[str]:
    """What `cls.method` raises (with its receiver's methods), along the bases."""
    todo = [cls] if cls else []
    seen: set[str] = set()
    while todo:
        qual = todo.pop(0)
        if qual in seen:
            continue
        seen.add(qual)
        found = find_class(qual, load)
        if found is None:
            continue
        facts = found[1]
        if method in facts.get("raises", {}):
            return list(facts["raises"][method])
        if method in facts.get("methods", ()) or method in facts.get("properties", ()):
            return []  # defined here, raising nothing
        todo.extend(facts.get("bases", ()))
    return []


def _builtin_named(name: str, load: SchemaLoader) -> type[BaseException] | None:
    """The builtin exception `name` is: as written (`ValueError`), or qualified with
    a module of the tree that neither defines nor imports it (the schema facts
    qualify a base that way for want of an import)."""
    module, _, plain = name.rpartition(".")
    if module:
        schema = load(module)
        if schema is None or plain in schema["classes"] or plain in schema["imports"]:
            return None
    found = getattr(builtins, plain, None)
    return found if isinstance(found, type) and issubclass(found, BaseException) else None


def _with_bases(name: str, load: SchemaLoader) -> tuple[str, ...]:
    """`name` and its bases, nearest first: the tree's classes as the schema facts
    give them, a builtin with its own MRO (`ValueError`, `Exception`, `BaseException`)."""
    out: list[str] = []
    todo = [name]
    while todo:
        current = todo.pop(0)
        if current in out:
            continue
        found = find_class(current, load) if "." in current else None
        if found is not None:
            out.append(found[0])
            todo.extend(found[1].get("bases", ()))
            continue
        kind = _builtin_named(current, load)
        if kind is None:
            out.append(current)  # a class outside the tree: itself only
            continue
        out.extend(c.__name__ for c in kind.__mro__ if c is not object and c.__name__ not in out)
    return tuple(out)
