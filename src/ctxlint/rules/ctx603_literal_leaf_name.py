"""CTX603 literal-leaf-name: a name-driven read whose name is a literal.

`get_context().config_leaf(name)` is the read side of `override`, for code that
holds a field's *name* (a readback endpoint, a control-plane handler). Called
with a string literal, the caller knows its field when it is written: read the
bag leaf (`get_parallel().tp_size`), which is typo-safe and dynamo-traceable.
A literal that is not a leaf raises only when that path runs; here it is an
error now.

Derived: the leaf readers are the runtime module's `config_leaf` (the design's
read-side name; a runtime that defines none disables the rule with that
reason) and every function that hands its own parameter straight to a reader
(SGLang's `TokenizerManager.config_value`), by simple name, when every function
of that name in the tree is a reader. A wrapper that answers some names itself
before reading (`if name in _MANAGER_OWNED_FIELDS: return getattr(self, name)`)
keeps those names: a module constant's strings it tests the parameter against
are not reported. The leaf's accessor spelling comes from the namespace map
(the field's namespace path, its top namespace's bag accessor).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.core import Program
from ctxlint.program.leaf_readers import (
    KEY,
    READER,
    LiteralLeafVisitor,
    leaf_readers,
    literal_reads,
)
from ctxlint.program.rule import RawFinding, Rule, field_data

ID = KEY


def leaf_spelling(vocab: Vocabulary, name: str) -> str | None:
    """`get_<ns>()[.sub].name` for a record field the namespace map places, or None."""
    path = vocab.fields.get(name) or vocab.derived_leaves.get(name)
    if not path:
        return None
    top, _, rest = path.partition(".")
    accessors = sorted(a for a, ns in vocab.bag_accessors.items() if ns == top)
    if not accessors:
        return None
    subs = "".join(f".{s}" for s in rest.split(".")) if rest else ""
    return f"{accessors[0]}(){subs}.{name}"


class LiteralLeafName(Rule):
    id = ID
    name = "literal-leaf-name"
    summary = "A name-driven config read with a literal name reads the bag leaf instead"
    visitor = LiteralLeafVisitor
    needs = (BAGS,)
    requires = ("calls",)

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return {READER, f"module:{vocab.runtime_module}"}

    def more_tokens(self, program: Program) -> set[str]:
        readers, _ = leaf_readers(program)
        return set(readers)

    def derive(self, program: Program) -> dict[str, Any]:
        readers, roots = leaf_readers(program)
        return {
            "runtime leaf readers": roots,
            "reader names (with the names they answer themselves)": {
                r: sorted(o) for r, o in sorted(readers.items())
            },
        }

    def partial(self, sets: dict[str, Any]) -> str | None:
        if sets and not sets.get("runtime leaf readers"):  # (no sets: disabled, said apart)
            return f"the runtime module defines no `{READER}`: no name-driven read is checked"
        return None

    def check(self, program: Program) -> Iterable[RawFinding]:
        vocab = program.vocab
        for path, c in literal_reads(program):
            name = c.literal
            leaf = leaf_spelling(vocab, name)
            call = f'{c.callee}("{name}")'
            if leaf is not None:
                msg = (
                    f"`{call}` names its field in the code: read the bag leaf `{leaf}` "
                    "(the name-driven read is for code that holds the name at run time)"
                )
            elif name in vocab.fields:
                continue  # a field no namespace places: the map cannot say
            else:
                msg = (
                    f"`{call}`: `{name}` is not a config leaf (no namespace declares it), "
                    "so the read raises when this path runs"
                )
            yield RawFinding(
                ID,
                path,
                c.site.scope,
                c.site.snippet,
                c.site.span,
                msg,
                data=field_data(vocab, name),
            )


RULE = LiteralLeafName()
