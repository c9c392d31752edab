"""Where a record field is read from once it is off the record, derived from the code.

The design's order: a field declared in a namespace is its bag's leaf with the
sub-path (`get_exec().moe.moe_a2a_backend`); a member of the class a bag
accessor returns (the parallel context's `tp_size`, live topology included) is
that context's leaf; a member the record computes with no leaf is the runtime
module's same-named instance-derived accessor (`mamba_cache_chunk_size()`), a
zero-argument function there. With --unsafe, a computed member the runtime
module has no accessor for gets one added (`NEW_ACCESSOR`: fix.added_accessors
writes it, returning the published record's own member). Anything else has no
target, and the reason says what is missing. The vocabulary gives the first; the other two come from the
runtime module's declarations (facts.declarations), read here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ctxlint.facts.vocab import Vocabulary, find_class
from ctxlint.program.reads import bag_spelling

SchemaLoader = Callable[[str], "dict[str, Any] | None"]

LEAF = "bag leaf"
CONTEXT_LEAF = "context leaf"
INSTANCE_ACCESSOR = "instance-derived accessor"
NEW_ACCESSOR = "instance-derived accessor to add"


@dataclass(frozen=True)
class Target:
    accessor: str  # a zero-argument function of the runtime module
    path: str  # what follows the call: ".moe.moe_a2a_backend"; "" for an accessor's value
    kind: str  # LEAF, CONTEXT_LEAF or INSTANCE_ACCESSOR

    def spelled(self) -> str:
        return f"{self.accessor}(){self.path}"


class Targets:
    """Field -> Target (or the reason there is none), for one vocabulary."""

    def __init__(self, vocab: Vocabulary, load: SchemaLoader, *, add: bool = False) -> None:
        self.vocab = vocab
        runtime = load(vocab.runtime_module) or {"functions": {}, "classes": {}, "imports": {}}
        self.context_leaves: dict[str, str] = {}  # member -> the bag accessor whose class has it
        for accessor in sorted(vocab.bag_accessors):
            fn = runtime["functions"].get(accessor)
            cls = _returned_class(fn, vocab.runtime_module, runtime, load) if fn else None
            for member in cls or ():
                self.context_leaves.setdefault(member, accessor)
        # a computed member -> what the record's code for it reads (the reason
        # a site is left names them: the accessor to add derives from those)
        record = find_class(vocab.record_class, load)
        self.record_inputs: dict[str, list[str]] = (
            record[1].get("property_inputs", {}) if record else {}
        )
        taken = set(vocab.seed_accessors) | set(vocab.bag_accessors)
        self.instance_accessors = {
            name
            for name, fn in runtime["functions"].items()
            if not fn["required"] and not name.startswith("_") and name not in taken
        }
        # the runtime's own seed accessor, which an added accessor reads the
        # record through; None: no accessor is added (add is off, or it has none)
        defined = {*runtime["functions"], *runtime["classes"], *runtime["imports"]}
        getters = sorted(n for n in vocab.seed_accessors if n in runtime["functions"])
        self.record_getter = getters[0] if add and getters else None
        self._bound = defined

    def target(self, field: str) -> Target | str:
        vocab = self.vocab
        where = bag_spelling(vocab, field)
        if where is not None:
            accessor, _, rest = where.partition("()")
            return Target(accessor, rest, LEAF)
        if field in self.context_leaves:
            return Target(self.context_leaves[field], f".{field}", CONTEXT_LEAF)
        if field in vocab.properties and field in self.instance_accessors:
            return Target(field, "", INSTANCE_ACCESSOR)
        if self.addable(field):
            return Target(field, "", NEW_ACCESSOR)
        ns = vocab.fields.get(field)
        if ns:
            return (
                f"its namespace `{ns}` has no bag accessor: add `get_{ns.split('.')[0]}()` "
                f"to {vocab.runtime_module}"
            )
        if field in vocab.fields:
            return "it has no namespace: declare one to give it a bag leaf"
        inputs = self.record_inputs.get(field)
        if not inputs:
            return (
                f"the record computes it and {vocab.runtime_module} has no `{field}()` "
                "instance-derived accessor: add one"
            )
        named = ", ".join(inputs[:-1]) + (" and " if len(inputs) > 1 else "") + inputs[-1]
        return (
            f"the record computes it and {vocab.runtime_module} has no `{field}()` accessor: "
            f"add an accessor deriving {field} from {named} (what the record's `{field}` reads)"
        )

    def addable(self, field: str) -> bool:
        """An accessor for the computed member `field` can be added to the runtime
        module: adding is on, the name is public and bound to nothing there."""
        return (
            self.record_getter is not None
            and field in self.vocab.properties
            and field not in self.vocab.fields
            and field.isidentifier()
            and not field.startswith("_")
            and field not in self._bound
        )


def _returned_class(
    fn: dict[str, Any], module: str, schema: dict[str, Any], load: SchemaLoader
) -> list[str] | None:
    """The members (fields and properties) of the class `fn` is annotated to
    return, when that class is the runtime's own (or imported into it)."""
    name = (fn.get("returns") or "").strip("'\"")
    if not name.isidentifier():
        return None
    qual = schema["imports"].get(name) or f"{module}.{name}"
    found = find_class(qual, load)
    if found is None:
        return None
    _, cls = found
    return [*cls["fields"], *cls["properties"]]
