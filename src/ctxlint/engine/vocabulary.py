"""A run's vocabulary: derived from the schema facts of the runtime module, the
record's module and what they import (facts.vocab), each file's read once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ctxlint.config.settings import Config
from ctxlint.core.errors import DerivationError, did_you_mean
from ctxlint.discover.files import SourceFile, unchecked_module
from ctxlint.discover.sources import Sources
from ctxlint.facts.vocab import Vocabulary
from ctxlint.facts.vocab_derive import derive_vocabulary

# A file's schema facts (or {"error": ...} for one that does not parse)
SchemaOf = Callable[[SourceFile], dict[str, Any]]


def run_vocabulary(
    config: Config,
    files: list[SourceFile],
    sources: Sources,
    schema_of: SchemaOf,
    schemas: dict[str, dict[str, Any] | None],
) -> Vocabulary:
    """The vocabulary; `schemas` gets the schema facts of each module read."""
    by_module = {f.module: f for f in files}

    def load(module: str) -> dict[str, Any] | None:
        if module not in schemas:
            f = by_module.get(module)
            if f is None or f.rel not in sources:
                schemas[module] = None
            else:
                facts = schema_of(f)
                if "error" in facts:
                    raise DerivationError(f"{f.rel}: {facts['error']}")
                schemas[module] = facts["schema"] | {"path": f.rel}
        return schemas[module]

    def may_hold_field_class(qualname: str) -> bool:
        module = qualname
        while module:
            f = by_module.get(module)
            if f is not None:
                return b"_NS_PATH" in sources.get(f.rel, b"")
            module = module.rpartition(".")[0]
        return False

    c = config
    unreadable = {e.path: e.message for e in sources.errors}
    for key, name, module in (
        ("runtime-module", c.runtime_module, c.runtime_module),
        ("record-class", c.record_class, c.record_module),
    ):
        reason = unchecked_module(c.root, c.src, c.exclude, module, files, unreadable)
        if reason is not None:  # say why, not just "not a module under the src roots"
            raise DerivationError(f"{key} {name!r}: {reason}")
        if module not in by_module:
            raise DerivationError(_missing(key, name, module, c, by_module))
    return derive_vocabulary(c.runtime_module, c.record_class, load, may_hold_field_class)


def _missing(key: str, name: str, module: str, config: Config, modules: Any) -> str:
    """No file of the project is `module`: a folder below the root holds it (the
    tree to check is that folder), a typo, or a package installed elsewhere
    (ctxlint reads the runtime's source, and never imports it)."""
    head = f"{key} {name!r}: no module {module!r} under the src roots ({', '.join(config.src)})"
    tail = module.replace(".", "/")
    for suffix in (".py", "/__init__.py"):
        for depth in ("*/", "*/*/"):
            found = sorted(config.root.glob(f"{depth}{tail}{suffix}"))
            if found:
                rel = found[0].relative_to(config.root).as_posix()
                folder = rel[: -len(tail + suffix) - 1]
                return (
                    f"{head}, but {rel} is that module: the tree to check is {folder}/ "
                    f"(give it as PATH), or add {folder!r} to `src`"
                )
    return (
        f"{head}{did_you_mean(module, modules)}. ctxlint reads the runtime's and the record's "
        "source from the project and never imports them: an installed package (in "
        "site-packages) is not read; copy it under a src root (docs/ctxrt.md)"
    )
