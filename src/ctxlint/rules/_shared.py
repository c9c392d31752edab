"""Small helpers several rules share (not a rule: no RULE defined here)."""

from __future__ import annotations

import libcst as cst

from ctxlint.vocab import Vocabulary


def bag_spelling(vocab: Vocabulary, field: str) -> str | None:
    """Where a record field should be read from: `get_exec().moe.field`."""
    ns = vocab.fields.get(field)
    if not ns:
        return None
    top, _, sub = ns.partition(".")
    for accessor, namespace in vocab.bag_accessors.items():
        if namespace == top:
            return f"{accessor}()" + (f".{sub}" if sub else "") + f".{field}"
    return None


def is_builtin_call(ctx_resolve: object, call: cst.Call, name: str) -> bool:
    """`getattr(...)`-style call of a builtin, by bare name."""
    return isinstance(call.func, cst.Name) and call.func.value == name


def positional(call: cst.Call) -> list[cst.BaseExpression]:
    return [a.value for a in call.args if a.keyword is None and not a.star]
