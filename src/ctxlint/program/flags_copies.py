"""Which runtime-flags leaves are copies of a config-bag leaf: every write of a
flags leaf (`<flags>.<group>.<leaf> = value`, a group's `override(leaf=...)`),
what it copies, and the leaves the code writes with more than one value.

A write copies a bag leaf when its value is one itself: a bag accessor call or
a local bound to one or to a path below one (flags_tier's paths, through the
binding model), followed by attributes ending at a record field or a `Derived`
leaf. A lazy default in a shim (`if <leaf> is None: <leaf> = ...`) is the value
before init, and a test's `override(...)` a scope for the test: neither is a
writer. The same bag leaf copied at several sites (two inits) is one value; a
leaf written with several (a swap, a restore) is state the code changes.
A copy from the parallel tier is the parallel stage's own flag.

Asked by CTX705 (flags-mirror-config), whose visitor gathers the writes under
its id (KEY).
"""

from __future__ import annotations

from dataclasses import dataclass

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext
from ctxlint.facts.typed import Site, site
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.core import Program
from ctxlint.program.flags_tier import FlagsTier, FlagsTierVisitor, TierFacts, flags_tier
from ctxlint.program.test_code import is_test_file, test_roots

KEY = "CTX705"  # the rule whose facts these are
REQUIRES = (BINDINGS,)  # the model parts it reads: what names hold a flags or bag path
OVERRIDE = "override"  # the design's scoped write on a flags group
TOPOLOGY = "parallel"  # the design's parallel tier: its stage materialises the DP flags


@dataclass(frozen=True, slots=True)
class LeafWrite:
    """`<flags>.<group>.<leaf> = value`, or `<flags>.<group>.override(<leaf>=...)`."""

    fn: str
    group: str
    leaf: str
    source: list[str] | None  # the bag path the value is ([accessor, *attrs]), if one
    lazy: bool  # under `if <the same leaf> is None:`
    override: bool
    site: Site


@dataclass(frozen=True, slots=True)
class MirrorFacts(TierFacts):
    writes: list[LeafWrite]


class MirrorVisitor(FlagsTierVisitor):
    """The tier's declarations, and every assignment to a flags leaf."""

    def __init__(self, ctx: FileContext) -> None:
        super().__init__(ctx)
        self.writes: list[LeafWrite] = []

    def assigned(
        self, target: cst.Attribute, node: cst.CSTNode, value: cst.BaseExpression | None
    ) -> None:
        chain = self.below_flags(target)
        if not chain or len(chain) != 2:
            return
        source = self.path(value) if value is not None else None
        source = source if source and source[0] != "flags" else None
        # a lazy default in a shim (`if <leaf> is None: <leaf> = ...`) is not a swap
        lazy = self.lazy(chain)
        self.writes.append(
            LeafWrite(self.writer(), chain[0], chain[1], source, lazy, False, site(self.ctx, node))
        )

    def visit_Call(self, node: cst.Call) -> None:
        """`<flags>.<group>.override(leaf=...)`: a write of each named leaf."""
        func = node.func
        if not (isinstance(func, cst.Attribute) and func.attr.value == OVERRIDE):
            return
        chain = self.below_flags(func.value)
        if not chain or len(chain) != 1:
            return
        for arg in node.args:
            if arg.keyword is not None:
                leaf, where = arg.keyword.value, site(self.ctx, node)
                self.writes.append(
                    LeafWrite(self.writer(), chain[0], leaf, None, False, True, where)
                )

    def finish(self) -> MirrorFacts | None:
        found = self.classes or self.accessor or self.writes
        return MirrorFacts(self.classes, self.accessor, self.writes) if found else None


class FlagsCopies:
    """The tier, every write of its leaves, and which writes copy a bag leaf."""

    files: list[tuple[str, str, MirrorFacts]]
    tier: FlagsTier
    groups: dict[str, list[str]]  # group -> its leaves
    sites: dict[tuple[str, str], list[str]]  # (group, leaf) -> its writers, as shown
    swapped: set[tuple[str, str]]  # leaves written with more than one value

    def __init__(self, program: Program) -> None:
        vocab = program.vocab
        self.files = list(program.typed_facts(KEY, MirrorFacts))
        self.tier = flags_tier(self.files, vocab.runtime_module)
        self.groups = {g: self.tier.leaves(g) for g in self.tier.groups}
        self.leaves = set(vocab.fields) | set(vocab.derived_leaves)
        self.topology = {a for a, ns in vocab.bag_accessors.items() if ns == TOPOLOGY}
        roots = test_roots(program)
        sites: dict[tuple[str, str], list[str]] = {}
        values: dict[tuple[str, str], set[str]] = {}  # what each site writes
        for path, module, f in self.files:
            for w in f.writes:
                if w.lazy:
                    continue  # the shim's default before init, not a second writer
                if w.override and is_test_file(path, roots):
                    continue  # a test's scope, not a writer of the process's state
                where = f"{module}.{w.fn} ({path}:{w.site.span[0]})"
                sites.setdefault((w.group, w.leaf), []).append(where)
                # a copy writes its bag leaf; anything else is its own value
                src = w.source
                value = ".".join(src) if src is not None and len(src) > 1 else where
                values.setdefault((w.group, w.leaf), set()).add(value)
        self.sites = sites
        self.swapped = {k for k, v in values.items() if len(v) > 1}

    def copy(self, w: LeafWrite) -> bool:
        """A declared leaf written once, exactly a bag leaf."""
        src = w.source
        return (
            src is not None
            and not w.lazy
            and len(src) > 1
            and src[-1] in self.leaves
            and w.leaf in self.groups.get(w.group, ())
            and (w.group, w.leaf) not in self.swapped
        )

    def mirror(self, w: LeafWrite) -> bool:
        """A copy of a config-bag leaf (not the parallel tier's)."""
        return self.copy(w) and w.source is not None and w.source[0] not in self.topology

    def stage_owned(self) -> list[str]:
        """Leaves copied from the parallel tier: the parallel stage's flags."""
        return sorted(
            {
                f"{w.group}.{w.leaf} = {w.source[0]}().{'.'.join(w.source[1:])}"
                for _, _, f in self.files
                for w in f.writes
                if w.source is not None and self.copy(w) and w.source[0] in self.topology
            }
        )


def flags_copies(program: Program) -> FlagsCopies:
    """The run's answer, built once."""
    return program.memo(f"{KEY}:model", lambda: FlagsCopies(program))


def wanted_modules(program: Program) -> set[str]:
    """The tier's modules not yet parsed (the rule's more_tokens)."""
    files = program.typed_facts(KEY, MirrorFacts)
    return flags_tier(files, program.vocab.runtime_module).wanted_modules()
