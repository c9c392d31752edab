"""Small helpers several rules share (not a rule: no RULE defined here)."""

from __future__ import annotations

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext, string_value
from ctxlint.facts.visitor import FileVisitor
from ctxlint.facts.vocab import Vocabulary


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


def leaf_spelling(vocab: Vocabulary, field: str) -> str | None:
    """The leaf that answers a record field where the runtime defines one: its
    bag leaf, else a `Derived` leaf of that name (`get_parallel().attn_tp_size`)."""
    where = bag_spelling(vocab, field)
    ns = vocab.derived_leaves.get(field)
    if where is None and ns is not None:
        top, _, sub = ns.partition(".")
        accessor = next((a for a, n in sorted(vocab.bag_accessors.items()) if n == top), None)
        if accessor is not None:
            where = f"{accessor}()" + (f".{sub}" if sub else "") + f".{field}"
    return where


def lacking_accessor(vocab: Vocabulary) -> str:
    """What the runtime lacks for a record property no leaf answers (sglang
    0.5.17's `mamba_cache_chunk_size`): an accessor deriving it from the bags."""
    return (
        "the runtime lacks an accessor deriving it from the bags "
        f"(add one to {vocab.runtime_module})"
    )


def namespace_hint(vocab: Vocabulary, field: str) -> str:
    """Where a field's value lives, for a fix suggestion: its bag when the
    namespace is known, else the step the migration has not taken for it (for a
    record property, the accessor the runtime lacks)."""
    where = bag_spelling(vocab, field)
    if where:
        return f"its bag leaf is {where}"
    ns = vocab.fields.get(field)
    if ns:
        return f"its namespace `{ns}` has no bag accessor yet: add `get_{ns.split('.')[0]}()`"
    if field in vocab.fields:
        return (
            'declare its namespace (a field class with `_NS_PATH`, or an `NS("path")` marker) '
            "to give it a bag leaf"
        )
    if field in vocab.properties:
        return f"it is a record property with no bag leaf: {lacking_accessor(vocab)}"
    return "read a runtime_context accessor instead"


def positional(call: cst.Call) -> list[cst.BaseExpression]:
    return [a.value for a in call.args if a.keyword is None and not a.star]


class ReadVisitor(FileVisitor):
    """A visitor of field *reads* (`x.f` and literal `getattr(x, "f")`): it marks
    the nodes being written (assignment, `del`, `for`/`with` targets), which are
    CTX201's business, and hands each read of a record field or property to
    `_record`, outside the runtime module (where the record lives); subclasses
    decide what `x` is (seed_reads, handed_reads)."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        vocab = ctx.vocab
        assert vocab is not None
        self.active = ctx.module != vocab.runtime_module
        self.readable = set(vocab.fields) | set(vocab.properties)
        self.targets: set[int] = set()

    def _record(self, node: cst.CSTNode, base: cst.BaseExpression, field: str, form: str) -> None:
        raise NotImplementedError

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if self.active and node.attr.value in self.readable and not self.is_write(node):
            self._record(node, node.value, node.attr.value, "attribute")

    def visit_Call(self, node: cst.Call) -> None:
        if not (self.active and isinstance(node.func, cst.Name) and node.func.value == "getattr"):
            return
        args = positional(node)
        if len(args) >= 2:
            name = string_value(args[1])
            if name is not None and name in self.readable:
                self._record(node, args[0], name, "getattr")

    def is_write(self, node: cst.CSTNode) -> bool:
        return id(node) in self.targets

    def _mark(self, target: cst.BaseExpression) -> None:
        self.targets.add(id(target))
        if isinstance(target, (cst.Tuple, cst.List)):
            for e in target.elements:
                self._mark(e.value)
        elif isinstance(target, cst.StarredElement):
            self._mark(target.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._mark(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._mark(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._mark(node.target)

    def visit_Del(self, node: cst.Del) -> None:
        self._mark(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._mark(node.target)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._mark(node.asname.name)


# -- what an attribute of a bag reads ----------------------------------------
HOP = "config"  # the removed `.config` hop of the legacy bags


def config_accessors(vocab: Vocabulary) -> dict[str, str]:
    """Qualified seed and bag accessors -> the namespace they answer ("" for the seed)."""
    out = {vocab.qualified(a): "" for a in vocab.seed_accessors}
    out.update({vocab.qualified(a): ns for a, ns in vocab.bag_accessors.items()})
    return out


def has_config_hop(vocab: Vocabulary, namespace: str) -> bool:
    """Whether `bag.config` is a real leaf or sub-namespace of this namespace."""
    if f"{namespace}.{HOP}" in vocab.namespaces:
        return True
    return vocab.fields.get(HOP, "").split(".")[0] == namespace


def config_attribute(vocab: Vocabulary, namespace: str, attr: str) -> bool:
    """Whether `<accessor of namespace>().attr` reads config: a field or a
    `Derived` leaf of that namespace (any field, for the seed) or one of its
    sub-namespaces. A method
    (`.override(...)`) or a live handle (`get_parallel().tp_group`, a rank) is not."""
    if not namespace:
        return attr in vocab.fields or attr in vocab.properties
    home = vocab.fields.get(attr) or vocab.derived_leaves.get(attr)
    if home is not None and (home == namespace or home.startswith(namespace + ".")):
        return True
    return f"{namespace}.{attr}" in vocab.namespaces
