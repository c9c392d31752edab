"""A run's vocabulary: derived from the schema facts of the runtime module, the
record's module and what they import (facts.vocab), each file's read once."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ctxlint.config.settings import Config
from ctxlint.core.errors import DerivationError, did_you_mean
from ctxlint.discover.files import SourceFile, unchecked_module
from ctxlint.discover.sources import Sources
from ctxlint.facts.vocab import Vocabulary
from ctxlint.facts.vocab_derive import derive_vocabulary

# A file's schema facts (or {"error": ...} for one that does not parse)
SchemaOf = Callable[[SourceFile], dict[str, Any]]
# the file a read found, with its content hash (None: no file, or not readable)
Found = tuple[str, str] | None


@dataclass
class VocabMemo:
    """A resident front end's last vocabulary and what its derivation read:
    each module's schema facts (by the file and content that are that module)
    and whether a class's module holds `_NS_PATH` (by the file that answered,
    and its content). A run whose reads find the same files with the same
    content has that vocabulary: the derivation reads nothing else."""

    inputs: tuple[str, str] = ("", "")  # the runtime module, the record class
    modules: dict[str, Found] = field(default_factory=dict)  # module -> its file
    classes: dict[str, Found] = field(default_factory=dict)  # qualname -> the file asked
    schemas: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    vocab: Vocabulary | None = None
    derived: int = 0  # derivations (not replayed), for tests

    def replay(
        self, inputs: tuple[str, str], by_module: dict[str, SourceFile], sources: Sources
    ) -> Vocabulary | None:
        """The kept vocabulary when every read of its derivation finds the same now."""
        if self.vocab is None or inputs != self.inputs:
            return None
        for module, found in self.modules.items():
            if _module_file(by_module.get(module), sources) != found:
                return None
        for qualname, found in self.classes.items():
            if _module_file(_owner(qualname, by_module), sources) != found:
                return None
        return self.vocab


def _module_file(f: SourceFile | None, sources: Sources) -> Found:
    return (f.rel, sources.hashes[f.rel]) if f is not None and f.rel in sources else None


def _owner(qualname: str, by_module: dict[str, SourceFile]) -> SourceFile | None:
    """The file of the longest module prefix of `qualname` (None: no such file)."""
    module = qualname
    while module:
        f = by_module.get(module)
        if f is not None:
            return f
        module = module.rpartition(".")[0]
    return None


def run_vocabulary(
    config: Config,
    files: list[SourceFile],
    sources: Sources,
    schema_of: SchemaOf,
    schemas: dict[str, dict[str, Any] | None],
    memo: VocabMemo | None = None,
) -> Vocabulary:
    """The vocabulary; `schemas` gets the schema facts of each module read.
    `memo`: a resident's (VocabMemo), replayed when its reads are the same."""
    by_module = {f.module: f for f in files}
    memo = memo if memo is not None and not schemas else None  # (every read seen)
    modules: dict[str, Found] = {}
    classes: dict[str, Found] = {}

    def load(module: str) -> dict[str, Any] | None:
        if module not in schemas:
            f = by_module.get(module)
            modules[module] = _module_file(f, sources)
            if f is None or f.rel not in sources:
                schemas[module] = None
            else:
                facts = schema_of(f)
                if "error" in facts:
                    raise DerivationError(f"{f.rel}: {facts['error']}")
                schemas[module] = facts["schema"] | {"path": f.rel}
        return schemas[module]

    def may_hold_field_class(qualname: str) -> bool:
        f = _owner(qualname, by_module)
        classes[qualname] = _module_file(f, sources)
        return f is not None and b"_NS_PATH" in sources.get(f.rel, b"")

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
    inputs = (c.runtime_module, c.record_class)
    if memo is not None and (kept := memo.replay(inputs, by_module, sources)) is not None:
        schemas.update(memo.schemas)
        return kept
    vocab = derive_vocabulary(c.runtime_module, c.record_class, load, may_hold_field_class)
    if memo is not None:
        memo.inputs, memo.modules, memo.classes = inputs, modules, classes
        memo.schemas, memo.vocab = dict(schemas), vocab
        memo.derived += 1
    return vocab


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
