"""CTX705 flags-mirror-config: a runtime-flags leaf assigned straight from a config-bag
leaf, with no derivation, is a config mirror: read the bag leaf.

The flags groups and their leaves are derived from the runtime's flags tier
(program.flags_tier: the accessor's annotated class, its group classes). A
write `<flags>.<group>.<leaf> = <value>` is a mirror when `<value>` is a bag
leaf itself: a bag accessor call (`get_exec()`) or a local bound to one or to a
path below one, followed by attributes ending at a record field (a leaf the
vocabulary derives). Anything computed from it (`MoeA2ABackend(x)`, `x or ""`,
`bool(x)`) is a derivation and is left alone.

A leaf some other write sets to another value (a swap around a draft forward, a
restore, a group's `override(leaf=...)` outside test code) is state the code
changes, not a mirror (the same bag leaf copied by two inits is one mirror):
those leaves are shown in the derived sets and not reported. A test's `override(...)` is a scope for the test, not a writer; a lazy
default in a shim (`if <leaf> is None: <leaf> = False`) is the value before init.

A leaf copied from the parallel tier (`get_parallel()`) is the parallel stage's
flag, as the design's `flags.dp.enabled` under `is_dp_attention_enabled()` is:
listed in the derived sets, not reported.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from ctxlint.core.lazy_libcst import cst
from ctxlint.facts.context import FileContext
from ctxlint.facts.typed import Site, site
from ctxlint.facts.vocab import BAGS, Vocabulary
from ctxlint.program.bindings import KEY as BINDINGS
from ctxlint.program.core import Program
from ctxlint.program.flags_tier import (
    ACCESSOR,
    FlagsTierVisitor,
    TierFacts,
    flags_tier,
    missing_groups,
    no_tier,
)
from ctxlint.program.rule import RawFinding, Rule, field_data
from ctxlint.program.test_code import OPTION, is_test_file, test_roots

ID = "CTX705"
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


class Model:
    def __init__(self, program: Program) -> None:
        vocab = program.vocab
        self.files = list(program.typed_facts(ID, MirrorFacts))
        self.tier = flags_tier(self.files, vocab.runtime_module)
        self.groups = {g: self.tier.leaves(g) for g in self.tier.groups}  # group -> its leaves
        self.leaves = set(vocab.fields) | set(vocab.derived_leaves)
        self.topology = {a for a, ns in vocab.bag_accessors.items() if ns == TOPOLOGY}
        roots = test_roots(program)
        sites: dict[tuple[str, str], list[str]] = {}  # (group, leaf) -> write sites
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
        # a leaf the code writes with more than one value is state it changes; the
        # same bag leaf copied at several sites (two inits) is still one mirror
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


class FlagsMirrorConfig(Rule):
    id = ID
    name = "flags-mirror-config"
    summary = (
        "A runtime-flags leaf assigned straight from a config-bag leaf, with no "
        "derivation, is a config mirror: read the bag leaf"
    )
    visitor = MirrorVisitor
    requires = (BINDINGS,)  # what names hold a flags or bag path
    needs = (BAGS,)
    options: ClassVar[dict[str, Any]] = {OPTION: []}

    def tokens(self, vocab: Vocabulary) -> set[str]:
        return {ACCESSOR, f"module:{vocab.runtime_module}"}

    def more_tokens(self, program: Program) -> set[str]:
        files = program.typed_facts(ID, MirrorFacts)
        return flags_tier(files, program.vocab.runtime_module).wanted_modules()

    def _model(self, program: Program) -> Model:
        return program.memo(f"{ID}:model", lambda: Model(program))

    def derive(self, program: Program) -> dict[str, Any]:
        m = self._model(program)
        if not m.tier.defined:
            return no_tier(program.vocab.runtime_module)
        return {
            "flags root": m.tier.root or "(not found)",
            "groups": {g: sorted(ls) for g, ls in sorted(m.groups.items())},
            "leaves written with several values": sorted(f"{g}.{leaf}" for g, leaf in m.swapped),
            "copied from the parallel tier (its stage's flags)": m.stage_owned(),
        }

    def partial(self, sets: dict[str, Any]) -> str | None:
        why = missing_groups(sets)
        return f"{why}: nothing is checked" if why else None

    def check(self, program: Program) -> Iterable[RawFinding]:
        m = self._model(program)
        for path, _, f in m.files:
            for w in f.writes:
                if not m.mirror(w) or (src := w.source) is None:
                    continue
                bag = f"{src[0]}().{'.'.join(src[1:])}"
                flag = f"{ACCESSOR}().{w.group}.{w.leaf}"
                yield RawFinding(
                    ID,
                    path,
                    w.site.scope,
                    w.site.snippet,
                    w.site.span,
                    f"`{flag}` mirrors the bag leaf `{bag}` with no derivation: read "
                    f"`{bag}` where the flag is read, and drop the flag",
                    f"every write of `{w.group}.{w.leaf}` copies `{bag}`: "
                    + "; ".join(m.sites[(w.group, w.leaf)]),
                    data=field_data(program.vocab, src[-1]),
                )


RULE = FlagsMirrorConfig()
